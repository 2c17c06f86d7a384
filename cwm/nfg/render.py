"""Writing a task's formal game and question as plain-language chat messages (text lives in prompts/nfg/).

The question paragraph comes from the task's family (``cwm.nfg.families``); the rest is the same for all.
"""

from __future__ import annotations

from collections.abc import Mapping

import prompts
from cwm.nfg import families
from cwm.nfg.answers import AnswerKey
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.nfg.phrases import amount, describe_strategy, part, probability
from cwm.types import JSON

# amount, describe_strategy and probability live in cwm.nfg.phrases (the family modules share them); they
# stay importable from here.
__all__ = ["PROBABILITY_STYLES", "STYLES", "amount", "describe_strategy", "messages", "payoff_lines",
           "probability", "question_text", "setting"]

STYLES = ("colours", "numbers", "projects")
PROBABILITY_STYLES = ("percent", "fraction")


def messages(family: str, game: MatrixGame, me: int, question: Mapping[str, JSON], key: AnswerKey, *,
             disguise: Mapping[str, JSON]) -> tuple[dict[str, str], ...]:
    """The system and user messages of a task.

    Args:
      family: the task family (selects ``prompts/nfg/questions/<family>.md``).
      game: the formal game.
      me: which player "you" is.
      question: the family's parameters.
      key: the answer key (its kind and vocabulary select the answer-format line).
      disguise: ``{"style": one of STYLES, "probabilities": one of PROBABILITY_STYLES}``.
    """
    user = prompts.render(
        "nfg/task.md",
        setting=setting(game, me, str(disguise.get("style", "colours"))),
        payoffs=payoff_lines(game),
        question=question_text(family, game, me, question, probabilities=str(disguise.get("probabilities", "percent"))),
        answer_format=part(f"formats/{key.kind}", options=", ".join(key.vocabulary)),
    )
    return ({"role": "system", "content": prompts.render("nfg/direct_system.md").strip()},
            {"role": "user", "content": user.strip()})


def setting(game: MatrixGame, me: int, style: str) -> str:
    """The story paragraph: who plays, what each can pick, who "you" are."""
    if style not in STYLES:
        raise NfgFormatError(f"unknown disguise style {style!r}; expected one of {STYLES}")
    a, b = game.players
    return part(f"settings/{style}", player_a=a, player_b=b, actions_a=", ".join(game.actions[0]),
                actions_b=", ".join(game.actions[1]), me=game.players[me], opponent=game.players[1 - me])


def payoff_lines(game: MatrixGame) -> str:
    """One line per outcome, in the game's action order."""
    lines = []
    for i, action_a in enumerate(game.actions[0]):
        for j, action_b in enumerate(game.actions[1]):
            u0, u1 = game.payoffs[i][j]
            lines.append(part("parts/outcome", player_a=game.players[0], player_b=game.players[1],
                              action_a=action_a, action_b=action_b,
                              payoff_a=amount(u0, game.unit), payoff_b=amount(u1, game.unit)))
    return "\n".join(lines)


def question_text(family: str, game: MatrixGame, me: int, question: Mapping[str, JSON], *,
                  probabilities: str = "percent") -> str:
    """The question paragraph of a family (``prompts/nfg/questions/<family>.md``), filled by the family's
    ``question_fields`` from the question's parameters.

    Raises:
      NfgFormatError: an unknown family.
    """
    chosen = families.get(family)
    return prompts.render(chosen.question_prompt, **chosen.question_fields(game, me, question, probabilities)).strip()
