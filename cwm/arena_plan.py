"""The plan of a tournament and what of it is done: jobs from agent specs, keyed by each agent's label,
and the finished matches read back from ``matches.jsonl`` (with those recorded under an agent's former
label filed under its current one), so a resumed tournament replays nothing it has played.

Re-exported by ``cwm.arena``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from cwm.arena_types import MatchJob, MatchResult
from cwm.types import CwmError
from planners.specs import AgentSpec, AgentSpecError, Settings, check_labels, parse_agent_spec


class ArenaError(CwmError, ValueError):
    """A tournament that cannot run as asked: too few agents, an agent that cannot be built (bad spec, LLM
    configuration, settings), bad numbers, or an output folder of another tournament."""


def match_seed(seed: int, key: str) -> int:
    """The seed of one match: a hash of the tournament seed and the match key (independent of run order)."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{key}".encode()).digest()[:8], "big") >> 1


def plan_jobs(game: str, agents: Sequence[str], *, matches: int, settings: Settings, seed: int = 0,
              pairings: Sequence[tuple[str, ...]] | None = None, move_time_limit: float | None = None,
              log_dir: str | None = None) -> list[MatchJob]:
    """The jobs of a tournament: each pairing in every seat order, ``matches`` games per order.

    Each agent plays under its label (``NAME`` of ``NAME=SPEC``, else the spec as typed): the label names
    it in match keys, and so in the match seeds and the results, which therefore do not depend on where a
    named ``cwm:`` path lives. Workers build the spec with its path made absolute (``MatchJob.builds``).

    Args:
      pairings: seatings by label (or by spec); default every pair of distinct agents (a self-play pairing
        ``(a, a)`` may be given).

    Raises:
      AgentSpecError: a spec that does not parse, two agents with one label, or a pairing that gives a
        label another spec.
      ArenaError: fewer than two agents and no pairings.
    """
    specs = {s.label: s for s in _parse_all(agents)}
    if pairings is None:
        if len(specs) < 2:
            raise ArenaError("a tournament needs at least two agents (or explicit pairings)")
        pairings = list(itertools.combinations(specs, 2))
    seated = [tuple(_seat(entry, specs) for entry in pair) for pair in pairings]
    orders = [o for pair in seated for o in dict.fromkeys(itertools.permutations(pair))]  # once for self-play
    jobs = []
    for order in orders:
        labels = tuple(s.label for s in order)
        for i in range(matches):
            key = f"{'|'.join(labels)}#{i}"
            jobs.append(MatchJob(game, key, labels, match_seed(seed, key), settings, move_time_limit, log_dir,
                                 tuple(_absolute(s) for s in order)))
    return jobs


def _parse_all(agents: Sequence[str]) -> list[AgentSpec]:
    specs = [parse_agent_spec(a) for a in agents]
    check_labels(specs)
    return specs


def _seat(entry: str, specs: dict[str, AgentSpec]) -> AgentSpec:
    """The agent a pairing names: one of ``specs`` by label, else ``entry`` parsed as a spec of its own."""
    if entry in specs:
        return specs[entry]
    spec = parse_agent_spec(entry)
    if spec.label in specs and specs[spec.label] != spec:
        raise AgentSpecError(f"pairing names {entry}, but {spec.label!r} is the label of {specs[spec.label]}")
    return spec


def _absolute(spec: AgentSpec) -> str:
    """The bare spec with a ``cwm:`` path made absolute, so workers with another working directory find it."""
    if spec.kind == "cwm" and Path(spec.target).exists():
        return f"cwm:{Path(spec.target).resolve()}"
    return spec.bare


def aliases_of(agents: Sequence[str], given: Mapping[str, str] | None,
               labels: Iterable[str]) -> dict[str, str]:
    """Former label -> label: the caller's, plus each named agent's bare spec (as typed and absolute), which
    was its label before it had a name. An alias that is itself an agent's label is not an alias.

    Raises:
      ArenaError: a given alias that points at no agent of this tournament.
    """
    current = set(labels)
    found: dict[str, str] = {}
    for spec in (parse_agent_spec(a) for a in agents):
        if spec.name:
            found |= {spec.bare: spec.label, _absolute(spec): spec.label}
    for old, new in (given or {}).items():
        if new not in current:
            raise ArenaError(f"alias {old!r} -> {new!r}: no agent of this tournament is labelled {new!r}")
        found[old] = new
    return {old: new for old, new in found.items() if old not in current and old != new}


def relabel(done: dict[str, MatchResult], aliases: Mapping[str, str]) -> dict[str, MatchResult]:
    """The finished matches, plus those recorded under a former label filed under the current one (a match
    already recorded under the current key wins; a relabelled match keeps the seed it was played with)."""
    found = dict(done)
    for r in done.values():
        seats = tuple(aliases.get(s, s) for s in r.seats)
        key = f"{'|'.join(seats)}#{r.key.rpartition('#')[2]}"
        if seats != r.seats and key not in found:
            found[key] = dataclasses.replace(r, key=key, seats=seats)
    return found


def load_results(path: Path) -> dict[str, MatchResult]:
    """The finished matches in a JSONL file; a torn last line (a killed run) is cut off the file."""
    if not path.exists():
        return {}
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    done: dict[str, MatchResult] = {}
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            result = MatchResult.from_json(json.loads(line))
            done[result.key] = result
    return done
