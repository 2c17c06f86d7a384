"""Writing a task's formal game and question as plain-language chat messages (text lives in prompts/nfg/)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import prompts
from cwm.nfg.answers import AnswerKey
from cwm.nfg.game import MatrixGame, NfgFormatError, to_fraction
from cwm.nfg.solver import PARTNER_TYPES
from cwm.types import JSON

STYLES = ("colours", "numbers", "projects")
PROBABILITY_STYLES = ("percent", "fraction")


def _part(name: str, **values: object) -> str:
    return prompts.render(f"nfg/{name}.md", **values).strip()


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
        answer_format=_part(f"formats/{key.kind}", options=", ".join(key.vocabulary)),
    )
    return ({"role": "system", "content": prompts.render("nfg/direct_system.md").strip()},
            {"role": "user", "content": user.strip()})


def setting(game: MatrixGame, me: int, style: str) -> str:
    """The story paragraph: who plays, what each can pick, who "you" are."""
    if style not in STYLES:
        raise NfgFormatError(f"unknown disguise style {style!r}; expected one of {STYLES}")
    a, b = game.players
    return _part(f"settings/{style}", player_a=a, player_b=b, actions_a=", ".join(game.actions[0]),
                 actions_b=", ".join(game.actions[1]), me=game.players[me], opponent=game.players[1 - me])


def payoff_lines(game: MatrixGame) -> str:
    """One line per outcome, in the game's action order."""
    lines = []
    for i, action_a in enumerate(game.actions[0]):
        for j, action_b in enumerate(game.actions[1]):
            u0, u1 = game.payoffs[i][j]
            lines.append(_part("parts/outcome", player_a=game.players[0], player_b=game.players[1],
                               action_a=action_a, action_b=action_b,
                               payoff_a=amount(u0, game.unit), payoff_b=amount(u1, game.unit)))
    return "\n".join(lines)


def amount(value: Fraction, unit: str) -> str:
    """``3 points``, ``-2 points``, ``$3``, ``-$2``."""
    magnitude = abs(value)
    number = str(magnitude.numerator) if magnitude.denominator == 1 else f"{float(magnitude):g}"
    template = "point" if unit == "points" and magnitude == 1 else unit
    return _part(f"parts/{template}", sign="-" if value < 0 else "", magnitude=number)


def probability(p: Fraction, style: str) -> str:
    """``35%`` or ``7/20``."""
    if style == "percent":
        return f"{float(p * 100):g}%"
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def describe_strategy(name: str, roles: Mapping[str, str]) -> str:
    """The plain-language rule of a named repeated-game strategy."""
    return _part(f"strategies/{name}", **_role_fields(name, roles))


def _role_fields(name: str, roles: Mapping[str, str]) -> dict[str, str]:
    needed = prompts.fields(f"nfg/strategies/{name}.md")
    return {k: v for k, v in roles.items() if k in needed}


def question_text(family: str, game: MatrixGame, me: int, question: Mapping[str, JSON], *,
                  probabilities: str = "percent") -> str:
    """The question paragraph of a family, filled from the question's parameters."""
    opponent = game.players[1 - me]
    fields: dict[str, object] = {"opponent": opponent}
    if family == "best_response_pure":
        fields["opponent_action"] = question["opponent_action"]
    elif family == "estimate_mixed":
        history: Sequence[str] = question["opponent_history"]
        fields.update(rounds=len(history), history=", ".join(history), opponent_actions=", ".join(game.actions[1 - me]))
    elif family == "best_response_mixed":
        mix = question["opponent_mix"]
        fields["mix"] = ", ".join(_part("parts/mix_item", action=a, probability=probability(to_fraction(p), probabilities))
                                  for a, p in mix.items())
    elif family == "classify_partner":
        fields.update(_classify_fields(question, opponent))
    elif family == "play_strategy":
        partner: Sequence[str] = question["partner_history"]
        fields.update(rounds=len(partner), history=", ".join(partner),
                      strategy=describe_strategy(question["strategy"], question["roles"]))
    elif family in ("nash", "nash_3x3"):
        fields = {"my_actions": ", ".join(game.actions[me])}
    elif family == "zero_sum_maximin":
        fields["my_actions"] = ", ".join(game.actions[me])
    elif family != "dominant_strategy":
        raise NfgFormatError(f"unknown family {family!r}")
    return prompts.render(f"nfg/questions/{family}.md", **fields).strip()


def _classify_fields(question: Mapping[str, JSON], opponent: str) -> dict[str, object]:
    rounds = [_part("parts/round", round=t, mine=mine, theirs=theirs, opponent=opponent)
              for t, (mine, theirs) in enumerate(question["history"], 1)]
    types = [_part("parts/type_line", label=name, description=describe_strategy(name, question["roles"]))
             for name in PARTNER_TYPES]
    return {"rounds": len(rounds), "history": "\n".join(rounds), "types": "\n".join(types),
            "tremble": probability(to_fraction(question["tremble"]), "fraction")}
