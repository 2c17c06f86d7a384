"""The plan of a tournament and what of it is done: jobs from agent specs, keyed by each agent's label;
what each label stands for (``agents.json``: a fingerprint per label, checked on resume so a label never
changes agent); and the finished matches read back from ``matches.jsonl``, with those recorded under an
agent's former label filed (and saved) under its current one, so a resumed tournament replays nothing it
has played.

Re-exported by ``cwm.arena``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from cwm.arena_types import MatchJob, MatchResult
from cwm.files import LineError, atomic_write, parse_jsonl
from cwm.types import CwmError
from planners.specs import AgentSpec, AgentSpecError, Settings, check_labels, parse_agent_spec

log = logging.getLogger("cwm.arena")

AGENTS_FILE = "agents.json"  # label -> fingerprint (agent_fingerprint) of every agent with finished matches


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
      pairings: seatings by label, or by the spec of an agent of its own (whose label must be new); default
        every pair of distinct agents (a self-play pairing ``(a, a)`` may be given).

    Raises:
      AgentSpecError: a spec that does not parse, two seated specs with one label (in ``agents`` or
        ``pairings``), or a pairing entry that is an agent's spec under another label (``random`` for
        ``x=random``: pair it as ``x``).
      ArenaError: fewer than two agents and no pairings.
    """
    specs = {s.label: s for s in _parse_all(agents)}
    if pairings is None:
        if len(specs) < 2:
            raise ArenaError("a tournament needs at least two agents (or explicit pairings)")
        pairings = list(itertools.combinations(specs, 2))
    seated = [tuple(_seat(entry, specs) for entry in pair) for pair in pairings]
    check_labels(list(dict.fromkeys([*specs.values(), *(s for pair in seated for s in pair)])))
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
    """The agent a pairing names: one of ``specs`` by label, else ``entry`` parsed as a spec of its own (its
    label is checked with the others'), unless it is an agent's spec without that agent's name."""
    if entry in specs:
        return specs[entry]
    spec = parse_agent_spec(entry)
    twin = next((s for s in specs.values() if not spec.name and _absolute(s) == _absolute(spec)), None)
    if twin is not None:
        raise AgentSpecError(f"pairing entry {entry!r} is the spec of agent {twin.label!r}; pair it by its label "
                             f"{twin.label!r} (a second agent of that spec needs a NAME= of its own)")
    return spec


def _absolute(spec: AgentSpec) -> str:
    """The bare spec with a ``cwm:`` (or ``cwm-selected:``) path made absolute, so workers with another working
    directory find it."""
    if spec.kind in ("cwm", "cwm-selected") and Path(spec.target).exists():
        return f"{spec.kind}:{Path(spec.target).resolve()}"
    return spec.bare


def aliases_of(agents: Sequence[str], given: Mapping[str, str] | None, current: Mapping[str, str],
               recorded: Mapping[str, str] | None = None) -> dict[str, str]:
    """Former label -> label: each named agent's bare spec (as typed and absolute), which was its label
    before it had a name, plus the caller's (which win).

    An automatic alias is dropped when its former label is a current label; when two names claim it
    (``a=random,b=random`` after a run of ``random``: which of them played those matches is unknown, so
    neither takes them over and both play theirs); or when ``recorded`` says the former label was another
    agent (``cwm:m.py`` before m.py changed: its matches stay under that label).

    Args:
      current: label -> fingerprint (``agent_fingerprint``) of each agent of this tournament.
      recorded: label -> fingerprint of the agents of the finished matches (``agents.json``).

    Raises:
      ArenaError: a given alias that points at no agent of this tournament, or whose former label is the
        label of one (its matches are that agent's own).
    """
    recorded = recorded or {}
    claims: dict[str, set[str]] = {}
    for spec in (parse_agent_spec(a) for a in agents):
        for old in {spec.bare, _absolute(spec)} if spec.name and spec.label in current else ():
            claims.setdefault(old, set()).add(spec.label)
    found = {old: new for old, (new, *others) in claims.items() if not others and old not in current
             and recorded.get(old, current[new]) == current[new]}
    for old, new in (given or {}).items():
        if new not in current:
            raise ArenaError(f"alias {old!r} -> {new!r}: no agent of this tournament is labelled {new!r}")
        if old in current:
            raise ArenaError(f"alias {old!r} -> {new!r}: {old!r} is the label of an agent of this tournament, "
                             f"so the matches recorded under it are its own")
        found[old] = new
    return found


def own_aliases(out_dir: Path, label: str, opponents: Iterable[str]) -> dict[str, str]:
    """Former label -> ``label`` for every label in ``out_dir/matches.jsonl`` that is neither ``label`` nor an
    opponent's (specs). For a folder where one agent meets opponents fixed by the config a resume must match
    (``cwm run``, ``experiments/arena_figure.py``), any other label is that agent's, recorded before it had
    its name (``cwm:/where/the/run/was/bundle``)."""
    recorded = {s for r in load_results(out_dir / "matches.jsonl").values() for s in r.seats}
    return dict.fromkeys(sorted(recorded - {label, *(parse_agent_spec(o).label for o in opponents)}), label)


def agent_fingerprint(spec: AgentSpec) -> str:
    """What an agent is, wherever its files are: for ``cwm:`` the sha256 of its ``.py`` file or of its bundle's
    ``manifest.json`` (which holds every file's hash), so moving the files keeps it and changing them does
    not; for ``cwm-selected:`` the sha256 of its ``selection.json`` (which holds each bundle's); for other kinds
    the bare spec (``gt-mcts``, ``llm:openai:gpt-x``)."""
    if spec.kind == "cwm-selected":
        file = Path(spec.target) / "selection.json"
        return f"cwm-selected sha256:{hashlib.sha256(file.read_bytes()).hexdigest()}" if file.is_file() else spec.bare
    if spec.kind != "cwm":
        return spec.bare
    path = Path(spec.target)
    file = path / "manifest.json" if path.is_dir() else path
    return f"cwm sha256:{hashlib.sha256(file.read_bytes()).hexdigest()}" if file.is_file() else "cwm (no manifest)"


def check_resume(out_dir: Path, agents: Sequence[str], given: Mapping[str, str] | None,
                 builds: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """What a tournament about to play in ``out_dir`` takes over, checked against ``out_dir/agents.json``
    (label -> fingerprint of the agents of its finished matches; a folder without one has nothing to check):
    each label, and each former label an alias hands over, must still be the agent that played there.
    Reads only.

    Args:
      builds: label -> spec of each agent about to play.

    Returns:
      the aliases (``aliases_of``), and the fingerprints to record: the file's, less the former labels
      (their matches move to the current ones), plus this tournament's.

    Raises:
      ArenaError: a label that now names another agent (another spec, or a model file or bundle that
        changed), or a bad given alias (``aliases_of``).
    """
    path = out_dir / AGENTS_FILE
    recorded: dict[str, str] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    now = {label: agent_fingerprint(parse_agent_spec(build)) for label, build in builds.items()}
    aliases = aliases_of(agents, given, now, recorded)
    for old, new in [(label, label) for label in now] + list(aliases.items()):
        if recorded.get(old, now[new]) != now[new]:
            as_new = "" if old == new else f" (as {new!r})"
            raise ArenaError(f"{out_dir}: agent {old!r} was {recorded[old]} in the finished matches there, "
                             f"and is now{as_new} {now[new]}; use another --out, or another name for this agent")
    return aliases, {label: fp for label, fp in recorded.items() if label not in aliases} | now


def relabel(done: dict[str, MatchResult], aliases: Mapping[str, str]) -> dict[str, MatchResult]:
    """The finished matches, in the order recorded, with those recorded under a former label (``aliases``:
    former -> current) filed under the current one. A relabelled match keeps the seed it was played with;
    where its new key is taken (by a match recorded under it, or by an earlier former label's), it is dropped."""
    def seats_of(r: MatchResult) -> tuple[str, ...]:
        return tuple(aliases.get(s, s) for s in r.seats)

    kept = {key for key, r in done.items() if seats_of(r) == r.seats}
    found: dict[str, MatchResult] = {}
    for key, r in done.items():
        seats = seats_of(r)
        new = key if seats == r.seats else f"{'|'.join(seats)}#{key.rpartition('#')[2]}"
        if new == key or (new not in kept and new not in found):
            found[new] = r if new == key else dataclasses.replace(r, key=new, seats=seats)
    return found


def resume(path: Path, aliases: Mapping[str, str]) -> dict[str, MatchResult]:
    """The finished matches in ``path`` under their current labels (``relabel``). When any were recorded under
    a former label, the file is rewritten so (atomically: a crash leaves the old file or the new one), and
    later resumes find them with no alias."""
    recorded = load_results(path)
    done = relabel(recorded, aliases)
    if list(done) != list(recorded):
        atomic_write(path, "".join(json.dumps(r.to_json()) + "\n" for r in done.values()))
    return done


def load_results(path: Path) -> dict[str, MatchResult]:
    """The finished matches in a JSONL file.

    A last line that is not a match result is what a run killed while writing leaves: it is cut off the file
    with a warning naming the file and line, and its match is played again (a whole last line that only
    lacks its newline gets it). Any other line that is not a match result is an error, since dropping it
    would lose a finished match.

    Raises:
      ArenaError: a line that is not UTF-8, not JSON or not shaped as a match result (names the file and line).
    """
    if not path.exists():
        return {}
    data = path.read_bytes()
    try:
        results, torn = parse_jsonl(path, data, MatchResult.from_json, what="a match result")
    except LineError as e:
        raise ArenaError(f"{e}; fix or delete that line (its match is then played again)") from e
    if torn is not None:
        log.warning("%s:%d: the last line is cut short (a run was killed while writing it); it is dropped and its "
                    "match is played again", path, torn)
        kept = data.split(b"\n")[: torn - 1]
        path.write_bytes(b"\n".join(kept).rstrip(b"\n") + b"\n" if results else b"")
    elif data and not data.endswith(b"\n"):
        path.write_bytes(data + b"\n")
    return {r.key: r for r in results}
