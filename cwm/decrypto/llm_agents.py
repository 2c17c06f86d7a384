"""LLM players of the three roles, through any ``cwm.llm.Client``.

Each agent keeps one conversation per game: the system prompt holds the rules and the role
(``prompts/decrypto/system_<role>.md``), each turn adds the game so far and the role's private view. The
answer is read after the reply's last ``ANSWER:`` marker (:mod:`cwm.decrypto.parse`). An unreadable or
illegal answer gets a retry prompt saying why, at most ``max_retries`` times; then the **default move** is
played: the hints ``pass | pass | pass`` for Alice (the first of ``pass``, ``skip``, ``nothing`` that
contains no keyword), the code ``1-2-3`` for Bob and Eve. Every attempt is logged as an
:class:`~cwm.decrypto.types.Attempt`, the default included.

Theory-of-mind probes (:mod:`cwm.decrypto.metrics`) are asked on a branch of the conversation: their questions
and answers never enter the game's own context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import prompts
from cwm.decrypto import parse
from cwm.decrypto.engine import hint_problem
from cwm.decrypto.prompting import numbered, quoted, retry_prompt, system_prompt, turn_prompt
from cwm.decrypto.types import Attempt, Code, View
from cwm.llm import Client, Message, Request

DEFAULT_GUESS: Code = (1, 2, 3)
DEFAULT_HINT_WORDS = ("pass", "skip", "nothing")


def default_hints(keywords: Sequence[str]) -> tuple[str, str, str]:
    """Alice's default move: three copies of the first default word that contains no keyword."""
    word = next((w for w in DEFAULT_HINT_WORDS if not hint_problem(w, keywords)), "-")
    return word, word, word


class LLMAgent:
    """Plays one Decrypto role by asking an LLM.

    Args:
      client: any ``cwm.llm.Client``.
      role: ``alice``, ``bob`` or ``eve``.
      name: the label in results (default ``llm:<client model>``).
      temperature: sampling temperature of play (default 0.6, as in the published benchmark).
      probe_temperature: temperature of the theory-of-mind questions (default 0.0, likewise).
      max_retries: retry prompts after an unusable answer before the default move (default 2).
      max_output_tokens: cap on each reply.
      seed: base of the request seeds (turn number added), for providers that take one.

    Attributes:
      attempts: the attempts logged since the last :meth:`take_attempts`.
    """

    def __init__(self, client: Client, role: str, *, name: str | None = None, temperature: float = 0.6,
                 probe_temperature: float = 0.0, max_retries: int = 2, max_output_tokens: int = 4096,
                 seed: int | None = None) -> None:
        if role not in ("alice", "bob", "eve"):
            raise ValueError(f"role must be alice, bob or eve, got {role!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.client, self.role = client, role
        self.name = name or f"llm:{client.model}"
        self.temperature, self.probe_temperature = temperature, probe_temperature
        self.max_retries, self.max_output_tokens = max_retries, max_output_tokens
        self.seed = seed
        self.system = system_prompt(role)
        self.conversation: list[Message] = []
        self.attempts: list[Attempt] = []

    def reset(self, seed: int | None = None) -> None:
        """Starts a new game: an empty conversation, and ``seed`` as the base of request seeds."""
        self.conversation = []
        if seed is not None:
            self.seed = seed

    def take_attempts(self) -> list[Attempt]:
        """The attempts logged since the last call (and forgets them)."""
        taken, self.attempts = self.attempts, []
        return taken

    # -- moves
    def hints(self, view: View) -> tuple[str, ...]:
        value = self._ask(turn_prompt(view), "hints", parse.hints_reader(view.keywords), view.turn)
        return value if value is not None else self._default(view.turn, "hints", default_hints(view.keywords))

    def guess(self, view: View) -> Code:
        value = self._ask(turn_prompt(view), "guess", parse.read_code, view.turn)
        return value if value is not None else self._default(view.turn, "guess", DEFAULT_GUESS)

    # -- probes (a branch: nothing enters the game's conversation)
    def predict_eve(self, view: View, hints: Sequence[str]) -> Code | None:
        """Alice's prediction of Eve's guess for ``hints``, asked right after she gave them."""
        return self._ask(_render("predict_eve", hints=quoted(hints)), "predict_eve", parse.read_code, view.turn,
                         branch=True)

    def keyword_belief(self, view: View, task: str, keywords: Sequence[str]) -> tuple[str, ...] | None:
        """Eve's answer to one keyword question (``keywords_now``, ``keywords_before``, ``keywords_other``);
        the last two reveal ``keywords`` inside the branch."""
        fields = {} if task == "keywords_now" else {"keywords": numbered(keywords)}
        context = [Message("user", turn_prompt(view))] if view.hints else []
        return self._ask(_render(task, **fields), task, parse.read_keywords, view.turn, branch=True,
                         context=context)

    # -- the conversation
    def _ask(self, prompt: str, task: str, reader: parse.Reader, turn: int, *, branch: bool = False,
             context: Sequence[Message] = ()) -> Any:
        messages = [*self.conversation, *context, Message("user", prompt)]
        value = None
        for attempt in range(self.max_retries + 1):
            reply = self.client.complete(self._request(messages, task, turn, attempt, branch)).text
            value, outcome, why = parse.read_reply(reply, reader)
            self.attempts.append(Attempt(self.role, turn, task, attempt, reply, outcome, why,
                                         list(value) if value is not None else None))
            messages.append(Message("assistant", reply))
            if value is not None:
                break
            if attempt < self.max_retries:
                messages.append(Message("user", retry_prompt(task, why, self.max_retries - attempt)))
        if not branch:
            self.conversation = messages
        return value

    def _request(self, messages: list[Message], task: str, turn: int, attempt: int, branch: bool) -> Request:
        return Request(messages=tuple(messages), system=self.system,
                       temperature=self.probe_temperature if branch else self.temperature,
                       max_output_tokens=self.max_output_tokens,
                       seed=None if self.seed is None else self.seed * 100 + turn,
                       sample_index=attempt, tag=f"decrypto/{self.role}/{task}")

    def _default(self, turn: int, task: str, move: Any) -> Any:
        self.attempts.append(Attempt(self.role, turn, task, self.max_retries + 1, "", "default",
                                     f"no usable answer in {self.max_retries + 1} attempts", list(move)))
        return move


def _render(task: str, **fields: Any) -> str:
    return prompts.render(f"decrypto/{task}.md", **fields)
