"""The table of answer forms the parser accepts: one row per form, named, over every kind of answer.

A row is (form, kind, vocabulary, reply, expected): ``expected`` is a set of names (choice, label), a tuple of
names (sequence) or a tuple of probabilities in the vocabulary's order (distribution). docs/nfg.md lists the
same forms.
"""

from __future__ import annotations

import pytest

from cwm.nfg.answers import AnswerKey
from cwm.nfg.parse import parse_reply

NUMBERS = ("0", "1", "2")
COLOURS = ("red", "blue", "green")
PROJECTS = ("project green", "project blue", "project red")
LABELS = ("always-cooperate", "always-defect", "tit-for-tat", "grim-trigger", "random", "ambiguous")

FORMS = [
    # distributions
    ("tuple-integers-over-number-names", "distribution", NUMBERS, "Answer: (0, 0.5, 0.5)", (0.0, 0.5, 0.5)),
    ("tuple-pure-over-number-names", "distribution", NUMBERS, "Answer: (1, 0, 0)", (1.0, 0.0, 0.0)),
    ("tuple-no-marker-over-number-names", "distribution", NUMBERS, "So I mix (0, 0.5, 0.5) over 0, 1, 2.",
     (0.0, 0.5, 0.5)),
    ("bare-list-over-number-names", "distribution", NUMBERS, "Answer: 0, 0.5, 0.5", (0.0, 0.5, 0.5)),
    ("space-separated-over-number-names", "distribution", NUMBERS, "Answer: 0 0.5 0.5", (0.0, 0.5, 0.5)),
    ("bracketed-fractions-over-number-names", "distribution", NUMBERS, "Answer: [0, 1/2, 1/2]", (0.0, 0.5, 0.5)),
    ("named-pairs-over-number-names", "distribution", NUMBERS, "Answer: 0: 0, 1: 0.5, 2: 0.5", (0.0, 0.5, 0.5)),
    ("pure-number-name", "distribution", NUMBERS, "Answer: 2", (0.0, 0.0, 1.0)),
    ("tuple-decimals", "distribution", COLOURS, "Answer: (0.3, 0.3, 0.4)", (0.3, 0.3, 0.4)),
    ("leading-dot-decimals", "distribution", COLOURS, "Answer: (.5, .5, 0)", (0.5, 0.5, 0.0)),
    ("fractions-list", "distribution", COLOURS, "Answer: 1/3, 1/3, 1/3", (1 / 3, 1 / 3, 1 / 3)),
    ("percentages-list", "distribution", COLOURS, "Answer: 33%, 33%, 34%", (0.33, 0.33, 0.34)),
    ("percentages-without-sign", "distribution", COLOURS, "Answer: 35, 40, 25", (0.35, 0.40, 0.25)),
    ("mixed-forms-named", "distribution", COLOURS, "Answer: red: 1/3, blue: 33%, green: 0.34", (1 / 3, 0.33, 0.34)),
    ("mixed-forms-tuple", "distribution", COLOURS, "Answer: (0, 1/2, 50%)", (0.0, 0.5, 0.5)),
    ("percent-before-name", "distribution", COLOURS, "Answer: 50% on red and 50% on green", (0.5, 0.0, 0.5)),
    ("probability-notation", "distribution", COLOURS, "P(red) = 0.5, P(blue) = 0.5, P(green) = 0", (0.5, 0.5, 0.0)),
    ("bracketed-named-projects", "distribution", PROJECTS,
     "Answer: [project green: 0.5, project blue: 0.5, project red: 0]", (0.5, 0.5, 0.0)),
    ("short-project-names", "distribution", PROJECTS, "Answer: green 50%, blue 50%", (0.5, 0.5, 0.0)),
    ("pure-strategy-named", "distribution", COLOURS, "Answer: blue", (0.0, 1.0, 0.0)),
    # choices
    ("bracketed-list-of-names", "choice", PROJECTS, "Answer: [project green, project blue]",
     {"project green", "project blue"}),
    ("bracketed-short-name", "choice", PROJECTS, "Answer: [green]", {"project green"}),
    ("bracketed-without-marker", "choice", PROJECTS, "I pick [project blue].", {"project blue"}),
    ("number-name", "choice", NUMBERS, "Answer: 2", {"2"}),
    ("number-names-tied", "choice", NUMBERS, "Answer: 0, 2", {"0", "2"}),
    ("decision-phrase", "choice", COLOURS, "I would choose red because blue pays less.", {"red"}),
    # labels
    ("label-with-spaces", "label", LABELS, "The partner is tit for tat.", {"tit-for-tat"}),
    ("label-bracketed", "label", LABELS, "Answer: [grim-trigger]", {"grim-trigger"}),
    # sequences
    ("bracketed-sequence-of-names", "sequence", PROJECTS, "Answer: [project green, project blue, project green]",
     ("project green", "project blue", "project green")),
    ("tuple-sequence-of-number-names", "sequence", NUMBERS, "Answer: (0, 1, 1)", ("0", "1", "1")),
    ("rounds", "sequence", COLOURS, "Round 1: red\nRound 2: blue", ("red", "blue")),
]


def _key(kind: str, vocabulary: tuple[str, ...]) -> AnswerKey:
    accepted: tuple = (tuple([1] + [0] * (len(vocabulary) - 1)),) if kind == "distribution" else (
        (vocabulary,) if kind == "sequence" else vocabulary[:1])
    return AnswerKey(kind, vocabulary, accepted)


@pytest.mark.parametrize(("kind", "vocabulary", "reply", "expected"), [f[1:] for f in FORMS], ids=[f[0] for f in FORMS])
def test_every_listed_form_parses(kind: str, vocabulary: tuple[str, ...], reply: str, expected: object) -> None:
    parsed = parse_reply(reply, _key(kind, vocabulary))
    assert parsed is not None and parsed.kind == kind, parsed
    if kind == "distribution":
        assert parsed.value == pytest.approx(expected)
    else:
        assert parsed.value == (frozenset(expected) if isinstance(expected, set) else expected)  # type: ignore[arg-type]


def test_the_table_names_each_form_once() -> None:
    names = [f[0] for f in FORMS]
    assert len(names) == len(set(names))
    assert {f[1] for f in FORMS} == {"distribution", "choice", "label", "sequence"}
