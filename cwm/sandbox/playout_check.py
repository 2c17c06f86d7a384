"""The exact check of a twin's own playout loop (``cwm.contract.PLAYOUT``), part of the differential equivalence
check (``cwm.sandbox.equivalence``).

At states the reference's playouts reached (random and MCTS-guided alike: a few evenly spaced states of each),
several seeded rollouts are played twice, each in its own sandbox child (``cwm.sandbox.jobs.twin.playouts``):
by cwm stepping the checked model with ``random.Random(seed)`` (``planners.rollout.playout``, what a planner
on the model plays), and by one call of the twin's ``playout`` with the same seed's draws. Their returns must
be equal exactly (not within a tolerance), the draw after each rollout must be the same number (so both drew
as many), both must end the game or both be cut off by the limit, and a state cut off must agree with the
reference's on every field the check compares and equal, as JSON, the state cwm reaches by stepping the twin
itself. Limits vary per rollout (the full length and small cut-offs). The first difference is the candidate's
divergence, reported to the LLM as a failed check. The check runs on every twin: its child answers whether the
loaded module binds a callable ``playout`` (verdict ``none`` when it does not), so no way of binding the name
escapes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cwm.sandbox.box import Sandbox
from cwm.sandbox.verdicts import PLAYOUTS_JOB, JobResult, Limits
from cwm.text import clean
from cwm.types import JSON, CheckFailure

_SEED_BASE = 7_000_003  # the rollouts' seeds start here, past the playouts' own (settings.seed added)
_REASON_CHARS = 400
CALL = "playout(state, returns, rand, limit)"


def plan(ref_trace: list[dict[str, Any]], *, states: int, runs: int, max_steps: int, seed: int) -> list[dict[str, Any]]:
    """The rollouts to play: per reference playout, up to ``states`` evenly spaced states (its first and last
    among them), ``runs`` seeded rollouts each; the first of a state's runs goes up to ``max_steps`` moves,
    the others are cut off after a few (1 to 3, and 2 to 10)."""
    out = []
    for i, playout in enumerate(ref_trace):
        count = min(len(playout["states"]), len(playout["actions"]) + 1)  # the states reached
        steps = sorted({round(j * (count - 1) / max(states - 1, 1)) for j in range(min(states, count))})
        at = []
        for j, step in enumerate(steps):
            limits = (max_steps, 1 + (i + j) % 3, 2 + (7 * i + j) % 9)
            first = seed + _SEED_BASE + (i * states + j) * runs
            at.append([step, [[first + r, limits[r % 3]] for r in range(runs)]])
        out.append({"actions": playout["actions"][:steps[-1]] if steps else [], "at": at})
    return out


def check_playout(box: Sandbox, sources: tuple[str, str], rollouts: list[dict[str, Any]], limits: Limits,
                  records: tuple[Callable[[Any, Any], Any], Callable[[Any], str]]) -> dict[str, JSON]:
    """Plays ``rollouts`` (``plan``) in the reference and in the twin and compares them.

    Args:
      box: the sandbox both children run in.
      sources: the reference's and the twin's source.
      rollouts: the plan.
      limits: each child's limits.
      records: the equivalence check's comparison of two state records (``None`` when they agree) and its
        check of one record's shape (``""`` when well formed).

    Returns:
      ``{"verdict": "equivalent" | "divergent" | "refused" | "inconclusive" | "none" (the loaded twin binds no
      callable ``playout``: nothing to check), "reason": one line, "runs": n,
      "states": n, "divergence": the first difference as the equivalence check records one, or None}``.
    """
    reference, twin = sources
    same_state, problem_of = records
    # the twin first: whether it binds a playout is decided by the loaded module, not by its source
    got = _parsed(box.run(PLAYOUTS_JOB, twin, {"name": "twin", "role": "twin", "playouts": rollouts}, limits=limits),
                  rollouts, problem_of)
    if isinstance(got, str):
        return _outcome("refused", f"the twin's playout could not be run: {got}")
    if got is None:
        return _outcome("none", "the twin binds no playout function")
    ref = _parsed(box.run(PLAYOUTS_JOB, reference, {"name": "model", "role": "reference", "playouts": rollouts},
                          limits=limits), rollouts, problem_of)
    if isinstance(ref, str):
        return _outcome("inconclusive", f"the reference's rollouts could not be played: {ref}")
    if ref is None:
        return _outcome("inconclusive", "the reference's rollouts were not played")
    runs, states = sum(len(r) for r in ref), sum(len(p["at"]) for p in rollouts)
    found = _first_difference(rollouts, ref, got, same_state)
    if found is not None:
        return _outcome("divergent", str(found["summary"]), runs, states, found)
    broken = next((r["error"] for p in ref for r in p if r["error"] is not None), None)
    if broken is not None:
        return _outcome("inconclusive", f"the reference broke its contract in a rollout: {broken}", runs, states)
    return _outcome("equivalent", f"{runs} rollouts from {states} states agree exactly with stepping the checked "
                                  f"model", runs, states)


def _first_difference(rollouts: list[dict[str, Any]], ref: list[list[dict[str, Any]]],
                      got: list[list[dict[str, Any]]], same_state: Callable[[Any, Any], Any]) -> dict[str, JSON] | None:
    """The divergence record of the first rollout in which the twin differs (one the reference could play)."""
    for i, spec in enumerate(rollouts):
        k = 0
        for step, seeds in spec["at"]:
            for seed, limit in seeds:
                problem = _difference(ref[i][k], got[i][k], same_state)
                if problem is not None and ref[i][k]["error"] is None:
                    where = {"playout": i, "step": step, "seed": seed, "limit": limit,
                             "history": spec["actions"][:step]}
                    return _failure(where, problem, ref[i][k], got[i][k])
                k += 1
    return None


def _outcome(verdict: str, reason: str, runs: int = 0, states: int = 0,
             divergence: dict[str, JSON] | None = None) -> dict[str, JSON]:
    return {"verdict": verdict, "reason": clean(reason, limit=_REASON_CHARS), "runs": runs, "states": states,
            "divergence": divergence}


def _difference(ref: dict[str, Any], got: dict[str, Any],
                same_state: Callable[[dict[str, Any], dict[str, Any]], Any]) -> tuple[str, str] | None:
    """How the twin's rollout differs from the reference's (a one-line summary and its field), or ``None``."""
    if got["error"] is not None:
        return f"the twin's playout broke its contract: {got['error']}", "error"
    if got["returns"] != ref["returns"]:
        return (f"the returns differ: stepping the checked model gives {ref['returns']}, playout gave "
                f"{got['returns']}", "returns")
    if (ref["end"] is None) != (got["end"] is None):
        over = "over" if ref["end"] is None else "cut off by the limit"
        return f"the game is {over} at the end of stepping the checked model, not at the end of playout", "end"
    if got["next"] != ref["next"]:
        return ("playout drew a different number of random numbers than stepping the checked model (the next "
                "draw after it differs)", "draws")
    if ref["end"] is not None and same_state(ref["end"], got["end"]) is not None:
        field = same_state(ref["end"], got["end"])[0]
        return f"the state playout was cut off at differs from the checked model's ({field.replace('_', ' ')})", "end"
    if not got["same"]:
        return ("the state playout was cut off at is not the state your apply_action reaches by the same moves "
                "(they differ as JSON)", "end")
    return None


def _failure(where: dict[str, Any], problem: tuple[str, str], ref: dict[str, Any],
             got: dict[str, Any]) -> dict[str, JSON]:
    """The divergence record of a rollout that differs, with the failure rendered as synthesis renders one."""
    summary, field = problem
    expected: JSON = {"returns": ref["returns"], "game_over": ref["end"] is None}
    shown: JSON = None if got["error"] is not None else {"returns": got["returns"], "game_over": got["end"] is None}
    call = f"{CALL} with rand = random.Random({where['seed']}).random, limit = {where['limit']}"
    failure = CheckFailure("playout", where["playout"], where["step"], call, expected, shown, summary,
                           history=tuple(where["history"]), breach=field == "error")
    return {"playout": where["playout"] + 1, "kind": "playout", "seed": where["seed"], "step": where["step"],
            "field": "error" if failure.breach else "playout", "player": None, "history": list(failure.history), "expected": failure.expected,
            "got": failure.got, "summary": clean(summary, limit=_REASON_CHARS), "test_type": failure.test_type,
            "call": failure.call, "diff": failure.diff, "report": failure.render(full=True), "limit": where["limit"]}


def _parsed(result: JobResult, rollouts: list[dict[str, Any]],
            problem_of: Callable[[Any], str]) -> list[list[dict[str, Any]]] | str | None:
    """A child's runs, checked for shape (the child ran untrusted code: its answer is data); ``None`` when the
    twin binds no playout; or why they cannot be used (one line)."""
    if not result.ok:
        return f"{result.kind}: {result.error}"
    value = result.value
    if type(value) is not dict or type(value.get("playout")) is not bool or type(value.get("runs")) is not list:
        return "error: the rollout record is malformed"
    if not value["playout"]:
        return None
    runs = value["runs"]
    if len(runs) != len(rollouts) or any(type(r) is not list or len(r) != sum(len(s) for _, s in spec["at"])
                                         for r, spec in zip(runs, rollouts)):
        return "error: the rollout record is malformed (wrong number of rollouts)"
    if any(_run_problem(run) or (run["end"] is not None and problem_of(run["end"])) for playout in runs
           for run in playout):
        return "error: the rollout record is malformed (a rollout)"
    return runs


def _run_problem(run: Any) -> bool:
    if type(run) is not dict or set(run) != {"returns", "next", "end", "same", "error"}:
        return True
    if type(run["returns"]) is not list or any(type(x) not in (int, float) for x in run["returns"]):
        return True
    if type(run["next"]) is not float or type(run["same"]) is not bool:
        return True
    if run["error"] is not None and type(run["error"]) is not str:
        return True
    return run["end"] is not None and type(run["end"]) is not dict


__all__ = ["CALL", "check_playout", "plan"]
