"""Checks of an observation encoder ``encode(observation, player_id) -> list[float]`` (``cwm.contract.ENCODER_API``).

A PPO policy reads the game through its encoder, so the encoder must give every observation a vector of
one fixed length, of finite floats, the same one each time, a different one for each observation a player
can tell apart (else the policy cannot either), and quickly (it runs at every step of training). The
encoder is untrusted code: ``cwm.sandbox.checkers.sandbox_check_encoder`` runs ``check_encoder`` in a hardened sandbox child.
Synthesis scores a candidate by the same checks as a ``CheckReport`` (``encoder_check_report``; the sandbox
job ``cwm.sandbox.box.ENCODER_GAMES_JOB``), each failure naming the recorded game, the step and the observation.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cwm.types import JSON, CheckFailure, CheckReport, Trajectory, TypeStats

Encode = Callable[[Any, int], Any]
DEFAULT_CALL_S = 0.005  # the mean CPU time a call may use: 10M training steps at 5 ms each are 14 hours
_SHOWN = 10  # problems kept per check
_CALL_LIMIT = 1000  # characters of an observation a failure shows (a problem line shows 120)
# What each check asks of a call, as a refinement prompt states it beside what the call did.
CHECKS = {
    "raises": "a vector, without raising", "type": "a list of floats (ints are fine, bools are not)",
    "fixed length": "one length for every observation", "finite": "finite numbers only (no NaN, no infinity)",
    "deterministic": "the same vector on every call", "distinct": "distinct vectors for distinct observations",
    "cheap": "a cheap call", "observations": "observations to encode",
}


@dataclasses.dataclass(frozen=True)
class EncoderReport:
    """The verdict of the encoder checks.

    Attributes:
      length: the vector length (of the first observation; 0 when none was encoded).
      checked: observations encoded (each twice, for determinism).
      problems: what failed, one line each (at most ``_SHOWN`` per check), naming the observation.
      mean_s: the mean time of a call (the mean, not the slowest: one call stalled by a busy machine is
        not the encoder's cost).
      by_check: each check that ran, as ``[passed, total]`` (every call counted, not only those shown).
      failed_at: for each problem, the index of its observation in the checked sequence (-1: none, as for
        ``cheap``).
      clean: observations on which every check passed.
    """

    length: int
    checked: int
    problems: tuple[str, ...]
    mean_s: float
    by_check: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    failed_at: tuple[int, ...] = ()
    clean: int = 0

    @property
    def ok(self) -> bool:
        return self.checked > 0 and not self.problems

    def to_json(self) -> dict[str, JSON]:
        return {"length": self.length, "checked": self.checked, "problems": list(self.problems),
                "mean_s": self.mean_s, "by_check": {k: list(v) for k, v in self.by_check.items()},
                "failed_at": list(self.failed_at), "clean": self.clean}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EncoderReport:
        by_check = {str(k): (int(v[0]), int(v[1])) for k, v in data.get("by_check", {}).items()}
        return cls(int(data["length"]), int(data["checked"]), tuple(str(p) for p in data["problems"]),
                   float(data["mean_s"]), by_check, tuple(int(i) for i in data.get("failed_at", ())),
                   int(data.get("clean", 0)))


@dataclasses.dataclass(frozen=True)
class Site:
    """Where an observation was first recorded: game ``trajectory`` (its index), before move ``step`` (the
    game's length: its final state), after the moves ``history``."""

    observation: JSON
    player: int
    trajectory: int
    step: int
    history: tuple[str, ...]


def observation_sites(trajectories: Iterable[Trajectory]) -> list[Site]:
    """Every (observation, player) pair of the recorded games, decision points and final states, once each,
    where it first occurs."""
    seen: dict[str, Site] = {}
    for i, t in enumerate(trajectories):
        for step, obs_list in enumerate([s.observations for s in t.steps] + [t.final_observations]):
            history = tuple(s.action_string for s in t.steps[:step])
            for player, obs in enumerate(obs_list):
                seen.setdefault(_key(obs, player), Site(obs, player, i, step, history))
    return list(seen.values())


def observations_of(trajectories: Iterable[Trajectory]) -> list[tuple[JSON, int]]:
    """Every (observation, player) pair of the recorded games, decision points and final states, once each."""
    return [(site.observation, site.player) for site in observation_sites(trajectories)]


def _key(observation: JSON, player: int) -> str:
    return json.dumps([player, observation], sort_keys=True)


def check_encoder(encode: Encode, observations: Sequence[tuple[JSON, int]], *,
                  call_s: float = DEFAULT_CALL_S) -> EncoderReport:
    """Runs the encoder checks on ``observations`` (``observations_of``): fixed length, finite floats,
    deterministic, distinct observations of one player give distinct vectors, calls of ``call_s`` CPU seconds
    or less on average (the CPU time of the calling thread: on a busy machine a call takes longer but uses
    the same CPU, so the verdict does not depend on the load).

    An encoder that raises is reported with the observation it raised on, and checking goes on.
    """
    tally = _Tally()
    vectors: dict[tuple[int, tuple[float, ...]], JSON] = {}
    length: int | None = None  # the first vector's (an empty first vector sets it too)
    checked, spent = 0, 0.0
    for index, (obs, player) in enumerate(observations):
        where = _where(obs, player)
        fail = functools.partial(tally.fail, index=index, where=where)
        try:
            start = time.thread_time()  # CPU time of this thread: a busy machine slows a call, not its verdict
            first = encode(obs, player)
            spent += time.thread_time() - start
            second = encode(obs, player)
        except Exception as e:  # the encoder's bug, reported with its input
            fail("raises", f"{type(e).__name__}: {str(e)[:200]}")
            continue
        tally.passed("raises")
        vector = _floats(first)
        if vector is None:
            fail("type", f"not a list of floats ({type(first).__name__})")
            continue
        tally.passed("type")
        checked += 1
        length = len(vector) if length is None else length
        tally.check(len(vector) == length, "fixed length", fail, f"{len(vector)} numbers, the first observation had {length}")
        tally.check(all(math.isfinite(x) for x in vector), "finite", fail, "a number is not finite")
        tally.check(_floats(second) == vector, "deterministic", fail, "two calls gave different vectors")
        other = vectors.setdefault((player, tuple(vector)), obs)
        tally.check(other is obs or _key(other, player) == _key(obs, player), "distinct", fail,
                    f"gives the same vector as {_short(other)}")
    mean = spent / max(1, checked)
    if observations:
        tally.check(mean <= call_s, "cheap", functools.partial(tally.fail, index=-1, where=""),
                    f"a call took {mean * 1e3:.2f} ms on average, over the budget of {call_s * 1e3:.2f} ms")
    else:
        tally.fail("observations", "no observations to check", index=-1, where="")
    return EncoderReport(length or 0, checked, tally.problems(), mean, tally.counts(), tally.indices(),
                         len(observations) - len(tally.failing))


class _Tally:
    """Outcomes per check: counts of every call, the problems kept (``_SHOWN`` per check) and where."""

    def __init__(self) -> None:
        self.stats: dict[str, list[int]] = {}
        self.kept: dict[str, list[tuple[int, str]]] = {}
        self.failing: set[int] = set()  # every observation some check failed on

    def passed(self, check: str) -> None:
        s = self.stats.setdefault(check, [0, 0])
        s[0] += 1
        s[1] += 1

    def fail(self, check: str, text: str, *, index: int, where: str) -> None:
        self.stats.setdefault(check, [0, 0])[1] += 1
        if index >= 0:
            self.failing.add(index)
        kept = self.kept.setdefault(check, [])
        if len(kept) < _SHOWN:
            kept.append((index, f"{check}: {where}: {text}" if where else f"{check}: {text}"))

    def check(self, ok: bool, check: str, fail: Callable[[str, str], None], text: str) -> None:
        if ok:
            self.passed(check)
        else:
            fail(check, text)

    def problems(self) -> tuple[str, ...]:
        return tuple(text for kept in self.kept.values() for _, text in kept)

    def indices(self) -> tuple[int, ...]:
        return tuple(index for kept in self.kept.values() for index, _ in kept)

    def counts(self) -> dict[str, tuple[int, int]]:
        return {check: (s[0], s[1]) for check, s in self.stats.items()}


def _floats(value: Any) -> list[float] | None:
    """``value`` as a list of floats when it is a list of ints or floats (not bools), else ``None``."""
    if not isinstance(value, list) or not all(type(x) in (int, float) for x in value):
        return None
    return [float(x) for x in value]


def _where(obs: JSON, player: int) -> str:
    return f"player {player}'s observation {_short(obs)}"


def _short(obs: JSON, limit: int = 120) -> str:
    text = json.dumps(obs, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def encoder_check_report(report: EncoderReport, sites: Sequence[Site]) -> CheckReport:
    """``report`` (of ``check_encoder`` on ``sites``' observations, in order) as a ``CheckReport``: one test
    type ``encoder_<check>`` per check, each failure naming the game, the step and the observation; its
    transitions are the observations every check passed on."""
    failures = []
    for problem, index in zip(report.problems, report.failed_at):
        check, _, text = problem.partition(": ")
        failures.append(_failure(check, text, sites[index] if 0 <= index < len(sites) else None))
    return CheckReport(by_type={_type(k): TypeStats(*v) for k, v in report.by_check.items()},
                       transitions_passed=report.clean, transitions_total=len(sites),
                       failures=tuple(failures))


def _failure(check: str, text: str, site: Site | None) -> CheckFailure:
    expected = CHECKS.get(check, check)
    if site is None:  # a check of every call together (their mean cost), shown at the first observation
        return CheckFailure(test_type=_type(check), trajectory=0, step=0, expected=expected, got=text, diff="",
                            call="encode(observation, player_id) over every observation, on average")
    return CheckFailure(test_type=_type(check), trajectory=site.trajectory, step=site.step,
                        call=f"encode({_short(site.observation, _CALL_LIMIT)}, {site.player})", expected=expected,
                        got=text.removeprefix(f"{_where(site.observation, site.player)}: "), diff="",
                        history=site.history)


def _type(check: str) -> str:
    return "encoder_" + check.replace(" ", "_")
