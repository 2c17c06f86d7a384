"""Agent spec strings: their grammar, parsed into ``AgentSpec`` (the kinds and names of
``cwm.agents.specs``, whose docstring gives the grammar); nothing here builds an agent."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence

from cwm.types import CwmError

KINDS = ("random", "gt-mcts", "gt-ismcts", "gt-mcts-py", "gt-ismcts-py", "cwm", "cwm-selected", "llm", "llm+legal",
         "ppo")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")  # what NAME= may be: never a path, a key separator or a comma


class AgentSpecError(CwmError, ValueError):
    """An agent spec that does not parse, or names something that cannot be built."""



@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """A parsed agent spec: its kind, its argument (a path or a client spec) and its optional display name."""

    kind: str
    target: str = ""
    name: str = ""

    @property
    def bare(self) -> str:
        """The spec without its name: what builds the agent (``cwm:PATH``)."""
        return f"{self.kind}:{self.target}" if self.target else self.kind

    @property
    def label(self) -> str:
        """The agent's name in results: its NAME, else the bare spec as typed."""
        return self.name or self.bare

    def __str__(self) -> str:
        return f"{self.name}={self.bare}" if self.name else self.bare


def parse_agent_spec(text: str) -> AgentSpec:
    """Parses one spec string, ``[NAME=]KIND[:TARGET]`` (see the module docstring).

    Raises:
      AgentSpecError: an unknown kind (``human`` among them: a person plays with ``cwm play``), a missing or
        unexpected argument, or a malformed name.
    """
    typed = text = text.strip()
    head, eq, rest = text.partition("=")
    name = ""
    if eq and ":" not in head:  # a "=" after the first ":" is part of a path or client spec
        name, text = head.strip(), rest.strip()
        _check_name(name, text, typed)
        if "=" in text.partition(":")[0]:
            raise AgentSpecError(f"agent spec {typed!r}: more than one NAME= (an agent has one name)")
    kind, _, target = text.partition(":")
    if kind == "human":  # a person needs a terminal; a tournament's matches run in worker processes
        raise AgentSpecError(f"agent spec {typed!r}: a person plays with `cwm play GAME --against SPEC` (a "
                             f"terminal game, saved like an arena match), not as an agent of a tournament")
    if kind not in KINDS:
        near = difflib.get_close_matches(kind, KINDS, n=1)
        meant = f" (did you mean {near[0]}?)" if near else ""
        raise AgentSpecError(f"agent spec {typed!r}: unknown kind {kind!r}{meant}; expected one of "
                             f"{', '.join(KINDS)}{colon_hint(typed)}")
    needs_target = kind in ("cwm", "cwm-selected", "llm", "llm+legal", "ppo")
    if needs_target and not target:
        raise AgentSpecError(f"agent spec {typed!r}: {kind} needs an argument ({kind}:PATH or {kind}:CLIENT)")
    if not needs_target and target:
        raise AgentSpecError(f"agent spec {typed!r}: {kind} takes no argument")
    if name in KINDS and name != kind:
        raise AgentSpecError(f"agent spec {typed!r}: the name {name!r} is another kind of agent's; "
                             f"choose a name that says what this agent is")
    return AgentSpec(kind, target, name)


def colon_hint(typed: str) -> str:
    """A hint when the text before ``=`` would be a name but for a ``:`` (``my:bot=cwm:x.py``), which made it
    read as a kind and its argument; nothing for a ``=`` inside a path (``cwm:runs/a=b/model.py``)."""
    head, eq, _ = typed.partition("=")
    return " (a NAME= may not contain ':')" if eq and ":" in head and NAME.fullmatch(head.replace(":", "")) else ""


def _check_name(name: str, spec: str, typed: str) -> None:
    if not NAME.fullmatch(name):
        raise AgentSpecError(f"agent spec {typed!r}: the name {name!r} is not a letter followed by "
                             f"letters, digits, '_', '.', '+' or '-' (paths, ':', '|', '#' and spaces are not names)")
    if not spec:
        raise AgentSpecError(f"agent spec {typed!r}: the name needs a spec after '=' (e.g. {name}=cwm:PATH)")


def parse_agent_specs(text: str) -> list[AgentSpec]:
    """Parses a comma-separated list of specs (``random,gt-mcts,mine=cwm:model.py``); labels must be distinct."""
    specs = [parse_agent_spec(part) for part in text.split(",") if part.strip()]
    check_labels(specs)
    return specs


def check_labels(specs: Sequence[AgentSpec]) -> None:
    """Checks that no two agents share a label (their results would merge).

    Raises:
      AgentSpecError: a label given twice, with the specs that carry it.
    """
    seen: dict[str, AgentSpec] = {}
    for spec in specs:
        if spec.label in seen:
            raise AgentSpecError(f"the label {spec.label!r} is given twice ({seen[spec.label]} and {spec}); "
                                 f"agents' labels must be distinct (give one another NAME=)")
        seen[spec.label] = spec
