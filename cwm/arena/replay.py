"""A finished match, move by move, in the terminal (``cwm replay DIR/MATCH``).

A match is named by its key (a content hash, ``cwm.arena.identity``), by its seats' labels and index
(``random|gt-mcts#0``), by its transcript's file name, or by its number in the listing of ``cwm replay
DIR``. Seats show the labels the folder's ``labels.json`` gives their agents now. Each step shows who moved,
the move, the time it took, the game's own rendering of the state after it (OpenSpiel's ``str(state)``) and,
in a game with hidden information, what each seat observed; an LLM seat's move shows how its answer was read
(and each rethink), a CWM seat's its sampling record. Every text shown is cleaned (``cwm.text.clean``):
agents' words are untrusted.

A tournament folder is data, whoever wrote it: reading one imports nothing it names and never changes a
file it reads (``cwm replay`` writes nothing at all; ``cwm view DIR`` writes only its page, ``view.html``).
A match without a transcript is rebuilt on the game its ``config.json`` records only when that is a
registered or OpenSpiel game; a game module must be passed by the user (``--game``, ``folder_game``).
"""

from __future__ import annotations

import json
from pathlib import Path

from cwm import games
from cwm.agents.human import RESIGNED
from cwm.arena import identity
from cwm.arena import transcript as arena_transcript
from cwm.arena.plan import read_results, recorded_deals
from cwm.arena.types import MatchResult
from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded
from cwm.text import clean
from cwm.types import CHANCE, JSON, CwmError, UnknownGameError

REPLY_LINES = 6  # lines of an LLM's reply shown per attempt in the terminal


class ReplayError(CwmError, ValueError):
    """A tournament folder or a match that is not there (names what was looked for and what there is)."""


def results_of(out_dir: Path) -> list[MatchResult]:
    """The finished matches of the tournament in ``out_dir``, in the order played, each seat under its
    agent's label now (``cwm.arena.identity.shown``). Nothing in the folder is written (a torn last line is
    skipped with a warning: ``cwm.arena.plan.read_results``).

    Raises:
      ReplayError: ``out_dir`` holds no ``matches.jsonl``.
    """
    path = out_dir / "matches.jsonl"
    if not path.is_file():
        raise ReplayError(f"{out_dir}: not a tournament folder (no matches.jsonl)")
    return identity.shown(read_results(path).values(), identity.read_labels(out_dir))


def find(out_dir: Path, name: str) -> MatchResult:
    """The match of ``out_dir`` named ``name``: a key, its seats' labels and index (``a|b#0``), a
    transcript file name (with or without ``.json``), or a number from ``listing`` (1 is the first played).

    Raises:
      ReplayError: no match has that name (the message says how to list them).
    """
    results = results_of(out_dir)
    for r in results:
        file = arena_transcript.file_name(r.key)
        if name in (r.key, identity.display_name(r), file, file[: -len(".json")]):
            return r
    if name.isdigit() and 1 <= int(name) <= len(results):
        return results[int(name) - 1]
    raise ReplayError(f"{out_dir}: no match {name!r} (of {len(results)}); `cwm replay {out_dir}` lists them")


def listing(out_dir: Path) -> str:
    """One line per match: its number, seats and index, key, returns and forfeit."""
    lines = []
    for i, r in enumerate(results_of(out_dir), 1):
        forfeit = f"  forfeit by seat {r.forfeit_seat} ({r.forfeit_kind})" if r.forfeit_kind else ""
        if r.forfeit_kind == RESIGNED:  # a person's choice (cwm play), not an agent's failure
            forfeit = f"  seat {r.forfeit_seat} resigned"
        returns = " ".join(f"{x:+g}" for x in r.returns)
        lines.append(f"{i:4d}  {clean(identity.display_name(r))}  {clean(r.key)}  returns {returns}  {r.moves} moves"
                     f"{forfeit}")
    return "\n".join(lines) + "\n" if lines else "no finished matches\n"


def load(out_dir: Path, result: MatchResult, game: str | games.GameSpec | None = None) -> dict[str, JSON]:
    """The transcript of ``result``, its seats under ``result``'s labels; a match without one has it rebuilt
    from its actions on the tournament's game (``folder_game``: nothing a file names is imported).

    Args:
      game: the game as the user names it (``--game``: their own module is imported as their code), to
        rebuild transcripts with; default the game the folder's ``config.json`` records, when that is a
        registered or OpenSpiel game.

    Raises:
      ReplayError: a transcript is missing and the folder's game cannot be used (``folder_game``).
      TranscriptError: the transcript file is damaged (names the file and the field).
    """
    rebuild = None
    if not arena_transcript.path_of(out_dir, result.key).is_file():
        spec = folder_game(out_dir, game)
        rebuild = games.load_game(spec) if spec is not None else None
    transcript = arena_transcript.load(out_dir, result, rebuild)
    for seat, label in zip(transcript.get("seats") or [], result.seats):
        if isinstance(seat, dict):
            seat["label"] = label
    return transcript


def recorded_game(out_dir: Path) -> str | None:
    """The game the folder's ``config.json`` records, as text (``None`` without that file); read as data.

    Raises:
      ReplayError: the file is not a JSON object with a string field ``game`` (names the file and field).
      InputLimitError: the file, or a value in it, is over its bound.
    """
    path = out_dir / "config.json"
    if not path.is_file():
        return None
    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="tournament settings"), where=str(path))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ReplayError(f"{path}: not a JSON file ({type(e).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("game"), str):
        raise ReplayError(f"{path}: field 'game' is missing or not a string")
    return str.__str__(data["game"])


def folder_game(out_dir: Path, game: str | games.GameSpec | None = None) -> games.GameSpec | None:
    """The game of the tournament in ``out_dir``, found without importing anything the folder names.

    A results folder is data: its ``config.json`` may name a game module (``folder/game.py:short``), and
    importing it would run whoever's code it is with the reader's privileges. So the recorded game is used
    only when it is a registered or OpenSpiel name; a module game needs ``game``, the user's own copy.

    Args:
      game: the game as the user names it (``--game``), checked to be the game the folder records.

    Returns:
      the game, or ``None`` when neither ``game`` nor a ``config.json`` names one.

    Raises:
      ReplayError: ``game`` is another game than the recorded one; or the recorded game is a module (and
        ``game`` is not given), unknown here, or the file is damaged. One line, naming ``--game``.
    """
    recorded = recorded_game(out_dir)
    if game is not None:
        spec = games.resolve(game)
        if recorded is not None and _identity(spec.name) != _identity(recorded):
            raise ReplayError(f"{out_dir}: its matches are of {clean(recorded)!r}, not {spec.name!r} (--game)")
        return spec
    if recorded is None:
        return None
    if ".py:" in recorded or "/" in recorded or "\\" in recorded:
        raise ReplayError(f"{out_dir / 'config.json'}: field 'game' names a game module ({clean(recorded)!r}); a "
                          f"results folder is data and cwm never imports a module it names: pass your own copy "
                          f"with --game path/to/module.py:{clean(_identity(recorded))}")
    try:
        return games.resolve(recorded)
    except UnknownGameError as e:
        raise ReplayError(f"{out_dir / 'config.json'}: field 'game': {e}; pass the game with --game") from None


def recorded_deals_of(out_dir: Path, game: str | games.GameSpec) -> tuple[int, ...]:
    """The deals of the earlier tournament in ``out_dir`` (``cwm.arena.plan.recorded_deals`` of its
    ``matches.jsonl``), taken only when its ``config.json`` records ``game``: another game's deal seeds would
    deal other cards.

    Raises:
      ReplayError: ``config.json`` is missing, damaged, or records another game (one line, naming the file).
      ArenaError: the folder's matches hold no usable list of deals (``recorded_deals``).
      InputLimitError: the file, or a value in it, is over its bound.
    """
    recorded, spec = recorded_game(out_dir), games.resolve(game)
    if recorded is None:
        raise ReplayError(f"{out_dir / 'config.json'}: missing; deals are taken only from a tournament folder "
                          f"whose config.json records its game")
    if _identity(spec.name) != _identity(recorded):
        raise ReplayError(f"{out_dir}: its matches are of {clean(recorded)!r}, not {spec.name!r}: deals are taken "
                          f"only from a tournament of the same game")
    return recorded_deals(out_dir / "matches.jsonl")


def _identity(game: str) -> str:
    """What two names of a folder's game are compared by: a module game's OpenSpiel short name (its path
    differs between machines), else ``cwm.games.canonical_id``. Imports nothing."""
    return game.rsplit(":", 1)[1] if ".py:" in game else games.canonical_id(game)


def agent_notes(transcript: dict[str, JSON]) -> dict[int, list[JSON]]:
    """Step index -> the records the acting agent kept of that move: an LLM's attempts (its log entries
    of that move), a CWM worker's sampling record. A seat's ``n``-th decision is its log's move ``n``."""
    seats = transcript.get("seats") or []
    decisions: dict[int, list[int]] = {}
    for i, step in enumerate(transcript["steps"]):
        if step["player"] != CHANCE:
            decisions.setdefault(int(step["player"]), []).append(i)
    notes: dict[int, list[JSON]] = {}
    for seat, info in enumerate(seats):
        log = info.get("log") or [] if isinstance(info, dict) else []
        mine = decisions.get(seat, [])
        for n, entry in enumerate(log):
            if not isinstance(entry, dict):
                continue
            move = entry.get("move", n + 1) if "attempt" in entry else n + 1  # worker records: one per move
            if type(move) is int and 1 <= move <= len(mine):
                notes.setdefault(mine[move - 1], []).append(entry)
    return notes


def render(transcript: dict[str, JSON]) -> str:
    """The whole match as terminal text."""
    seats = [s.get("label", "?") if isinstance(s, dict) else "?" for s in transcript.get("seats") or []]
    lines = [f"{transcript['game']}  {transcript['key']}  seed {transcript['seed']}",
             "seats: " + ", ".join(f"{i} = {label}" for i, label in enumerate(seats)), "",
             "start:", _indent(str(transcript["initial"]))]
    notes = agent_notes(transcript)
    for i, step in enumerate(transcript["steps"]):
        lines += ["", _step_line(i, step, seats)]
        lines += [_note_line(n) for n in notes.get(i, [])]
        lines.append(_indent(str(step["state"])))
        for seat, obs in enumerate(step.get("observations") or []):
            lines.append(f"  seat {seat} sees: {obs}")
    lines += ["", _ending(transcript, seats)]
    return "\n".join(clean(line, limit=None, multiline=True) for line in lines) + "\n"


def _step_line(i: int, step: dict[str, JSON], seats: list[str]) -> str:
    if step["player"] == CHANCE:
        p = step.get("chance_p")
        return f"{i + 1}. chance: {step['text']}" + (f" (p={p:.3g})" if isinstance(p, float) else "")
    seat = int(step["player"])
    who = seats[seat] if 0 <= seat < len(seats) else "?"
    took = f" [{step['seconds']:.2f} s]" if isinstance(step.get("seconds"), float) else ""
    return f"{i + 1}. seat {seat} ({who}): {step['text']}{took}"


def _note_line(note: JSON) -> str:
    """One agent record of a move: an LLM attempt (outcome, parsed move, reply's first lines) or numbers."""
    if not isinstance(note, dict):
        return ""
    if "attempt" in note:
        reply = "\n".join(str(note.get("reply") or "").splitlines()[:REPLY_LINES])
        head = f"  llm attempt {note['attempt']}: {note.get('outcome', '?')} {note.get('parsed')!r}"
        tokens = note.get("usage")
        head += f" (tokens {tokens[0]}/{tokens[1]})" if isinstance(tokens, list) and len(tokens) == 2 else ""
        return head + ("\n" + _indent(reply, "    | ") if reply else "")
    return "  record: " + ", ".join(f"{k}={v}" for k, v in note.items())


def _ending(transcript: dict[str, JSON], seats: list[str]) -> str:
    returns = " ".join(f"{x:+g}" for x in transcript["returns"])
    forfeit = transcript.get("forfeit")
    if isinstance(forfeit, dict) and forfeit.get("seat") is not None:
        who = seats[forfeit["seat"]] if 0 <= forfeit["seat"] < len(seats) else "?"
        return f"returns {returns}; seat {forfeit['seat']} ({who}) forfeited ({forfeit['kind']}): {forfeit['reason']}"
    if isinstance(forfeit, dict):
        return f"returns {returns}; void ({forfeit['kind']}): {forfeit['reason']}"
    return f"returns {returns}"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())
