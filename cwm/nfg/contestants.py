"""The two contestants (the LLM answering directly; the LLM transcribing the game for the solver) and the eval loop."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cwm.llm import Client, LLMError, Message, Request
from cwm.nfg import families, route
from cwm.nfg.parse import parse_reply
from cwm.nfg.score import ItemResult, judge
from cwm.nfg.tasks import Task
from cwm.sandbox import Sandbox
from cwm.synthesis.extract import CodeExtractionError, extract_code

CONTESTANTS = ("direct", "cwm")


def _request(system: str, user: str, *, temperature: float, max_output_tokens: int, tag: str) -> Request:
    return Request(messages=(Message("user", user),), system=system, temperature=temperature,
                   max_output_tokens=max_output_tokens, tag=tag)


@dataclasses.dataclass
class DirectContestant:
    """The LLM reads the task text and answers; the reply is parsed and scored.

    Attributes:
      client: the LLM.
      temperature: sampling temperature (default 0: one deterministic answer per task).
      max_output_tokens: cap on the reply.
    """

    client: Client
    temperature: float = 0.0
    max_output_tokens: int = 8192
    name: str = "direct"

    def run(self, task: Task) -> ItemResult:
        system = next((m["content"] for m in task.messages if m["role"] == "system"), "")
        request = _request(system, task.user_text, temperature=self.temperature,
                           max_output_tokens=self.max_output_tokens, tag=f"nfg/direct/{task.family}")
        try:
            reply = self.client.complete(request).text
        except LLMError as e:
            return ItemResult(task.id, task.family, self.name, "error", "", None, f"{type(e).__name__}: {e}")
        parsed = parse_reply(reply, task.key)
        return judge(task, self.name, reply, parsed, detail="" if parsed else "no answer found in the reply")


@dataclasses.dataclass
class CwmContestant:
    """The LLM writes the task's game and facts as code (``prompts/nfg/cwm/``); the solver answers.

    Attributes:
      client: the LLM.
      sandbox: a ``cwm.sandbox.Sandbox`` to run the code in (one job at a time: calls are serialised);
        ``None``: one of its own, started at the first item.
      in_process: run the LLM's code in this process behind the static gate instead (``route.run_job``):
        only for code you trust, since nothing else contains it there.
      temperature: sampling temperature (default 0).
      max_output_tokens: cap on the reply.
      budget_s: in-process runs only: the wall-clock budget for loading, and for tabulating, the code
        (default ``route.IN_PROCESS_BUDGET_S``).
    """

    client: Client
    sandbox: Any = None
    in_process: bool = False
    temperature: float = 0.0
    max_output_tokens: int = 8192
    name: str = "cwm"
    budget_s: float = route.IN_PROCESS_BUDGET_S
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def run(self, task: Task) -> ItemResult:
        system, user = route.request_text(task)
        request = _request(system, user, temperature=self.temperature, max_output_tokens=self.max_output_tokens,
                           tag=f"nfg/cwm/{task.family}")
        try:
            reply = self.client.complete(request).text
        except LLMError as e:
            return ItemResult(task.id, task.family, self.name, "error", "", None, f"{type(e).__name__}: {e}")
        try:
            source = extract_code(reply, ["payoff"]).candidates[-1]
            with self._lock:
                if self.sandbox is None and not self.in_process:  # contained unless the caller chose otherwise
                    self.sandbox = Sandbox()
                value = route.run_job(source, {"data": list(families.get(task.family).data_names)},
                                      sandbox=self.sandbox, budget_s=self.budget_s)
            parsed = route.answer_from_table(task, value)
        except (CodeExtractionError, route.RouteError) as e:
            return judge(task, self.name, reply, None, detail=str(e))
        return judge(task, self.name, reply, parsed)


def evaluate(tasks: Sequence[Task], contestants: Sequence[DirectContestant | CwmContestant], *, workers: int = 1,
             on_result: Callable[[ItemResult], None] | None = None,
             skip: Collection[tuple[str, str]] = ()) -> list[ItemResult]:
    """Runs every contestant on every task; results in (contestant, task) order.

    Args:
      tasks: the tasks.
      contestants: who answers.
      workers: concurrent LLM calls (default 1; the client's own concurrency limit still applies).
      on_result: called with each result as it finishes (progress, streaming to disk).
      skip: ``(contestant name, task id)`` pairs not to run (already done in an earlier, interrupted run);
        they are left out of the results.
    """
    jobs = [(c, t) for c in contestants for t in tasks if (c.name, t.id) not in skip]

    def one(job: tuple[Any, Task]) -> ItemResult:
        result = job[0].run(job[1])
        if on_result is not None:
            on_result(result)
        return result

    if workers <= 1:
        return [one(j) for j in jobs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, jobs))
