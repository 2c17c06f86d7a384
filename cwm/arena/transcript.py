"""The full record of one match, kept beside the tournament's summary rows: ``OUT/transcripts/<KEY>.json``.

A transcript holds what ``matches.jsonl`` leaves out so that its rows stay small: every step (the seat
that acted, the action id and string, the seconds it took to choose, a chance outcome's probability, the
game's rendering of the state after it, and each seat's observation in a game with hidden information),
the returns and a forfeit with its reason, and each agent's own record: an LLM policy's every prompt,
reply, parsed move, parse failure, tokens, latency and cost; a CWM agent's sampling record per move.

``save`` writes the transcript of a finished match before its row is appended to ``matches.jsonl``, so a
resumed tournament finds a transcript for every match it skips. ``load`` reads one back; a match played
before transcripts were kept gets one rebuilt from the actions its row holds (without times or agents'
records). Agents' texts are untrusted: every string is cleaned (``cwm.text.clean_json``) when a
transcript is built and again when it is read, and a file read back is checked field by field by type
(a transcript may come from anyone's shared folder).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyspiel

from cwm.agents.base import AgentError
from cwm.arena.types import MatchResult
from cwm.files import InputLimitError, atomic_write, loads_bounded, read_bounded
from cwm.text import clean_json
from cwm.types import CHANCE, JSON, CwmError

SCHEMA = "cwm.arena.transcript/1"
TRANSCRIPTS_DIR = "transcripts"
TEXT_LIMIT = 200_000  # characters kept of one string (a prompt with the rules and example games)
# One seat's record of one match (an LLM policy's prompts and replies, a CWM agent's per-move stats): an
# LLM's 100 KB prompts over a 300-move game stay far below it.
RECORD_CAP_BYTES = 64 << 20
# A transcript file read back (``load``: its size checked first, its JSON within cwm.files.loads_bounded's
# bounds): the seats' records and the game's steps.
FILE_CAP_BYTES = 4 * RECORD_CAP_BYTES


class TranscriptError(CwmError, ValueError):
    """A transcript that cannot be found or read (names the file or the match)."""


class RecordCapError(AgentError):
    """A seat's record of the match grew past ``RECORD_CAP_BYTES``: the seat forfeits (as an exception)."""


class RecordMeter:
    """The size of each seat's record (the agent's ``log``) in one match, measured entry by entry as it grows
    (each entry once, as JSON), so that a seat whose record passes the cap is stopped at the move that
    passed it, before the transcript is written.

    Args:
      seats: the number of seats.
      cap: the most bytes one seat's record may hold (default: ``RECORD_CAP_BYTES``).
    """

    def __init__(self, seats: int, cap: int | None = None):
        self.cap = RECORD_CAP_BYTES if cap is None else cap
        self.seen = [0] * seats
        self.size = [0] * seats

    def check(self, seat: int, agent: Any) -> None:
        """Adds what ``agent``'s log gained since the last check to ``seat``'s size.

        Raises:
          RecordCapError: the seat's record is now over the cap.
        """
        log = getattr(agent, "log", None)
        if type(log) is not list:
            return
        new, self.seen[seat] = log[self.seen[seat]:], len(log)
        for entry in new:
            try:
                self.size[seat] += len(json.dumps(entry, default=repr))
            except (TypeError, ValueError, RecursionError):  # not JSON: the transcript keeps its cleaned text
                self.size[seat] += len(repr(type(entry)))
        if self.size[seat] > self.cap:
            raise RecordCapError(f"seat {seat}'s record of this match grew to {self.size[seat]:,} bytes, past the "
                                 f"transcript cap of {self.cap:,} bytes")


def file_name(key: str) -> str:
    """The transcript file of match ``key``: its characters safe for a file name, plus a hash of the key
    (two keys that differ only in unsafe characters get two files)."""
    safe = re.sub(r"[^A-Za-z0-9_.+-]+", "_", key)[:120]
    return f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.json"


def steps(game: pyspiel.Game, actions: Sequence[int], times: Sequence[float] = ()) -> tuple[str, list[JSON]]:
    """The game's rendering of its initial state, and one record per applied action, replayed on ``game``.

    Each step holds ``player`` (-1 for chance), ``action``, ``text`` (``action_to_string``), ``seconds``
    (``None`` where ``times`` has no entry), ``chance_p`` for a chance outcome, ``state`` (``str`` of the
    state after it) and, in a game with hidden information that renders observations, ``observations``
    (one string per seat).
    """
    state = game.new_initial_state()
    initial = str(state)
    hidden = (game.get_type().information != pyspiel.GameType.Information.PERFECT_INFORMATION
              and game.get_type().provides_observation_string)
    found: list[JSON] = []
    for i, action in enumerate(actions):
        player = state.current_player()
        step: dict[str, JSON] = {"player": player, "action": int(action),
                                 "text": state.action_to_string(player, action),
                                 "seconds": float(times[i]) if i < len(times) else None}
        if player == CHANCE:
            step["chance_p"] = dict(state.chance_outcomes()).get(action)
        state.apply_action(action)
        step["state"] = str(state)
        if hidden:
            step["observations"] = [state.observation_string(p) for p in range(game.num_players())]
        found.append(step)
    return initial, found


def build(game: pyspiel.Game, record: dict[str, JSON], *, game_name: str, specs: Sequence[str],
          times: Sequence[float] = (), agents: Sequence[dict[str, Any]] = (),
          worker: dict[str, JSON] | None = None) -> dict[str, JSON]:
    """The transcript of a finished match.

    Args:
      game: the ground-truth game it was played on.
      record: the match's ``MatchResult.to_json()``.
      game_name: the game's name in the registry (or its spec).
      specs: the spec each seat was built from.
      times: seconds per applied action (``play_match``'s ``times``).
      agents: per seat, ``{"log": [...], "stats": {...}}``: the agent's own record of the match.
      worker: where the match ran (``cwm.executors.worker_place``: host, pid, Ray node id), kept as
        ``"worker"`` when given.
    """
    result = MatchResult.from_json(record)
    initial, found = steps(game, result.actions, times)
    forfeit = None if result.forfeit_seat is None and not result.forfeit_kind else {
        "seat": result.forfeit_seat, "kind": result.forfeit_kind, "reason": result.reason}
    seats = [{"label": label, "spec": specs[i] if i < len(specs) else label,
              "log": list(agents[i].get("log", [])) if i < len(agents) else [],
              "stats": dict(agents[i].get("stats", {})) if i < len(agents) else {}}
             for i, label in enumerate(result.seats)]
    transcript = {"schema": SCHEMA, "game": game_name, "key": result.key, "seed": result.seed,
                  "seats": seats, "returns": list(result.returns), "forfeit": forfeit, "moves": result.moves,
                  "duration_s": result.duration_s, "initial": initial, "steps": found,
                  **({"worker": dict(worker)} if worker is not None else {})}
    return clean_json(transcript, limit=TEXT_LIMIT)


def save(out_dir: Path, record: dict[str, JSON]) -> dict[str, JSON]:
    """Writes the transcript a match record carries (its ``"transcript"``) under ``out_dir/transcripts``
    and returns the summary row: the record without it, and without the agents' logs (they are in it)."""
    row = {k: v for k, v in record.items() if k != "transcript"}
    transcript = record.get("transcript")
    if isinstance(transcript, dict):
        folder = out_dir / TRANSCRIPTS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / file_name(str(row["key"])), json.dumps(transcript, indent=1) + "\n")
        row["logs"] = []
    return row


def load(out_dir: Path, result: MatchResult, game: pyspiel.Game | None = None) -> dict[str, JSON]:
    """The transcript of ``result``, a match of the tournament in ``out_dir``.

    Args:
      game: the ground-truth game, to rebuild a transcript from the row's actions where none was saved.

    Raises:
      TranscriptError: the file is not a transcript (not JSON, another schema, a field of another type:
        the message names the file and the field), or there is none and no ``game`` to rebuild it with.
    """
    path = path_of(out_dir, result.key)
    if not path.is_file():
        if game is None:
            raise TranscriptError(f"{path}: no transcript of match {result.key!r}")
        return build(game, result.to_json(), game_name=game.get_type().short_name, specs=result.seats)
    try:
        data = loads_bounded(read_bounded(path, FILE_CAP_BYTES, what="transcript"), where=str(path), allow_nan=True)
    except (UnicodeDecodeError, json.JSONDecodeError, InputLimitError, RecursionError) as e:
        raise TranscriptError(f"{path}: not a transcript ({e})") from e
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("steps"), list):
        raise TranscriptError(f"{path}: not a transcript (schema {SCHEMA} expected)")
    problem = _problem(data)
    if problem:
        raise TranscriptError(f"{path}: field {problem}")
    return clean_json(data, limit=TEXT_LIMIT)


def path_of(out_dir: Path, key: str) -> Path:
    """Where the transcript of match ``key`` of the tournament in ``out_dir`` is (or would be)."""
    return out_dir / TRANSCRIPTS_DIR / file_name(key)


# What a transcript's readers use, by type: a file that breaks these is refused whole (``_problem``).
_TOP = {"game": "str", "key": "str", "seed": "int", "initial": "str", "moves": "int?", "duration_s": "number?"}
_STEP = {"player": "int", "action": "int", "text": "str", "state": "str", "seconds": "number?",
         "chance_p": "number?", "observations": "strs?"}
_FORFEIT = {"seat": "int?", "kind": "str", "reason": "str"}
_SEAT = {"label": "str?", "spec": "str?", "log": "list?", "stats": "dict?"}


def _fits(value: object, kind: str) -> bool:
    if kind.endswith("?") and value is None:
        return True
    kind = kind.rstrip("?")
    if kind == "strs":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind in ("int", "number"):
        numeric = type(value) is int or (kind == "number" and type(value) is float)
        return numeric
    return isinstance(value, {"str": str, "list": list, "dict": dict}[kind])


def _mismatch(record: dict[str, JSON], fields: dict[str, str], where: str) -> str:
    """The first field of ``record`` that does not have its type, as ``'where.name' must be ...`` ("" if none)."""
    for name, kind in fields.items():
        if not _fits(record.get(name), kind):
            what = {"str": "a string", "int": "an integer", "number": "a number", "strs": "a list of strings",
                    "list": "a list", "dict": "an object"}[kind.rstrip("?")]
            return f"'{where}{name}' must be {what}" + (" or null" if kind.endswith("?") else "")
    return ""


def _problem(data: dict[str, JSON]) -> str:
    """Why ``data`` is not a transcript by type ("" when it is one), naming the field."""
    found = _mismatch(data, _TOP, "")
    returns = data.get("returns")
    if not found and not (isinstance(returns, list) and all(type(r) in (int, float) for r in returns)):
        found = "'returns' must be a list of numbers"
    seats = data.get("seats")
    if not found and not (isinstance(seats, list) and all(isinstance(s, dict) for s in seats)):
        found = "'seats' must be a list of objects"
    forfeit = data.get("forfeit")
    if not found and forfeit is not None:
        found = _mismatch(forfeit, _FORFEIT, "forfeit.") if isinstance(forfeit, dict) else \
            "'forfeit' must be an object or null"
    for i, seat in enumerate(seats if not found and isinstance(seats, list) else []):
        found = found or _mismatch(seat, _SEAT, f"seats[{i}].")
    for i, step in enumerate(data["steps"] if not found else []):
        found = found or (_mismatch(step, _STEP, f"steps[{i}].") if isinstance(step, dict) else
                          f"'steps[{i}]' must be an object")
    return found
