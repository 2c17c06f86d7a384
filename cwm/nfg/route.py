"""The CWM route: the LLM transcribes a task into a small Python module; the sandbox tabulates it; the solver answers.

The module's API is fixed in ``prompts/nfg/cwm/api.md`` (``PLAYERS``, ``ME``, ``ACTIONS``, ``payoff``)
plus the family's data names (``prompts/nfg/cwm/data/<family>.md``); which names, and how their values become
the solver's question, is the family's own (``Family.data_names``, ``Family.question_from_data``). ``cwm.nfg.job.tabulate`` is the
trusted job that runs in the sandbox child: it calls ``payoff`` on every action pair and returns plain JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import prompts
from cwm import sandbox as sandbox_module
from cwm.nfg import families
from cwm.nfg.answers import Reply
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.nfg.job import tabulate
from cwm.nfg.tasks import Task, solve
from cwm.sandbox import load_source
from cwm.sandbox.budget import call_budget
from cwm.types import JSON, CwmError

JOB = "cwm.nfg.job:tabulate"
IN_PROCESS_BUDGET_S = 5.0  # load, then tabulate, each within this many seconds when run in-process
# Each family's data names (``Family.data_names``), by family.
DATA_NAMES: dict[str, tuple[str, ...]] = {name: family.data_names for name, family in families.REGISTRY.items()}


class RouteError(CwmError, ValueError):
    """The transcribed module did not yield a usable game or question; the message says what was wrong."""


def request_text(task: Task) -> tuple[str, str]:
    """The (system, user) prompt asking the LLM to transcribe ``task`` as code."""
    family = families.get(task.family)
    data_api = prompts.render(family.data_prompt, **family.data_prompt_fields)
    user = prompts.render("nfg/cwm/request.md", data_api=data_api.rstrip("\n"), task_text=task.user_text)
    return prompts.render("nfg/cwm/system.md").strip(), user.strip()


def prompt_names(family: str) -> list[str]:
    """The prompt templates the route renders for a family (for run records)."""
    return ["nfg/cwm/system.md", "nfg/cwm/request.md", families.get(family).data_prompt]


def run_job(source: str, payload: JSON, *, sandbox: Any = None, budget_s: float = IN_PROCESS_BUDGET_S) -> JSON:
    """Runs ``tabulate`` on ``source``: in ``sandbox`` (a ``cwm.sandbox.Sandbox``) when given, else in-process
    behind the static gate (the fallback for machines or callers without the sandbox).

    Args:
      source: the LLM's module.
      payload: the job's payload (``{"data": [names]}``).
      sandbox: where to run it; None runs in-process.
      budget_s: in-process only: wall-clock budget (``cwm.sandbox.budget.call_budget``) for loading the module,
        and again for tabulating it (default ``IN_PROCESS_BUDGET_S``). The sandbox applies its own limits.

    Raises:
      RouteError: the code was rejected, failed to load, ran over its budget, or ``tabulate`` failed
        (the reason is kept).
    """
    if sandbox is not None:
        result = sandbox.run(JOB, source, payload)
        if not result.ok:
            raise RouteError(f"sandbox {result.kind}: {result.error}")
        return result.value

    def load_module(text: str) -> Any:
        return load_source(text, name="nfg_game", api=())

    guard = call_budget(budget_s)
    try:
        sandbox_module.static_gate(source)
        module = guard(load_module, source)
        return guard(tabulate, module, payload)
    except Exception as e:  # untrusted code's own failure at load or call time becomes the route's failure
        raise RouteError(f"{type(e).__name__}: {e}") from e


def answer_from_table(task: Task, value: Mapping[str, JSON]) -> Reply:
    """Solves the transcribed game and question, and states the answer in the task's vocabulary.

    Raises:
      RouteError: the transcription is inconsistent (unknown names, bad probabilities) or its answer
        names something the task does not have.
    """
    game, me, question = formal_record(value, task.family)
    try:
        key = solve(task.family, game, me, question)
    except (NfgFormatError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise RouteError(f"the transcribed game does not solve: {e}") from e
    return _in_task_terms(task, key.kind, key.vocabulary, key.accepted)


def formal_record(value: Mapping[str, JSON], family: str) -> tuple[MatrixGame, int, JSON]:
    """The formal game, the viewpoint and the solver's question of a tabulated module (``tabulate``'s output).

    Raises:
      RouteError: the table or the family's data is malformed (unknown names, bad probabilities).
    """
    try:
        game = MatrixGame.from_tables(value["players"], value["actions"],
                                      [[_exact(u0) for u0, _ in row] for row in value["payoffs"]],
                                      [[_exact(u1) for _, u1 in row] for row in value["payoffs"]])
        me = list(value["players"]).index(value["me"])
        return game, me, families.get(family).question_from_data(value["data"])
    except (NfgFormatError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise RouteError(f"the transcribed game does not solve: {e}") from e


def _exact(x: float) -> Fraction:
    return Fraction(str(x)).limit_denominator(10**6)


def _in_task_terms(task: Task, kind: str, vocabulary: tuple[str, ...], accepted: tuple) -> Reply:
    names = {v.lower(): v for v in task.key.vocabulary}

    def rename(name: str) -> str:
        if name.lower() not in names:
            raise RouteError(f"the transcription's answer {name!r} is not one of the task's {list(task.key.vocabulary)}")
        return names[name.lower()]

    if kind in ("choice", "label"):
        return Reply(kind, frozenset(rename(a) for a in accepted))
    if kind == "sequence":
        return Reply(kind, tuple(rename(a) for a in accepted[0]))
    by_name = {rename(n): float(p) for n, p in zip(vocabulary, accepted[0])}
    return Reply(kind, tuple(by_name.get(n, 0.0) for n in task.key.vocabulary))
