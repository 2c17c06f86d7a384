"""What is being synthesised: a prompt set, an API, a checker and a failure picker, passed to one loop.

The refinement loop (``cwm.synthesis.engine``) never mentions world models: it renders the target's
prompts, extracts code defining the target's API, and scores it with the target's checker. A world
model is one target (``world_model_target``); inference and value functions are others.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import prompts
from cwm import model as cwm_model
from cwm import value_rules
from cwm.model import ContractFunction
from cwm.sandbox import ALLOWED_IMPORTS
from cwm.sandbox.checkers import Checker, world_model_checker
from cwm.synthesis import render
from cwm.types import CheckReport, Trajectory


@dataclasses.dataclass(frozen=True)
class PromptSet:
    """Template names (files under ``prompts/``) of one target.

    Attributes:
      system: the system instruction.
      initial: write the program from scratch.
      refine: fix a given program (tree search; a fresh single-turn prompt).
      followup: fix your last program (conversation; appended to the chat).
      no_code: the reply held no usable code (conversation).
    """

    system: str = "synthesis/system.md"
    initial: str = "synthesis/initial.md"
    refine: str = "synthesis/refine.md"
    followup: str = "synthesis/followup.md"
    no_code: str = "synthesis/no_code.md"

    def names(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Target:
    """The thing being synthesised.

    Attributes:
      name: a short name for records ("world_model").
      prompts: its template files.
      api: the functions a complete candidate defines (extraction picks code blocks by these names).
      context: the fixed template fields (rules, API block, value rules, example games, example tests,
        ...); each template takes the ones it names.
      check: scores one candidate source; must never raise for bad candidate code.
      pick_failures: the failures shown in a refinement prompt.
      score: the pass rate ``h`` the tree search uses (default: fraction of checks passed).
      fragments: further templates the context was rendered with (hashed into the run record too).
      wanted: distinct programs passing every check the run looks for before it stops (a value target asks
        for several candidates and keeps refining until it has them); a passing program is never refined.
      tag: what the run's requests are tagged with, before the prompt's kind (``inference/initial``,
        ``joint/refine``): the target as the ledger and the journal name it.
    """

    name: str
    prompts: PromptSet
    api: tuple[ContractFunction, ...]
    context: Mapping[str, str]
    check: Checker
    pick_failures: render.FailurePicker = render.first_failure_per_type
    score: Callable[[CheckReport], float] = dataclasses.field(default=lambda r: r.pass_rate)
    fragments: tuple[str, ...] = ()
    wanted: int = 1
    tag: str = "synthesis"

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.api)

    def render(self, which: str, **dynamic: Any) -> str:
        """Renders template ``which`` (a ``PromptSet`` field) with ``dynamic`` fields plus the context
        fields the template names. The renderer still refuses missing and unused dynamic fields.
        """
        name = getattr(self.prompts, which)
        wanted = prompts.fields(name)
        values = {k: v for k, v in self.context.items() if k in wanted and k not in dynamic}
        return prompts.render(name, **values, **dynamic)

    def prompt_hashes(self) -> dict[str, str]:
        names = [*self.prompts.names().values(), *self.fragments]
        return {name: prompts.prompt_hash(name) for name in names}


# Sections of a rules file written for the project's maintainers, not for a player: how the game's outcomes
# were measured (the file paths, planners and engine functions of this repository). A prompt leaves them out
# (their headings matched without regard to case).
MAINTAINER_SECTIONS: tuple[str, ...] = ("Outcome statistics",)
_LEFT_OUT = frozenset(name.casefold() for name in MAINTAINER_SECTIONS)
# A line that opens or closes a fenced code block (CommonMark: three or more backticks or tildes, indented by
# at most three spaces); a ``#`` line inside one is code (a comment), not a heading.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def prompt_rules(markdown: str) -> str:
    """A rules text as a prompt shows it: without its ``MAINTAINER_SECTIONS`` (each heading of that name, in
    any case, and everything under it, up to the next heading of its level or above; a ``#`` line in a fenced
    code block is not a heading), headings nested under the prompt's (``nest_headings``), outer white space
    stripped."""
    kept: list[str] = []
    skip_level = 0  # the level of the section being left out (0: none)
    fence = ""  # the fence of the code block the line is in ("": none)
    for line in markdown.splitlines(keepends=True):
        opened = _FENCE.match(line)
        heading = None if fence or opened else re.match(r"#{1,6}(?=\s)", line)
        if opened and not fence:
            fence = opened.group(1)
        elif opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                and not line[opened.end():].strip():
            fence = ""  # a closing fence: the same character, at least as many, nothing after it
        # the title is trimmed in Python: a regex that did it backtracked on a long run of spaces
        title = line[heading.end():].strip().rstrip("#").rstrip() if heading else ""
        if heading and skip_level and len(heading.group(0)) <= skip_level:
            skip_level = 0
        if heading and not skip_level and title.casefold() in _LEFT_OUT:
            skip_level = len(heading.group(0))
        if not skip_level:
            kept.append(line)
    return nest_headings("".join(kept).strip())


def nest_headings(markdown: str, *, levels: int = 2) -> str:
    """Markdown with every heading pushed down ``levels`` levels, so a rules file's own headings sit
    under the prompt's section headings instead of competing with them."""
    return re.sub(r"^(#{1,6})(?=\s)", lambda m: "#" * min(6, len(m.group(1)) + levels), markdown, flags=re.MULTILINE)


def world_model_target(
    rules: str,
    train: Sequence[Trajectory],
    *,
    check: Checker | None = None,
    examples_per_type: int = 5,
    max_steps_shown: int | None = None,
    max_example_chars: int | None = render.EXAMPLE_CHARS,
    prompt_set: PromptSet = PromptSet(),
) -> Target:
    """The world-model target: the CWM API of ``cwm.model.WORLD_MODEL_API``, checked on ``train``.

    Args:
      rules: the game's rules text.
      train: open-deck training trajectories (shown in the initial prompt and checked against).
      check: the checker (default: ``world_model_checker(train)``, in-process).
      examples_per_type: example tests of each type shown in the initial prompt (the paper: 5).
      max_steps_shown: cut each example game after this many steps in the prompt (default: all).
      max_example_chars: list whole example games while the listing stays within this many characters
        (``render.listing``; ``None``: every game).
      prompt_set: the templates.

    Raises:
      ValueError: no training trajectories.
    """
    if not train:
        raise ValueError("world-model synthesis needs at least one training trajectory")
    listed = render.listing(train, max_steps=max_steps_shown, max_chars=max_example_chars)
    tests, _ = render.example_tests(train, per_type=examples_per_type, prompt_listing=listed)
    context = {
        "rules": prompt_rules(rules),
        "api": cwm_model.api_block(cwm_model.WORLD_MODEL_API).rstrip(),
        "value_rules": value_rules.rules_text(),
        "allowed_imports": ", ".join(sorted(ALLOWED_IMPORTS)),
        "trajectories": listed.text,
        "tests": tests,
    }
    return Target("world_model", prompt_set, cwm_model.WORLD_MODEL_API, context,
                  check or world_model_checker(train), fragments=(*render.TEMPLATES, "sections/answer_first.md"))


__all__ = ["MAINTAINER_SECTIONS", "Checker", "PromptSet", "Target", "nest_headings", "prompt_rules", "world_model_checker", "world_model_target"]
