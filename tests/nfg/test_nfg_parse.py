"""The reply parser on messy replies: extra words, brackets, markdown, percentages, hedges, near-miss labels."""

from __future__ import annotations

import pytest

from cwm.nfg.answers import AnswerKey, choice_key, label_key
from cwm.nfg.parse import parse_distribution, parse_names, parse_reply, parse_sequence

COLOURS = ["red", "blue", "green"]
LABELS = ["altruistic", "selfish", "conditionally-altruistic", "tit-for-tat", "ambiguous"]

CHOICES = [
    ("because-clause", "I would choose red because blue gives me less.", {"red"}),
    ("answer-line", "Blue pays 2, red pays 3.\nAnswer: red", {"red"}),
    ("brackets", "Answer: [blue]", {"blue"}),
    ("bold", "After comparing, **green** is the best reply.", {"green"}),
    ("marker-then-bold-next-line", "Final answer:\n\n**blue**", {"blue"}),
    ("reasoning-then-pick", "Blue gives 2 and red gives 3, so I'd pick red.", {"red"}),
    ("over", "I'd go with blue over red.", {"blue"}),
    ("rather-than", "Red, rather than blue.", {"red"}),
    ("tie-listed", "Answer: red, blue", {"red", "blue"}),
    ("tie-or", "Answer: red or blue (they tie)", {"red", "blue"}),
    ("case-and-punctuation", "ANSWER: Green.", {"green"}),
    ("not-clause", "Answer: red, not blue", {"red"}),
    ("best-response-is", "The best response is green since it beats both.", {"green"}),
    ("quoted", "Answer: `red`", {"red"}),
    ("parenthesised", "Answer: (blue)", {"blue"}),
    ("curly-apostrophe", "Green loses to both. I\u2019d pick red.", {"red"}),
    ("my-choice-is", "My choice is blue, since red is dominated.", {"blue"}),
    ("opponent-clause-after", "I would choose blue, because the opponent plays red.", {"blue"}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CHOICES], ids=[c[0] for c in CHOICES])
def test_choice_replies(text: str, expected: set[str]) -> None:
    assert parse_names(text, COLOURS) == frozenset(expected)


UNPARSEABLE = [
    ("no-action", "I am not sure what to do here."),
    ("prefix-of-a-word", "Answer: reddish"),
    ("only-compared", "Red gives 3 and blue gives 2, and green gives 1."),
    ("empty-answer", "Answer:"),
]


@pytest.mark.parametrize("text", [c[1] for c in UNPARSEABLE], ids=[c[0] for c in UNPARSEABLE])
def test_replies_without_an_answer_are_unparseable(text: str) -> None:
    assert parse_names(text, COLOURS) is None


def test_conditionally_altruistic_does_not_match_altruistic() -> None:
    key = label_key(["altruistic", "selfish"], ["altruistic"])
    parsed = parse_reply("Answer: conditionally-altruistic", key)
    assert parsed is None  # neither label: a hyphenated compound is one word
    assert not key.accepts(parsed)
    assert key.accepts(parse_reply("Answer: altruistic", key))


@pytest.mark.parametrize(("text", "expected"), [
    ("Answer: conditionally-altruistic", {"conditionally-altruistic"}),
    ("The partner is tit for tat.", {"tit-for-tat"}),
    ("Answer: TIT-FOR-TAT", {"tit-for-tat"}),
    ("Answer: not selfish, altruistic", {"altruistic"}),
    ("It looks random at first, but the partner is selfish.", {"selfish"}),
    ("Answer: ambiguous", {"ambiguous"}),
], ids=["compound-label", "spaces-for-hyphens", "upper-case", "negated-label-dropped", "decision-phrase", "ambiguous"])
def test_label_replies(text: str, expected: set[str]) -> None:
    assert parse_names(text, LABELS, labels=True) == frozenset(expected)


def test_a_hedged_label_is_parsed_but_never_correct() -> None:
    key = label_key(LABELS, ["tit-for-tat"])
    parsed = parse_reply("Answer: tit-for-tat or selfish", key)
    assert parsed is not None and parsed.value == frozenset({"tit-for-tat", "selfish"})
    assert not key.accepts(parsed)


DISTRIBUTIONS = [
    ("named-percent", "Answer: red: 35%, blue: 40%, green 25%", (0.35, 0.40, 0.25)),
    ("bracketed-list", "Answer: (0.2, 0.3, 0.5)", (0.2, 0.3, 0.5)),
    ("square-brackets-no-marker", "My estimate is [0.2, 0.3, 0.5] in the order listed.", (0.2, 0.3, 0.5)),
    ("fractions-before-names", "Answer: 7/20 red, 9/20 blue, 4/20 green", (0.35, 0.45, 0.2)),
    ("probability-notation", "I estimate P(red) = 0.5, P(blue)=0.5, P(green) = 0", (0.5, 0.5, 0.0)),
    ("percent-without-sign", "Answer: 35, 40, 25", (0.35, 0.40, 0.25)),
    ("pure-choice", "Answer: blue", (0.0, 1.0, 0.0)),
    ("omitted-zero", "Answer: red 0.6, blue 0.4", (0.6, 0.4, 0.0)),
    ("percent-on", "Answer: 50% on red and 50% on green", (0.5, 0.0, 0.5)),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in DISTRIBUTIONS], ids=[c[0] for c in DISTRIBUTIONS])
def test_distribution_replies(text: str, expected: tuple[float, ...]) -> None:
    parsed = parse_distribution(text, COLOURS)
    assert parsed is not None
    assert parsed.value == pytest.approx(expected)


def test_counts_in_reasoning_are_not_an_answer() -> None:
    assert parse_distribution("Over 20 rounds red appeared 7 times and blue 13 times.", ["red", "blue"]) is None


def test_numeric_action_names_are_not_confused_with_probabilities() -> None:
    parsed = parse_distribution("Answer: 1: 0.35, 2: 0.65", ["1", "2"])
    assert parsed is not None and parsed.value == pytest.approx((0.35, 0.65))
    assert parse_names("I choose 2 because 1 gives only 0.5 points", ["1", "2"]) == frozenset({"2"})


def test_project_names_accept_the_distinguishing_word() -> None:
    names = ["project green", "project blue"]
    assert parse_names("Answer: green", names) == frozenset({"project green"})
    parsed = parse_distribution("Answer: project green 30%, project blue 70%", names)
    assert parsed is not None and parsed.value == pytest.approx((0.3, 0.7))


RB, NUMS = ["red", "blue"], ["1", "3"]
SEQUENCES = [
    ("comma-line", "Answer: red, blue, blue, red. This is tit-for-tat.", RB, ("red", "blue", "blue", "red")),
    ("rounds", "Round 1: red\nRound 2: blue\nRound 3: red\nSo that's it.", RB, ("red", "blue", "red")),
    ("numbered-list", "Answer:\n1. red\n2. blue\n3. red\n\nI copied the partner.", RB, ("red", "blue", "red")),
    ("rounds-with-words", "In round 1 I pick red; round 2, I pick blue because they picked blue.", RB, ("red", "blue")),
    # an explanation after the answer line never changes the answer
    ("explanation-mentions-round-1", "Answer: 3, 1, 1, 3, 3, 3, 3\nExplanation: round 1 opens with 3, then I copy Dev",
     NUMS, ("3", "1", "1", "3", "3", "3", "3")),
    ("explanation-mentions-a-move", "Answer: 3, 1, 1, 3, 3, 3, 3\nThe opening is 3 and then I mirror Dev",
     NUMS, ("3", "1", "1", "3", "3", "3", "3")),
    ("em-dash-matching-clause", "Answer: 3, 1, 1, 3, 3, 3, 3 \u2014 matching Dev's 1, 1, 3, 3",
     NUMS, ("3", "1", "1", "3", "3", "3", "3")),
    ("matching-clause", "Answer: red, blue, blue matching their red, blue", RB, ("red", "blue", "blue")),
    ("numbered-list-of-numbers", "Answer:\n1. 3\n2. 1\n3. 1\n\nRound 1 is 3 because I open with it.",
     NUMS, ("3", "1", "1")),
    ("rounds-under-the-marker-line", "Answer: Round 1: red\nRound 2: blue\nRound 3: blue\n\nRound 4 would be red.",
     RB, ("red", "blue", "blue")),
]


@pytest.mark.parametrize(("text", "vocabulary", "expected"), [c[1:] for c in SEQUENCES], ids=[c[0] for c in SEQUENCES])
def test_sequence_replies(text: str, vocabulary: list[str], expected: tuple[str, ...]) -> None:
    parsed = parse_sequence(text, vocabulary)
    assert parsed is not None and parsed.value == expected


def test_choice_key_accepts_any_subset_of_tied_best_responses() -> None:
    key = choice_key(COLOURS, ["red", "blue"])
    assert key.accepts(parse_reply("Answer: blue", key))
    assert key.accepts(parse_reply("Answer: red, blue", key))
    assert not key.accepts(parse_reply("Answer: red, green", key))


def test_distribution_tolerance() -> None:
    key = AnswerKey.from_json({"kind": "distribution", "vocabulary": ["red", "blue"], "accepted": [["1/3", "2/3"]]})
    assert key.accepts(parse_reply("Answer: red 0.33, blue 0.67", key))
    assert key.accepts(parse_reply("Answer: red 33%, blue 67%", key))
    assert not key.accepts(parse_reply("Answer: red 0.4, blue 0.6", key))


@pytest.mark.parametrize("text", ["Answer: green: 0.5, black: 0.5", "green 50%, black 50%",
                                  "Both pay the same.\nFinal answer: 1/2 green, 1/2 black"],
                         ids=["named-probabilities", "percentages-no-marker", "fractions"])
def test_a_mixed_strategy_is_not_a_choice(text: str) -> None:
    key = choice_key(["green", "black", "red"], ["green", "black"])
    parsed = parse_reply(text, key)
    assert parsed is not None and parsed.kind == "distribution"
    assert parsed.value == pytest.approx((0.5, 0.5, 0.0))
    assert not key.accepts(parsed)


@pytest.mark.parametrize(("text", "expected"), [
    ("Answer: green (100%)", {"green"}),
    ("Answer: green, black", {"green", "black"}),
], ids=["pure-with-percent", "tie-listed"])
def test_a_pure_choice_with_numbers_is_still_a_choice(text: str, expected: set[str]) -> None:
    parsed = parse_reply(text, choice_key(["green", "black", "red"], ["green", "black"]))
    assert parsed is not None and parsed.kind == "choice" and parsed.value == frozenset(expected)


VERDICTS = [
    ("dominated-so", "Answer: purple is dominated, so black", ["purple", "black"], False, {"black"}),
    ("not-dominant-x-is", "Answer: purple is not dominant, black is", ["purple", "black"], False, {"black"}),
    ("therefore", "Answer: red is worse than blue for me, therefore blue", COLOURS, False, {"blue"}),
    ("positive-verdict-kept", "Answer: black is best", ["purple", "black"], False, {"black"}),
    ("so-that-is-not-a-conclusion", "Answer: purple, so that black loses", ["purple", "black"], False, {"purple"}),
    ("ambiguous-between", "Answer: ambiguous between grim-trigger and always-defect",
     ["grim-trigger", "always-defect", "ambiguous"], True, {"ambiguous"}),
]


@pytest.mark.parametrize(("text", "vocabulary", "labels", "expected"), [v[1:] for v in VERDICTS],
                         ids=[v[0] for v in VERDICTS])
def test_verdicts_and_conclusions_inside_the_answer(text: str, vocabulary: list[str], labels: bool,
                                                    expected: set[str]) -> None:
    assert parse_names(text, vocabulary, labels=labels) == frozenset(expected)


def test_only_a_negative_verdict_is_unparseable() -> None:
    assert parse_names("Answer: purple is dominated", ["purple", "black"]) is None


@pytest.mark.parametrize("text", ["Answer: 3: 1 of 12, 1: 10 of 12", "Answer: red: 3, blue: 9",
                                  "Answer: red 1.5, blue -0.5"], ids=["counts-of-n", "counts", "out-of-range"])
def test_a_distribution_with_an_entry_outside_0_1_is_unparseable(text: str) -> None:
    vocabulary = ["1", "3"] if text.startswith("Answer: 3") else ["red", "blue"]
    assert parse_distribution(text, vocabulary) is None
