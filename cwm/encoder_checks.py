"""Checks of an observation encoder ``encode(observation, player_id) -> list[float]`` (``cwm.contract.ENCODER_API``).

A PPO policy reads the game through its encoder, so the encoder must give every observation a vector of
one fixed length, of finite floats, the same one each time, a different one for each observation a player
can tell apart (else the policy cannot either), and quickly (it runs at every step of training). The
encoder is untrusted code: ``sandbox_check_encoder`` runs ``check_encoder`` in a hardened sandbox child.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cwm.types import JSON, Trajectory

Encode = Callable[[Any, int], Any]
DEFAULT_CALL_S = 0.005  # the mean time a call may take: 10M training steps at 5 ms each are 14 hours
_SHOWN = 10  # problems kept per check


@dataclasses.dataclass(frozen=True)
class EncoderReport:
    """The verdict of the encoder checks.

    Attributes:
      length: the vector length (of the first observation; 0 when none was encoded).
      checked: observations encoded (each twice, for determinism).
      problems: what failed, one line each (at most ``_SHOWN`` per check), naming the observation.
      mean_s: the mean time of a call (the mean, not the slowest: one call stalled by a busy machine is
        not the encoder's cost).
    """

    length: int
    checked: int
    problems: tuple[str, ...]
    mean_s: float

    @property
    def ok(self) -> bool:
        return self.checked > 0 and not self.problems

    def to_json(self) -> dict[str, JSON]:
        return {"length": self.length, "checked": self.checked, "problems": list(self.problems),
                "mean_s": self.mean_s}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EncoderReport:
        return cls(int(data["length"]), int(data["checked"]), tuple(str(p) for p in data["problems"]),
                   float(data["mean_s"]))


def observations_of(trajectories: Iterable[Trajectory]) -> list[tuple[JSON, int]]:
    """Every (observation, player) pair of the recorded games, decision points and final states, once each."""
    seen: dict[str, tuple[JSON, int]] = {}
    for t in trajectories:
        for obs_list in [s.observations for s in t.steps] + [t.final_observations]:
            for player, obs in enumerate(obs_list):
                seen.setdefault(_key(obs, player), (obs, player))
    return list(seen.values())


def _key(observation: JSON, player: int) -> str:
    return json.dumps([player, observation], sort_keys=True)


def check_encoder(encode: Encode, observations: Sequence[tuple[JSON, int]], *,
                  call_s: float = DEFAULT_CALL_S) -> EncoderReport:
    """Runs the encoder checks on ``observations`` (``observations_of``): fixed length, finite floats,
    deterministic, distinct observations of one player give distinct vectors, calls of ``call_s`` or less
    on average.

    An encoder that raises is reported with the observation it raised on, and checking goes on.
    """
    problems: dict[str, list[str]] = {}
    vectors: dict[tuple[int, tuple[float, ...]], JSON] = {}
    length, checked, spent = 0, 0, 0.0

    def fail(check: str, text: str) -> None:
        problems.setdefault(check, [])
        if len(problems[check]) < _SHOWN:
            problems[check].append(f"{check}: {text}")

    for obs, player in observations:
        where = f"player {player}'s observation {_short(obs)}"
        try:
            start = time.perf_counter()
            first = encode(obs, player)
            spent += time.perf_counter() - start
            second = encode(obs, player)
        except Exception as e:  # the encoder's bug, reported with its input
            fail("raises", f"{where}: {type(e).__name__}: {str(e)[:200]}")
            continue
        vector = _floats(first)
        if vector is None:
            fail("type", f"{where}: not a list of floats ({type(first).__name__})")
            continue
        checked += 1
        length = length or len(vector)
        if len(vector) != length:
            fail("fixed length", f"{where}: {len(vector)} numbers, the first observation had {length}")
        if not all(math.isfinite(x) for x in vector):
            fail("finite", f"{where}: a number is not finite")
        if _floats(second) != vector:
            fail("deterministic", f"{where}: two calls gave different vectors")
        other = vectors.setdefault((player, tuple(vector)), obs)
        if other is not obs and _key(other, player) != _key(obs, player):
            fail("distinct", f"{where} and {_short(other)} give the same vector")
    mean = spent / max(1, checked)
    if mean > call_s:
        fail("cheap", f"a call took {mean * 1e3:.2f} ms on average, over the budget of {call_s * 1e3:.2f} ms")
    if not observations:
        fail("observations", "no observations to check")
    return EncoderReport(length, checked, tuple(p for ps in problems.values() for p in ps), mean)


def _floats(value: Any) -> list[float] | None:
    """``value`` as a list of floats when it is a list of ints or floats (not bools), else ``None``."""
    if not isinstance(value, list) or not all(type(x) in (int, float) for x in value):
        return None
    return [float(x) for x in value]


def _short(obs: JSON) -> str:
    text = json.dumps(obs, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def sandbox_check_encoder(source: str, trajectories: Iterable[Trajectory], *, sandbox: Any = None,
                          call_s: float = DEFAULT_CALL_S) -> EncoderReport:
    """``check_encoder`` on untrusted encoder ``source`` in a hardened sandbox child (``cwm.sandbox``).

    A source that the gate refuses, that does not load, or that runs past a limit gets a report whose one
    problem says so.
    """
    from cwm.sandbox import pool

    box = sandbox or pool.acquire()
    try:
        payload = {"observations": [[obs, p] for obs, p in observations_of(trajectories)], "call_s": call_s}
        result = box.run("cwm.sandbox.jobs:check_encoder", source, payload)
    finally:
        if sandbox is None:
            pool.release(box)
    if not result.ok:
        return EncoderReport(0, 0, (f"{result.kind}: {result.error}",), 0.0)
    return EncoderReport.from_json(result.value)  # type: ignore[arg-type]
