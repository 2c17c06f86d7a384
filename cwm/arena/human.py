"""A person against any agent (``cwm play``): one match played in this process, saved like any arena match.

The folder it is saved in (default ``runs/play/<game>``) is an arena folder: ``config.json`` names the game,
each match is a row of ``matches.jsonl`` (keyed by content like a tournament's: the seat of ``human``, the
agent's fingerprint and the match's number among those games, ``human|<agent>#<n>`` on screen) with its
transcript, and the reports and leaderboard are rewritten after every game, so ``cwm replay`` and
``cwm view`` show the games, and they resume like a tournament (nothing is overwritten).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cwm import arena, games
from cwm.agents.human import HumanAgent
from cwm.agents.specs import Settings, check_agent, parse_agent_spec
from cwm.arena import identity
from cwm.arena import report as arena_report
from cwm.arena import transcript as arena_transcript
from cwm.arena.plan import ArenaError, load_results, match_seed, tournament_settings
from cwm.arena.types import MatchJob, MatchResult
from cwm.files import RUN_FILE_BYTES, atomic_write, loads_bounded, read_bounded
from cwm.llm import PendingBatch
from cwm.llm.batch import PENDING_FILE, pending_requests

HUMAN = "human"


def play(game: str, against: str, *, seat: int = 0, out_dir: str | Path | None = None,
         settings: Settings | None = None, seed: int = 0, read: Callable[[str], str] = input,
         write: Callable[[str], None] = print) -> MatchResult:
    """Plays one match between a person (``read``/``write``) in ``seat`` and the agent ``against``, and saves it.

    Args:
      game: the real game (registry name, OpenSpiel string or module spec); two players.
      against: the agent's spec (``cwm.agents.specs``); its label names it in the match key.
      seat: the person's seat, 0 or 1.
      out_dir: the arena folder to save in (default ``runs/play/<game>``).
      settings: the agent's settings (``Settings()`` defaults when ``None``).
      seed: with the match key, seeds chance and the agent.

    Returns:
      the finished match. No move has a time limit (a person thinks at their own pace).

    Raises:
      ArenaError: a game that is not for two players, a seat other than 0 or 1, an agent that cannot be built,
        or a folder that holds another game's matches. Nothing is written then.
      PendingBatch: an LLM agent on a batch directory (``llm:batch:DIR``) asked a request without a reply; the
        game is not saved (``cwm play`` exits with status 3).
    """
    return play_as(HumanAgent(read=read, write=write), game, against, seat=seat, out_dir=out_dir,
                   settings=settings, seed=seed)


def play_as(person: HumanAgent, game: str, against: str, *, seat: int = 0, out_dir: str | Path | None = None,
            settings: Settings | None = None, seed: int = 0) -> MatchResult:
    """``play`` with ``person`` in ``seat``: a ``HumanAgent`` that takes its moves from elsewhere than a
    terminal (``cwm serve``'s page), validated the same way. Arguments, result and errors as ``play``'s."""
    settings = settings or Settings()
    name = games.resolve(game).name
    if games.load_game(name).num_players() != 2 or seat not in (0, 1):
        raise ArenaError(f"cwm play needs a two-player game and seat 0 or 1 (got {name}, seat {seat})")
    spec = parse_agent_spec(against)
    try:
        check_agent(spec, name, settings=settings)
    except ValueError as e:
        raise ArenaError(f"agent {spec.label} cannot play {name}: {e}") from e
    out = Path(out_dir) if out_dir is not None else Path("runs") / "play" / name
    _check_folder(out, name)
    seats = (HUMAN, spec.label) if seat == 0 else (spec.label, HUMAN)
    agent = identity.agent_fingerprint(spec)
    fingerprints = (HUMAN, agent) if seat == 0 else (agent, HUMAN)
    done = load_results(out / "matches.jsonl")
    index = sum(1 for r in done.values() if r.fingerprints == fingerprints)
    key = identity.match_key(name, identity.settings_hash(tournament_settings(seed, settings, None)), fingerprints,
                             index)
    builds = (HUMAN, spec.bare) if seat == 0 else (spec.bare, HUMAN)
    job = MatchJob(name, key, seats, match_seed(seed, key), settings, None, str(out / "llm"), builds, fingerprints,
                   index)
    record = arena.run_match(job, given={seat: person})
    if "pending" in record:  # an LLM agent on a batch directory asked a request that has no reply yet
        directory = Path(str(record["directory"]))
        raise PendingBatch(f"the agent's request waits for a reply in {directory / PENDING_FILE}; the game is not "
                           f"saved: once the reply is written, play again (the same moves get the same answers)",
                           directory=directory, pending=len(pending_requests(directory)))
    _save(out, record, name)
    return MatchResult.from_json(record)


def _check_folder(out: Path, game: str) -> None:
    config = out / "config.json"
    if config.is_file():
        found = loads_bounded(read_bounded(config, RUN_FILE_BYTES, what="run settings"), where=str(config))
        recorded = found.get("game") if isinstance(found, dict) else None
        if recorded != game:
            raise ArenaError(f"{out} holds matches of {recorded}, not {game}; use another --out")


def _save(out: Path, record: dict, game: str) -> None:
    """Files the match like a tournament does: transcript first, then its row, then the reports."""
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "config.json").exists():
        atomic_write(out / "config.json", json.dumps({"game": game, "human_play": True}, indent=2) + "\n")
    row = arena_transcript.save(out, record)
    with (out / "matches.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    results = list(load_results(out / "matches.jsonl").values())
    labels = list(dict.fromkeys(s for r in results for s in r.seats))
    arena_report.write_reports(out, results, config={"game": game, "agents": labels, "matches": len(results)})
