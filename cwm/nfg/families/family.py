"""``Family``: what the generic nfg modules need to know about one question family, as one frozen record.

``render`` fills the family's question template with ``question_fields``, ``tasks.solve`` asks its ``solve``
for the answer key, ``generator`` draws an item with its ``generate``, and the CWM route (``route``) asks
the LLM's module for its ``data_names`` and reads them back with ``question_from_data``. The helpers below
read those names the way every family does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

from cwm.nfg.answers import KINDS, AnswerKey
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.types import JSON

Built = tuple[MatrixGame, int, JSON]  # a drawn item: the game, which player "you" is, the question's parameters
QuestionFields = Callable[[MatrixGame, int, Mapping[str, JSON], str], dict[str, object]]
Solve = Callable[[MatrixGame, int, Mapping[str, JSON]], AnswerKey]
Generate = Callable[[np.random.Generator, dict[str, JSON]], Built]
FromData = Callable[[Mapping[str, JSON]], JSON]


def no_question(data: Mapping[str, JSON]) -> JSON:
    """The question of a family that has no parameters: ``{}`` (the game alone asks it)."""
    return {}


@dataclasses.dataclass(frozen=True)
class Family:
    """One question family.

    Attributes:
      name: the family's name: task ids, ``--families``, and its prompt files ``prompts/nfg/questions/<name>.md``
        (the question) and ``prompts/nfg/cwm/data/<name>.md`` (the CWM route's data names).
      parse_kind: how a reply is read and scored, one of ``cwm.nfg.answers.KINDS``; ``solve`` returns keys of it.
      question_fields: ``(game, me, question, probabilities) -> fields`` of the question template, where
        ``probabilities`` is the disguise's probability style (``cwm.nfg.render.PROBABILITY_STYLES``).
      solve: ``(game, me, question) -> AnswerKey``, the solver's accepted answers; raises ``KeyError`` for a
        missing question parameter (``cwm.nfg.tasks.solve`` names it) and ``NfgFormatError`` for a bad one.
      generate: ``(rng, disguise) -> (game, me, question)``: draws one item from ``rng`` alone (the disguise
        says how to name players, actions and payoffs).
      data_names: the module-level names the CWM route's module defines for this question.
      question_from_data: the solver's question from those names' values (``{}`` for a parameterless family);
        raises ``KeyError``, ``TypeError`` or ``ValueError`` for a malformed one (the route reports it).
      data_prompt_fields: the fields of ``prompts/nfg/cwm/data/<name>.md``.
    """

    name: str
    parse_kind: str
    question_fields: QuestionFields
    solve: Solve
    generate: Generate
    data_names: tuple[str, ...] = ()
    question_from_data: FromData = no_question
    data_prompt_fields: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.parse_kind not in KINDS:
            raise NfgFormatError(f"family {self.name}: parse kind must be one of {KINDS}, got {self.parse_kind!r}")

    @property
    def question_prompt(self) -> str:
        """The question template's name (for ``prompts.render``)."""
        return f"nfg/questions/{self.name}.md"

    @property
    def data_prompt(self) -> str:
        """The template that lists the CWM route's data names for this family."""
        return f"nfg/cwm/data/{self.name}.md"


def opponent(game: MatrixGame, me: int) -> str:
    """The other player's name, as the question text calls it."""
    return game.players[1 - me]


def action_name(value: JSON) -> str:
    """A transcribed action name as a string (``OPPONENT_ACTION = 3`` names action ``"3"``).

    Raises:
      TypeError: a list, a dict or None.
    """
    if isinstance(value, (list, dict)) or value is None:
        raise TypeError(f"expected an action name, got {value!r}")
    return str(value)


def action_names(value: JSON, where: str) -> list[str]:
    """A transcribed list of action names (``where`` names it in the error).

    Raises:
      TypeError: not a list, or an entry that is not a name.
    """
    if not isinstance(value, list):
        raise TypeError(f"{where} must be a list of action names, got {value!r}")
    return [action_name(v) for v in value]


def roles_from_data(data: Mapping[str, JSON]) -> dict[str, str | None]:
    """``{"cooperate": ..., "defect": ...}`` from a module's ``COOPERATE`` and ``DEFECT`` (None where undefined)."""
    return {role: None if data.get(key) is None else action_name(data[key])
            for role, key in (("cooperate", "COOPERATE"), ("defect", "DEFECT"))}
