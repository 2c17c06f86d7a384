"""Conversation refinement: one chat; after each reply the failing tests are appended and the LLM fixes
its code (the paper's first strategy).

The chat starts with the initial prompt. After each reply, the best program it held is checked; its
failures (one of each type) are appended as the next user turn (``followup`` template), or, when the
reply held no usable code, a short note saying so (``no_code`` template). Each program's parent in the
recorded tree is the previous turn's best program, so the tree is a chain. Calls are sequential. With
several candidates per call (``RequestSettings.candidates_per_call``), the assistant turn kept in the chat
is the reply holding that best program, so the follow-up's failures are those of the code the chat shows.
"""

from __future__ import annotations

from cwm.llm import Message
from cwm.synthesis.engine import Engine
from cwm.synthesis.render import render_failures
from cwm.synthesis.types import Node


def conversation(engine: Engine) -> None:
    """Runs the conversation on ``engine`` until a program passes every check or the budget is spent."""
    target = engine.target
    messages: list[Message] = [Message("user", target.render("initial"))]
    current: Node | None = None
    try:
        while engine.submitted < engine.budget and not engine.solved:
            engine.submit(tuple(messages), tag=f"{target.tag}/converse", meta=current)
            index, parent, response = engine.next_reply()
            nodes = engine.evaluate(index, response, parent, lambda h, p: False)
            usable = [n for n in nodes if n.source]
            if not usable:
                messages.append(Message("assistant", engine.reply_text(nodes[0])))
                messages.append(Message("user", target.render("no_code", problem=nodes[0].error)))
                continue
            current = max(usable, key=lambda n: (n.pass_rate, -n.id))
            # with several candidates per call, the chat continues from the reply the best program came from
            messages.append(Message("assistant", engine.reply_text(current)))
            report = engine.reports[current.id]
            failures = render_failures(report, target.pick_failures(report))
            messages.append(Message("user", target.render("followup", failures=failures)))
    finally:
        engine.close()


__all__ = ["conversation"]
