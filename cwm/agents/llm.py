"""The direct LLM policy: the LLM reads the rules, example games and its own history, and names a move.

Prompts are the files under ``prompts/policy/``. The answer's last ``ACTION: <move>`` line is the move;
an unreadable or illegal answer gets a rethink prompt, up to ``max_retries`` times, after which the agent
forfeits (``IllegalMoveError``). Every attempt is appended to ``LLMPolicyAgent.log``.
"""

from __future__ import annotations

import collections
import json
import re
from typing import Any

import numpy as np
import pyspiel

import prompts
from cwm import games
from cwm.agents.base import AgentBase, AgentError, IllegalMoveError
from cwm.agents.cwm import HistoryTracker
from cwm.games import trajectories
from cwm.llm import Client, LLMError, Message, PendingBatch, Request, Response, Usage
from cwm.llm.prices import cost_usd
from cwm.types import JSON, UnknownGameError

_ACTION_LINE = re.compile(r"^\s*\**\s*ACTION\s*\**\s*:\s*\**\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_MAX_EVENTS = 40  # history shown to the LLM in imperfect-information games: the latest events


def parse_action(reply: str) -> str | None:
    """The move named by the reply's last ``ACTION: <move>`` line (backticks and quotes stripped), or None."""
    found = _ACTION_LINE.findall(reply)
    if not found:
        return None
    move = found[-1].strip().strip("`'\"*").strip()
    return move or None


class LLMPolicyAgent(AgentBase):
    """Plays by asking an LLM for each move.

    Args:
      client: any ``cwm.llm.Client``.
      game: the real game (its rules text is put in the prompt).
      list_legal: list the legal moves in the prompt (off by default, as in the paper's baseline).
      max_retries: rethink prompts after an unreadable or illegal answer before forfeiting (default 3).
      num_examples: example games (random play, from the ground truth) shown in the prompt (default 2).
      temperature: sampling temperature of every request (default 1.0).
      seed: seeds the example games and the requests.

    Attributes:
      log: one dict per attempt: move index, attempt, the prompt it answered (the move's prompt, or a
        rethink), reply, parsed move, outcome (``legal``/``illegal``/``unreadable``/``llm_error``), token
        usage ``[input, output]``, latency, cost in USD (0 for a cached reply, ``None`` unpriced).
    """

    def __init__(self, client: Client, game: str | games.GameSpec, *, list_legal: bool = False,
                 max_retries: int = 3, num_examples: int = 2, temperature: float = 1.0,
                 seed: int | np.random.Generator | None = None):
        self.client = client
        self.spec = games.resolve(game)
        self.list_legal = list_legal
        self.max_retries = max_retries
        self.temperature = temperature
        self.seed = int(np.random.default_rng(seed).integers(2**31))
        self.num_examples = num_examples
        self._examples: dict[int, str] = {}
        self.log: list[dict[str, JSON]] = []
        self._telemetry: collections.Counter[str] = collections.Counter()
        self._latency_s = 0.0
        self._cost_usd: float | None = 0.0  # None once a call's model has no listed price
        self.reset()

    def reset(self) -> None:
        self._tracker: HistoryTracker | None = None
        self._moves = 0

    def step(self, state: pyspiel.State) -> int:
        player = state.current_player()
        if self._tracker is None or not self._tracker.follows(state, player):
            self._tracker = HistoryTracker(self.spec, player)  # a new game (or seat): start over
        self._tracker.sync(state)
        legal = {state.action_to_string(player, a): int(a) for a in state.legal_actions()}
        messages = [Message("user", self._prompt(player, list(legal)))]
        self._moves += 1
        for attempt in range(self.max_retries + 1):
            reply = self._ask(messages, attempt)
            move = parse_action(reply)
            outcome = "unreadable" if move is None else ("legal" if move in legal else "illegal")
            self.log[-1].update(parsed=move, outcome=outcome)
            if move is not None and move in legal:
                return legal[move]
            remaining = self.max_retries - attempt
            if remaining == 0:
                break
            rethink = (prompts.render("policy/rethink_unreadable.md", remaining=remaining - 1) if move is None
                       else prompts.render("policy/rethink_illegal.md", move=move, remaining=remaining - 1))
            messages += [Message("assistant", reply), Message("user", rethink)]
        last = self.log[-1]
        raise IllegalMoveError(f"LLM policy ({self.client.model}) gave no legal move after {self.max_retries + 1} "
                               f"attempts; last answer was {last['outcome']}: {last['parsed']!r}")

    def _ask(self, messages: list[Message], attempt: int) -> str:
        request = Request(messages=tuple(messages), system=prompts.render("policy/system.md"),
                          temperature=self.temperature, seed=self.seed + self._moves, sample_index=attempt,
                          tag="policy/step")
        try:
            response = self.client.complete(request)
        except PendingBatch:  # not an answer and not a failure: the match waits for the reply (cwm.arena.run)
            raise
        except LLMError as e:
            self.log.append({"move": self._moves, "attempt": attempt, "reply": None, "parsed": None,
                             "outcome": "llm_error", "error": str(e)})
            raise AgentError(f"LLM policy ({self.client.model}): the LLM call failed: {e}") from e
        reply = response.texts[0] if response.texts else ""
        usage = response.usage
        cost = 0.0 if response.cached else cost_usd(response.model, usage, batch=response.batch)
        self.log.append({"move": self._moves, "attempt": attempt, "prompt": messages[-1].text, "reply": reply,
                         "usage": [usage.input_tokens, usage.output_tokens], "thinking_tokens": usage.thinking_tokens,
                         "latency_s": float(response.latency_s), "cost_usd": cost, "cached": response.cached})
        self._count(usage, response, cost)
        return reply

    def _count(self, usage: Usage, response: Response, cost: float | None) -> None:
        """Adds one answered call to this agent's telemetry; like the run's ledger, a cached reply counts as
        ``cached_calls`` and adds no tokens and no cost."""
        t = self._telemetry
        t["llm_calls"] += 1
        self._latency_s += response.latency_s
        if response.cached:
            t["cached_calls"] += 1
            return
        t["input_tokens"] += usage.input_tokens
        t["output_tokens"] += usage.output_tokens
        t["thinking_tokens"] += usage.thinking_tokens
        self._cost_usd = None if cost is None or self._cost_usd is None else self._cost_usd + cost

    def stats(self) -> dict[str, JSON]:
        """The telemetry of this agent's calls: calls (and how many the cache answered), tokens, latency,
        cost in USD (absent when a call's model has no listed price), the answers that were unreadable,
        illegal or an LLM error, and ``moves_asked``: the moves it was asked for (each is one first prompt,
        retries aside)."""
        outcomes = [e.get("outcome") for e in self.log]
        found: dict[str, JSON] = {k: self._telemetry[k] for k in ("llm_calls", "cached_calls", "input_tokens",
                                                                  "output_tokens", "thinking_tokens")}
        found |= {"latency_s": self._latency_s} | ({} if self._cost_usd is None else {"cost_usd": self._cost_usd})
        return found | {kind: outcomes.count(kind) for kind in ("unreadable", "illegal", "llm_error")} | {
            "moves_asked": self._moves}

    # -- prompt -------------------------------------------------------------------------------------
    def _prompt(self, player: int, legal: list[str]) -> str:
        assert self._tracker is not None
        events = self._tracker.events
        legal_block = prompts.render("policy/legal_actions.md", legal=", ".join(legal)) if self.list_legal else ""
        return prompts.render(
            "policy/step.md", game=self.spec.name, rules=_rules(self.spec), examples=self._example_text(player),
            player=player, history=self._history_text(), observation=_dump(events[-1]["observation"]),
            legal_block=legal_block)

    def _history_text(self) -> str:
        assert self._tracker is not None
        if self.spec.perfect_information:
            moves = ", ".join(self._tracker.moves) or _snippet("no_moves")
            return prompts.render("policy/history_perfect.md", moves=moves)
        return prompts.render("policy/history_imperfect.md", events=_events_text(self._tracker.events[:-1]))

    def _example_text(self, player: int) -> str:
        if player not in self._examples:
            trajs = (trajectories.collect(self.spec, self.num_examples, seed=self.seed, open_deck=False)
                     if self.num_examples > 0 else [])
            parts = [_example(self.spec, t, i + 1, player) for i, t in enumerate(trajs)]
            self._examples[player] = "\n".join(parts) if parts else _snippet("no_examples")
        return self._examples[player]


def _example(spec: games.GameSpec, traj: Any, index: int, player: int) -> str:
    if spec.perfect_information:
        return prompts.render("policy/example_perfect.md", index=index, moves=", ".join(traj.action_strings),
                              returns=list(traj.returns))
    closed = trajectories.closed_view(traj, player)
    events = [{"observation": e.observation, "action": e.action} for e in closed.events]
    return prompts.render("policy/example_imperfect.md", index=index, player=player,
                          events=_events_text(events), player_return=closed.player_return)


def _events_text(events: list[dict[str, JSON]]) -> str:
    shown = events[-_MAX_EVENTS:]
    lines = ["..."] if len(events) > len(shown) else []
    for e in shown:
        observation = _dump(e["observation"])
        lines.append(observation if e["action"] is None
                     else _snippet("event_moved", observation=observation, action=e["action"]))
    return "\n".join(lines) or _snippet("no_events")


def _dump(value: JSON) -> str:
    return json.dumps(value, sort_keys=True)


def _rules(spec: games.GameSpec) -> str:
    try:
        return games.rules_text(spec)
    except UnknownGameError:
        return _snippet("no_rules", openspiel=spec.openspiel)


def _snippet(name: str, **values: object) -> str:
    """A one-line piece of a prompt (``prompts/policy/NAME.md``), without the file's final newline."""
    return prompts.render(f"policy/{name}.md", **values).rstrip("\n")
