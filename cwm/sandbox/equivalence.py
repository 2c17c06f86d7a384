"""The differential equivalence check: is a candidate twin (a faster module with the world-model contract)
observationally identical to the checked model it replaces?

Both modules are untrusted and run only in sandbox children, never in this process and never in the same
child (``cwm.sandbox.jobs.twin``): the reference plays its own playouts (seeded random play, and cwm's MCTS
on the reference so that deep and rare states are reached), the twin replays the reference's actions, each
child writes down what its model says at every state, and this module compares the two records on the
trusted side: at every state who acts (and whether the game is over), the legal set, the chance
distribution, every player's observation (the transition, as each player sees it) and the rewards of the
move that led there. Limits are CPU time measured from outside (``cwm.sandbox.Limits``); wall time is only
the sandbox's backstop.

**How many playouts.** The zero-failure bound (the binomial "rule of three" in its exact form): if a
divergence shows up in a fraction of at least ``p`` of the playouts of one kind, ``N`` independent playouts of
that kind all miss it with probability ``(1 - p) ** N``, which is at most ``delta`` once
``N = ceil(ln delta / ln(1 - p))`` (``playouts_for``). Passing the check is therefore evidence of a bounded
divergence rate under the playout distributions used, not a proof of equality: a divergence rarer than ``p``
per playout, or one that those distributions never reach, may be missed. The evidence record says so.

The result is an evidence record (``check_equivalence``; JSON), whose fingerprints name the exact bytes of
both sources; ``evidence_problem`` checks that a record vouches for a given pair.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import math
from typing import Any

from cwm import value_rules
from cwm.checks.report import diff
from cwm.contract import WORLD_MODEL_API
from cwm.sandbox.box import Sandbox
from cwm.sandbox.playout_check import check_playout
from cwm.sandbox.playout_check import plan as playout_plan
from cwm.sandbox.verdicts import PROFILE_JOB, TRACE_JOB, JobResult, Limits
from cwm.text import clean
from cwm.types import JSON, TERMINAL, CheckFailure, UsageError

EVIDENCE_FORMAT = "cwm-twin-evidence"
EVIDENCE_VERSION = 1
KINDS = ("random", "mcts")  # the playout distributions: seeded uniform random play, MCTS on the reference
VERDICTS = ("equivalent", "divergent", "refused", "inconclusive")
Memo = dict[str, list[dict[str, Any]]]
"""The reference's playout records by what they were played from: one per synthesis of a model's twins, whose
checks play the same seeded playouts of the same model (for a slow model, most of a check's CPU), shared by
the checks of the candidates and the final check of the accepted one. Records that could not be had are not
kept (the next check plays them again)."""
TOLERANCE = 1e-9  # absolute, on a chance probability or a reward (every other field must be equal)
_SEED_STRIDE = 1_000_003  # the seeds of one kind's playouts start this far from the previous kind's
_REASON_CHARS = 400
_LISTED = 10_000  # the diverging playouts the evidence lists by number
DOES_NOT_PROVE = ("equality: a divergence that shows up in fewer than a fraction p of the playouts of every kind, "
                  "or only in states these playouts never reach, may be missed; the legal actions are compared "
                  "as sets (their order is not)")


@dataclasses.dataclass(frozen=True)
class EquivalenceSettings:
    """How hard the check looks.

    Attributes:
      p: the divergence rate (per playout of a kind) the check promises to detect.
      delta: the largest probability of missing a divergence of rate ``p``.
      kinds: the playout kinds, each played ``playouts_for(p, delta)`` times (``KINDS``).
      simulations: MCTS simulations per move of an ``mcts`` playout (one rollout per leaf).
      max_steps: the most actions of one playout (a longer one is compared up to here).
      seed: the first seed; playout ``i`` of a kind uses ``seed + k * 1,000,003 + i``, ``k`` the kind's
        index in ``KINDS``.
      limits: each child's limits (CPU seconds for the whole job, the per-call budget, memory).
      playouts_per_child: the reference's playouts played in one child, each child under ``limits`` (0: all
        of them in one child); a slow model's playouts split over several children so each child's CPU
        limit covers its share. The playouts and their seeds are the same either way.
      playout_states: for a twin with its own ``playout`` (``cwm.contract.PLAYOUT``), the states of each
        reference playout (evenly spaced, first and last among them) its playout is checked from
        (``cwm.sandbox.playout_check``).
      playout_runs: the seeded rollouts from each such state (the full length, and cut off after a few moves).
    """

    p: float = 0.05
    delta: float = 0.01
    kinds: tuple[str, ...] = KINDS
    simulations: int = 50
    max_steps: int = 10_000
    seed: int = 0
    limits: Limits = Limits(wall_s=60.0, cpu_s=600.0, memory_mb=2048, per_call_s=2.0)
    playouts_per_child: int = 0
    playout_states: int = 4
    playout_runs: int = 3

    def __post_init__(self) -> None:
        playouts_for(self.p, self.delta)  # the bound's own checks
        if type(self.playouts_per_child) is not int or self.playouts_per_child < 0:
            raise UsageError(f"EquivalenceSettings.playouts_per_child must be an int >= 0, got {self.playouts_per_child!r}")
        if not self.kinds or any(k not in KINDS for k in self.kinds) or len(set(self.kinds)) != len(self.kinds):
            raise UsageError(f"EquivalenceSettings.kinds must be distinct kinds among {list(KINDS)}, got {self.kinds!r}")
        for name in ("simulations", "max_steps", "playout_states", "playout_runs"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise UsageError(f"EquivalenceSettings.{name} must be an int >= 1, got {value!r}")

    @property
    def playouts(self) -> int:
        """Playouts of each kind: ``playouts_for(p, delta)``."""
        return playouts_for(self.p, self.delta)


def playouts_for(p: float, delta: float) -> int:
    """The zero-failure sample size: the fewest independent playouts ``N`` such that a divergence present in
    a fraction ``>= p`` of playouts is missed by all ``N`` with probability ``(1 - p) ** N <= delta``,
    ``N = ceil(ln delta / ln(1 - p))``.

    Raises:
      UsageError: ``p`` or ``delta`` outside (0, 1).
    """
    for name, value in (("p", p), ("delta", delta)):
        if type(value) not in (int, float) or not 0 < value < 1:
            raise UsageError(f"the detection bound's {name} must be a number in (0, 1), got {value!r}")
    n = math.ceil(math.log(delta) / math.log1p(-p))
    while n > 1 and (1 - p) ** (n - 1) <= delta:  # guard the ceiling against rounding in the logarithms
        n -= 1
    return max(n, 1)


DEFAULT_EQUIVALENCE = EquivalenceSettings()  # the check's defaults: p = 0.05, delta = 0.01 (90 playouts a kind)


def fingerprint(source: str) -> str:
    """The sha256 of a module's source (its UTF-8 bytes), as the evidence and a bundle's manifest name it."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def specs(settings: EquivalenceSettings) -> list[dict[str, Any]]:
    """The reference's playout specs, every kind's in turn (``cwm.sandbox.jobs.twin``)."""
    out: list[dict[str, Any]] = []
    for kind in settings.kinds:
        first = settings.seed + KINDS.index(kind) * _SEED_STRIDE
        for i in range(settings.playouts):
            spec: dict[str, Any] = {"kind": kind, "seed": first + i}
            if kind == "mcts":
                spec["simulations"] = settings.simulations
            out.append(spec)
    return out


@dataclasses.dataclass(frozen=True)
class Divergence:
    """Where the twin first disagrees with the reference: playout ``playout`` (its index in ``specs``),
    state ``step`` (actions taken so far), ``field`` (``termination``, ``current_player``, ``legal_actions``,
    ``chance_outcomes``, ``rewards``, ``observations`` (of ``player``) or ``error``: the twin broke its contract
    or could not follow the reference's actions)."""

    playout: int
    step: int
    field: str
    player: int | None = None


def compare(reference: list[dict[str, Any]], twin: list[dict[str, Any]]) -> list[Divergence | None]:
    """The first divergence of each playout (``None``: none), the two records read as ``trace`` writes them.
    A playout the reference itself broke is compared up to where it broke."""
    return [_first(i, r, t) for i, (r, t) in enumerate(zip(reference, twin))]


def _first(i: int, ref: dict[str, Any], twin: dict[str, Any]) -> Divergence | None:
    for k, expected in enumerate(ref["states"]):
        if k >= len(twin["states"]):
            return Divergence(i, len(twin["actions"]), "error")
        found = _field(expected, twin["states"][k])
        if found is not None:
            return Divergence(i, k, *found)
    if twin["error"] is not None and ref["error"] is None:
        return Divergence(i, len(twin["actions"]), "error")
    return None


def _field(expected: dict[str, Any], got: dict[str, Any], tolerance: float = TOLERANCE,
           relative: bool = False) -> tuple[str, int | None] | None:
    """The first field in which two state records differ, and the player for an observation. Numbers (chance
    probabilities, rewards) agree within ``tolerance`` (``relative``: times the larger of 1 and their size, for
    float32); observations are compared only where both records hold them (a JAX twin's are compared through
    its decoder)."""
    if (expected["player"] == TERMINAL) != (got["player"] == TERMINAL):
        return "termination", None
    if expected["player"] != got["player"]:
        return "current_player", None
    if expected["legal"] != got["legal"]:
        return "legal_actions", None
    if not _same_chance(expected["chance"], got["chance"], tolerance):
        return "chance_outcomes", None
    if not _close(expected["rewards"], got["rewards"], tolerance, relative):
        return "rewards", None
    if "observations" not in got:
        return None
    return _observations(expected["observations"], got["observations"])


def _observations(expected: list[Any], got: list[Any]) -> tuple[str, int | None] | None:
    """The first player whose observation differs (``("observations", player)``), or ``None``."""
    for player, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return "observations", player
    if len(expected) != len(got):
        return "observations", min(len(expected), len(got))
    return None


def _same_chance(a: list[list[Any]] | None, b: list[list[Any]] | None, tolerance: float = TOLERANCE) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x[0] == y[0] for x, y in zip(a, b)) and _close([x[1] for x in a],
                                                                                    [y[1] for y in b], tolerance)


def _close(a: list[float], b: list[float], tolerance: float = TOLERANCE, relative: bool = False) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= (tolerance * max(1.0, abs(x)) if relative else tolerance)
                                    for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------------
# Running the check


def check_equivalence(reference: str, twin: str, *, settings: EquivalenceSettings = DEFAULT_EQUIVALENCE,
                      sandbox: Sandbox | None = None, name: str = "model", memo: Memo | None = None) -> dict[str, JSON]:
    """Plays the differential playouts and returns the evidence record (JSON; ``evidence_problem`` reads it).

    Args:
      reference: the checked world model's source (untrusted: run in a sandbox child).
      twin: the candidate twin's source (untrusted: run in another child).
      settings: the detection bound, the playout kinds and the limits.
      sandbox: the sandbox to run both children in (default: a fresh one, closed at the end).
      name: the model's name in error messages.
      memo: the reference's records of earlier checks of the same model (``Memo``), reused and added to.

    Returns:
      the evidence: ``verdict`` (``equivalent``, ``divergent``, ``refused``: the twin could not be run or
      wrote a malformed record, ``inconclusive``: the reference could not be played), a one-line ``reason``,
      the bound, each kind's playouts, seeds and states compared, both sources' sha256, and for a divergence
      its first diverging state (history, field, expected and got, and ``report``: the failure rendered as
      synthesis renders a failed check).

    Randomness: every playout is seeded from ``settings.seed``; the same sources and settings give the same
    evidence.
    """
    box = sandbox or Sandbox(limits=settings.limits)
    try:
        return _check(box, (reference, twin), settings, name, memo)
    finally:
        if sandbox is None:
            box.close()


def _check(box: Sandbox, sources: tuple[str, str], settings: EquivalenceSettings, name: str,
           memo: Memo | None) -> dict[str, JSON]:
    reference, twin = sources
    record = _skeleton(reference, twin, settings)
    plays = specs(settings)
    ref_trace = reference_playouts(box, reference, plays, settings, name, memo=memo)
    if isinstance(ref_trace, str):
        return _verdict(record, "inconclusive", f"the reference could not be played: {ref_trace}")
    replays = [{"kind": "replay", "actions": p["actions"]} for p in ref_trace]
    twin_run = box.run(TRACE_JOB, twin, {"name": "twin", "playouts": replays, "max_steps": settings.max_steps},
                       limits=settings.limits)
    twin_trace = _parsed(twin_run, len(plays))
    if isinstance(twin_trace, str):
        return _verdict(record, "refused", f"the twin could not be run: {twin_trace}")
    found = compare(ref_trace, twin_trace)
    _count(record, plays, ref_trace, found)
    first = next((d for d in found if d is not None), None)
    if first is not None:
        record["divergence"] = _divergence(box, (reference, twin), replays[first.playout], plays[first.playout],
                                           first, settings, (ref_trace, twin_trace))
        where = record["divergence"]
        return _verdict(record, "divergent", f"playout {first.playout + 1} ({where['kind']}, seed {where['seed']}), "
                                             f"step {first.step}: {where['summary']}")
    broken = next((i for i, p in enumerate(ref_trace) if p["error"] is not None), None)
    if broken is not None:
        return _verdict(record, "inconclusive", f"the reference broke its contract in playout {broken + 1}: "
                                                f"{ref_trace[broken]['error']}")
    failed = _playout_verdict(box, (reference, twin), settings, record, (plays, ref_trace))
    if failed is not None:
        return failed
    kinds = " + ".join(f"{settings.playouts} {k}" for k in settings.kinds)
    fused = "" if record["playout"] is None else f", and its playout agrees exactly in {record['playout']['runs']} rollouts"
    return _verdict(record, "equivalent", f"no divergence in {kinds} playouts ({record['steps_compared']} states){fused}; "
                                          f"a divergence in >= {settings.p:g} of the playouts of a kind is missed "
                                          f"with probability <= {settings.delta:g}")


PLAYOUT_RULE = ("the twin's playout(state, returns, rand, limit), one call with random.Random(seed).random, against cwm "
                "stepping the checked model with random.Random(seed) (planners.rollout.playout): equal returns "
                "(exactly), the same next draw after it, both over or both cut off, a cut-off state equal to the "
                "model's in every compared field and, as JSON, to the state cwm reaches by stepping the twin")


def _playout_verdict(box: Sandbox, sources: tuple[str, str], settings: EquivalenceSettings, record: dict[str, Any],
                     traces: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, JSON] | None:
    """Checks the twin's own ``playout`` (``cwm.sandbox.playout_check``) where the loaded twin binds a callable
    one, and records it (``record["playout"]``, left ``None`` where it binds none); the verdict when it fails,
    else ``None``."""
    plays, ref_trace = traces
    rollouts = playout_plan(ref_trace, states=settings.playout_states, runs=settings.playout_runs,
                            max_steps=settings.max_steps, seed=settings.seed)
    fused = check_playout(box, sources, rollouts, settings.limits, (_field, _state_problem))
    if fused["verdict"] == "none":
        return None
    record["playout"] = {"checked": True, "rule": PLAYOUT_RULE, "verdict": fused["verdict"], "runs": fused["runs"],
                         "states": fused["states"], "states_per_playout": settings.playout_states,
                         "runs_per_state": settings.playout_runs}
    if fused["verdict"] == "equivalent":
        return None
    d = fused["divergence"]
    if fused["verdict"] != "divergent" or type(d) is not dict:
        return _verdict(record, str(fused["verdict"]), str(fused["reason"]))
    kind = plays[int(d["playout"]) - 1]["kind"]
    record["divergence"] = d
    record["diverging_playouts"] = 1
    record["diverging_by_kind"][kind] += 1
    record["diverging"] = [d["playout"]]
    return _verdict(record, "divergent", f"playout {d['playout']} ({kind}, seed {plays[int(d['playout']) - 1]['seed']}), "
                                         f"step {d['step']}: a rollout by playout (seed {d['seed']}, limit {d['limit']}): "
                                         f"{d['summary']}")


def reference_playouts(box: Sandbox, reference: str, plays: list[dict[str, Any]], settings: EquivalenceSettings,
                       name: str, codec: JSON = None, memo: Memo | None = None) -> list[dict[str, Any]] | str:
    """The reference's playout records (``TRACE_JOB``), ``settings.playouts_per_child`` playouts a child (all in
    one child at 0), each child under ``settings.limits``; or why they could not be had (one line, naming the
    playouts of the child that failed when there are several). ``codec`` (``ActionCodec.to_json``): actions
    and outcomes recorded by the names of their ids (``cwm.sandbox.jobs.twin``), for a JAX twin's check.
    ``memo``: records played before for the same reference, playouts, settings and codec are copied from it,
    and new ones kept in it as a copy (``Memo``)."""
    if memo is None:
        return _reference_records(box, reference, plays, settings, name, codec)
    key = hashlib.sha256(value_rules.dumps([fingerprint(reference), plays, name, codec, settings.max_steps,
                                            settings.playouts_per_child, repr(settings.limits)]
                                           ).encode()).hexdigest()
    if key in memo:
        return copy.deepcopy(memo[key])  # the kept records stay as played, whatever a caller does with these
    records = _reference_records(box, reference, plays, settings, name, codec)
    if not isinstance(records, str):
        memo[key] = copy.deepcopy(records)
    return records


def _reference_records(box: Sandbox, reference: str, plays: list[dict[str, Any]], settings: EquivalenceSettings,
                       name: str, codec: JSON) -> list[dict[str, Any]] | str:
    size = settings.playouts_per_child or max(len(plays), 1)
    records: list[dict[str, Any]] = []
    for start in range(0, len(plays), size):
        chunk = plays[start:start + size]
        run = box.run(TRACE_JOB, reference, {"name": name, "playouts": chunk, "max_steps": settings.max_steps,
                                             "codec": codec}, limits=settings.limits)
        parsed = _parsed(run, len(chunk))
        if isinstance(parsed, str):
            return parsed if size >= len(plays) else f"playouts {start + 1}-{start + len(chunk)}: {parsed}"
        records.extend(parsed)
    return records


def _skeleton(reference: str, twin: str, settings: EquivalenceSettings) -> dict[str, JSON]:
    """The evidence record before any playout: the bound, the kinds, both fingerprints (a JAX twin's check
    adds its ``target`` and its own tolerance)."""
    n = settings.playouts
    return {
        "format": EVIDENCE_FORMAT, "version": EVIDENCE_VERSION,
        "reference_sha256": fingerprint(reference), "twin_sha256": fingerprint(twin),
        "bound": {"rule": "zero-failure bound: N = ceil(ln(delta) / ln(1 - p)) playouts of each kind",
                  "p": settings.p, "delta": settings.delta, "playouts_per_kind": n,
                  "miss_probability_at_p": (1 - settings.p) ** n},
        "kinds": {k: {"playouts": n, "states": 0, "first_seed": settings.seed + KINDS.index(k) * _SEED_STRIDE,
                      **({"simulations": settings.simulations} if k == "mcts" else {})} for k in settings.kinds},
        "max_steps": settings.max_steps, "tolerance": TOLERANCE, "steps_compared": 0, "diverging_playouts": 0,
        "diverging_by_kind": {k: 0 for k in settings.kinds}, "diverging": [],
        "verdict": None, "reason": None, "divergence": None, "does_not_prove": DOES_NOT_PROVE, "playout": None,
    }


def _verdict(record: dict[str, JSON], verdict: str, reason: str) -> dict[str, JSON]:
    record["verdict"] = verdict
    record["reason"] = clean(reason, limit=_REASON_CHARS)  # one line: clean() escapes every line break
    return record


def _count(record: dict[str, Any], plays: list[dict[str, Any]], ref: list[dict[str, Any]],
           found: list[Divergence | None]) -> None:
    """The states compared (each playout up to its first divergence) per kind, and the diverging playouts."""
    for spec, playout, divergence in zip(plays, ref, found):
        states = len(playout["states"]) if divergence is None else divergence.step + 1
        record["kinds"][spec["kind"]]["states"] += states
        record["steps_compared"] += states
    record["diverging_playouts"] = sum(d is not None for d in found)
    record["diverging_by_kind"] = {k: sum(d is not None for s, d in zip(plays, found) if s["kind"] == k)
                                   for k in record["kinds"]}
    record["diverging"] = [i + 1 for i, d in enumerate(found) if d is not None][:_LISTED]


def _parsed(result: JobResult, count: int) -> list[dict[str, Any]] | str:
    """A child's playout records, checked for shape (the child ran untrusted code: its answer is data), or
    why they cannot be used (one line)."""
    if not result.ok:
        return f"{result.kind}: {result.error}"
    value = result.value
    if type(value) is not list or len(value) != count:
        return f"error: the playout record is malformed (expected {count} playouts)"
    for i, playout in enumerate(value):
        problem = _playout_problem(playout)
        if problem:
            return f"error: the record of playout {i + 1} is malformed ({problem})"
    return value


def _playout_problem(playout: Any) -> str:
    if type(playout) is not dict or set(playout) != {"actions", "states", "error"}:
        return "not a playout"
    actions, states, error = playout["actions"], playout["states"], playout["error"]
    if type(actions) is not list or any(type(a) is not str for a in actions):
        return "actions"
    if error is not None and type(error) is not str:
        return "error"
    # every state reached is recorded; one fewer only where the model broke while answering at the last one
    if type(states) is not list or not len(actions) + (error is None) <= len(states) <= len(actions) + 1:
        return "states"
    return next((p for p in map(_state_problem, states) if p), "")


def _state_problem(state: Any) -> str:
    if type(state) is not dict or set(state) != {"player", "legal", "chance", "rewards", "observations"}:
        return "a state record"
    field = values_problem(state)
    if field:
        return _WHAT[field]
    if type(state["observations"]) is not list or any(type(o) is not str for o in state["observations"]):
        return "observations"
    return ""


_WHAT = {"player": "a player or legal set", "legal": "a player or legal set", "chance": "a chance distribution",
         "rewards": "rewards"}


def values_problem(state: dict[str, Any]) -> str:
    """The first of a state record's ``player``, ``legal``, ``chance`` and ``rewards`` fields that is not what a
    child must write there (``""``: none): an int; None or a str; None or a list of [str, number] pairs; a list
    of numbers. Records written by the Python and the JAX twin children share these fields."""
    if type(state["player"]) is not int:
        return "player"
    if state["legal"] is not None and type(state["legal"]) is not str:
        return "legal"
    chance = state["chance"]
    if chance is not None and (type(chance) is not list or any(
            type(c) is not list or len(c) != 2 or type(c[0]) is not str or type(c[1]) not in (int, float)
            for c in chance)):
        return "chance"
    if type(state["rewards"]) is not list or any(type(r) not in (int, float) for r in state["rewards"]):
        return "rewards"
    return ""


# ---------------------------------------------------------------------------------------------------
# The first divergence, reported

CALLS = {"termination": "get_current_player(state)", "current_player": "get_current_player(state)",
         "legal_actions": "get_legal_actions(state)", "chance_outcomes": "get_chance_outcomes(state)",
         "rewards": "get_rewards(state) (the move that led here)", "observations": "get_observations(state)",
         "error": "the twin's playout"}
_TEST_TYPE = {"error": "transition"}  # the check type (``cwm.types.TEST_TYPES``) a failure report names
_VALUE = {"termination": "player", "current_player": "player", "legal_actions": "legal",
          "chance_outcomes": "chance", "rewards": "rewards", "observations": "observations"}


def _divergence(box: Sandbox, sources: tuple[str, str], replay: dict[str, Any], spec: dict[str, Any],
                first: Divergence, settings: EquivalenceSettings,
                traces: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, JSON]:
    """The first diverging state of a playout as a record: the reference's and the twin's values there
    (replayed once more in each child, whole) and the failure rendered as synthesis renders a failed check."""
    history = traces[0][first.playout]["actions"][:first.step]
    expected: JSON = None
    got: JSON = None
    if first.field == "error":
        why = traces[1][first.playout]["error"] or "the twin's playout ended before the reference's"
        lines = [f"the twin broke its contract: {why}"]
    else:
        expected, got = (_value_at(box, source, replay, first, settings) for source in sources)
        lines = _explain(first.field, expected, got)
    call = CALLS[first.field] if first.player is None else f"get_observations(state)[{first.player}]"
    failure = CheckFailure(_TEST_TYPE.get(first.field, first.field), first.playout, first.step, call, expected, got,
                           "\n".join(lines), history=tuple(history), breach=first.field == "error")
    return {"playout": first.playout + 1, "kind": spec["kind"], "seed": spec["seed"], "step": first.step,
            "field": first.field, "player": first.player, "history": list(failure.history),
            "expected": failure.expected, "got": failure.got, "summary": clean(lines[0], limit=_REASON_CHARS),
            "test_type": failure.test_type, "call": failure.call, "diff": failure.diff,
            "report": failure.render(full=True)}


def divergence_failure(evidence: dict[str, Any]) -> CheckFailure | None:
    """The first divergence of an evidence record as the failed check it renders as (``None``: none), for a
    refinement prompt (``cwm.synthesis.fast_target``)."""
    d = evidence.get("divergence")
    if type(d) is not dict:
        return None
    return CheckFailure(str(d["test_type"]), int(d["playout"]) - 1, int(d["step"]), str(d["call"]), d["expected"],
                        d["got"], str(d["diff"]), history=tuple(str(h) for h in d["history"]),
                        breach=d["field"] == "error")


# ---------------------------------------------------------------------------------------------------
# The model's own profile


def profile_model(source: str, *, playouts: int = 1000, cpu_s: float = 1.0, seed: int = 0, max_steps: int = 10_000,
                  sandbox: Sandbox | None = None, limits: Limits = EquivalenceSettings.limits) -> dict[str, Any] | str:
    """The CPU profile of a model's contract functions over seeded random playouts (up to ``playouts``, until
    the child has used ``cpu_s`` CPU seconds), played in a sandbox child (``cwm.sandbox.jobs.twin.profile``):
    ``{"calls": {function: n}, "cpu_s": {function: s}, "library": {"freeze_s": s, "frozen": n}, "playouts": n,
    "states": n}`` (``library``: the library making the states ``apply_action`` returned read-only), or why it
    could not be had (one line). The times are CPU seconds measured in the child: they vary from run to run."""
    box = sandbox or Sandbox(limits=limits)
    try:
        run = box.run(PROFILE_JOB, source, {"name": "model", "playouts": playouts, "cpu_s": cpu_s, "seed": seed,
                                            "max_steps": max_steps}, limits=limits)
    finally:
        if sandbox is None:
            box.close()
    if not run.ok:
        return clean(f"{run.kind}: {run.error}", limit=_REASON_CHARS)
    value = run.value
    names = {f.name for f in WORLD_MODEL_API}
    if (type(value) is not dict or type(value.get("calls")) is not dict or type(value.get("cpu_s")) is not dict
            or not set(value["calls"]) <= names or not set(value["cpu_s"]) <= names or type(value.get("states")) is not int
            or type(value.get("playouts")) is not int
            or any(type(n) is not int for n in value["calls"].values())
            or any(type(t) not in (int, float) for t in value["cpu_s"].values())
            or not _library_ok(value.get("library"))):
        return "error: the profile is malformed"
    if value.get("error") is not None:
        return clean(f"error: the model broke its contract while profiled: {value['error']}", limit=_REASON_CHARS)
    return value


def _library_ok(library: Any) -> bool:
    """Whether a profile's ``library`` entry is well formed (absent in profiles recorded before it was measured)."""
    return library is None or (type(library) is dict and set(library) == {"freeze_s", "frozen"}
                               and type(library["freeze_s"]) in (int, float) and type(library["frozen"]) is int)


def _value_at(box: Sandbox, source: str, replay: dict[str, Any], first: Divergence,
              settings: EquivalenceSettings) -> JSON:
    """One model's value of the diverging field at the diverging state (``None`` when it cannot be had)."""
    run = box.run(TRACE_JOB, source, {"name": "model", "playouts": [replay], "max_steps": settings.max_steps,
                                      "detail": first.step}, limits=settings.limits)
    value = run.value if run.ok else None
    if type(value) is not dict or type(value.get("record")) is not dict:
        return None
    got = value["record"].get(_VALUE[first.field])
    if first.field == "observations" and type(got) is list and first.player is not None and first.player < len(got):
        return got[first.player]  # type: ignore[no-any-return]
    return got  # type: ignore[no-any-return]


def _explain(field: str, expected: JSON, got: JSON) -> list[str]:
    """A short readable difference (the first line is the reason's summary)."""
    if field == "legal_actions" and type(expected) is list and type(got) is list:
        missing = [a for a in expected if a not in got]
        extra = [a for a in got if a not in expected]
        return [f"the legal actions differ: the twin misses {value_rules.describe(missing, 150)} and adds "
                f"{value_rules.describe(extra, 150)}"]
    if field == "termination":
        return [f"the game is {'over' if expected == TERMINAL else 'not over'} for the reference, "
                f"{'over' if got == TERMINAL else 'not over'} for the twin (current player {expected} vs {got})"]
    with contextlib.suppress(value_rules.ValueBreach):  # diff compares canonical values (1.0 and 1 are one number)
        expected, got = value_rules.canonical(expected), value_rules.canonical(got)
    lines = diff(expected, got, path=field)
    return [f"{field.replace('_', ' ')} differ: " + ("; ".join(lines[:2]) or "the values differ")] + lines[2:]


# ---------------------------------------------------------------------------------------------------
# Reading evidence back


MIN_BOUND = {"p": 0.2, "delta": 0.05}  # the weakest detection bound a bundle's evidence may state


def evidence_problem(evidence: Any, reference: str, twin: str, *, target: str = "python") -> str | None:
    """Why ``evidence`` does not vouch for ``twin`` as a twin of ``reference`` (one line), or ``None``: it
    must be an evidence record of this format whose verdict is ``equivalent``, whose fingerprints name the
    exact bytes of both sources, and whose bound is at least ``MIN_BOUND`` with the playouts it states
    (``playouts_for``) and some states compared. The record is the author's word that the check ran: this
    checks its form, not that it ran (a bundle's loader also checks the twin on the stored trajectories).
    ``target``: the kind of twin the record must be about (``python``, whose records name no target, or
    ``jax``: ``cwm.sandbox.jax_equivalence``)."""
    if type(evidence) is not dict:
        return "the evidence is not a JSON object"
    if evidence.get("format") != EVIDENCE_FORMAT or evidence.get("version") != EVIDENCE_VERSION:
        return f"the evidence is not a {EVIDENCE_FORMAT} record of version {EVIDENCE_VERSION}"
    if evidence.get("target", "python") != target:
        return (f"the evidence is about a {value_rules.describe(evidence.get('target', 'python'), 20)} twin, not a "
                f"{target} twin")
    if evidence.get("verdict") != "equivalent":
        return f"the evidence's verdict is {value_rules.describe(evidence.get('verdict'), 40)}, not 'equivalent'"
    for field, source, what in (("reference_sha256", reference, "the model"), ("twin_sha256", twin, "the twin")):
        if evidence.get(field) != fingerprint(source):
            return f"the evidence's {field} does not match {what}'s bytes (sha256 {fingerprint(source)[:16]}...)"
    if target == "python" and evidence.get("playout") is not None and not playout_checked(evidence):
        return "the evidence's record of the twin's playout is not a passing check of it"
    return _bound_problem(evidence)


def playout_checked(evidence: dict[str, Any] | None) -> bool:
    """Whether a twin's evidence records a passing check of the twin's own ``playout``: the only ground on which
    a planner may let that playout play its rollouts (without it, the twin is stepped and its playout, if the
    module has one, is never called)."""
    fused = evidence.get("playout") if type(evidence) is dict else None
    return type(fused) is dict and fused.get("verdict") == "equivalent" and type(fused.get("runs")) is int \
        and fused["runs"] >= 1


def _bound_problem(evidence: dict[str, Any]) -> str | None:
    """Why the evidence's bound is too weak or inconsistent (one line), or ``None``."""
    bound = evidence.get("bound")
    p = bound.get("p") if type(bound) is dict else None
    delta = bound.get("delta") if type(bound) is dict else None
    n = bound.get("playouts_per_kind") if type(bound) is dict else None
    if type(p) is not float or type(delta) is not float or not (0 < p <= MIN_BOUND["p"] and 0 < delta <= MIN_BOUND["delta"]):
        return (f"the evidence's bound (p {value_rules.describe(p, 20)}, delta {value_rules.describe(delta, 20)}) is "
                f"weaker than p <= {MIN_BOUND['p']}, delta <= {MIN_BOUND['delta']}")
    if type(n) is not int or n < playouts_for(p, delta):
        return f"the evidence states {value_rules.describe(n, 20)} playouts of each kind, fewer than its bound needs"
    steps = evidence.get("steps_compared")
    if type(steps) is not int or steps < 1:
        return "the evidence compared no states"
    return None


__all__ = ["CALLS", "DEFAULT_EQUIVALENCE", "PLAYOUT_RULE", "DOES_NOT_PROVE", "EVIDENCE_FORMAT", "EVIDENCE_VERSION", "KINDS", "MIN_BOUND", "TOLERANCE",
           "VERDICTS",
           "Divergence", "EquivalenceSettings", "Memo", "check_equivalence", "compare", "divergence_failure",
           "evidence_problem", "fingerprint", "playout_checked", "playouts_for", "profile_model", "specs"]
