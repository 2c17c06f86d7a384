"""Reading answers after the marker: codes, hints, keywords, as tables of replies."""

from __future__ import annotations

import pytest

from cwm.decrypto.parse import (
    after_marker,
    hints_reader,
    lemma,
    normalise_keyword,
    read_code,
    read_keywords,
    read_reply,
    same_keywords,
)

KEYWORDS = ("lion", "piano", "hammer", "apple")

CODE_REPLIES = [
    ("plain", "ANSWER: 3-1-4", (3, 1, 4)),
    ("spaces", "Thinking...\nANSWER: 3 1 4", (3, 1, 4)),
    ("brackets", "ANSWER: [2, 4, 1]", (2, 4, 1)),
    ("run together", "ANSWER: 213", (2, 1, 3)),
    ("bold marker", "**ANSWER:** 4-3-2", (4, 3, 2)),
    ("last marker wins", "ANSWER: 1-2-3\nno wait\nANSWER: 3-2-1", (3, 2, 1)),
    ("lower case", "answer: 1-2-4", (1, 2, 4)),
    ("repeated digit", "ANSWER: 1-1-2", None),
    ("digit out of range", "ANSWER: 1-2-5", None),
    ("two digits", "ANSWER: 1-2", None),
    ("a number", "ANSWER: 12-3-4", None),
    ("no marker", "I guess 1-2-3", None),
    ("marker mid-line is not a marker", "My ANSWER: 1-2-3", None),
]


@pytest.mark.parametrize("name,reply,expected", CODE_REPLIES, ids=[c[0] for c in CODE_REPLIES])
def test_codes(name, reply, expected):
    value, outcome, why = read_reply(reply, read_code)
    assert value == expected
    assert (outcome, why) == ("ok", "") if expected else (outcome in ("unreadable", "invalid") and why)


def test_unreadable_and_invalid_differ():
    assert read_reply("no answer", read_code)[1] == "unreadable"
    assert read_reply("ANSWER: 9-9-9", read_code)[1] == "invalid"
    assert after_marker("ANSWER:   ") is None


HINT_REPLIES = [
    ("pipes", "ANSWER: savanna | melody | anvil", ("savanna", "melody", "anvil")),
    ("commas", "ANSWER: savanna, melody, anvil", ("savanna", "melody", "anvil")),
    ("phrases", "ANSWER: big cat | black and white keys | strike", ("big cat", "black and white keys", "strike")),
    ("quoted", 'ANSWER: "mane" | "keys" | "nail"', ("mane", "keys", "nail")),
    ("two hints", "ANSWER: mane | keys", None),
    ("four hints", "ANSWER: a | b | c | d", None),
    ("names a keyword", "ANSWER: lions | keys | nail", None),
]


@pytest.mark.parametrize("name,reply,expected", HINT_REPLIES, ids=[c[0] for c in HINT_REPLIES])
def test_hints(name, reply, expected):
    value, _, why = read_reply(reply, hints_reader(KEYWORDS))
    assert value == expected
    if expected is None:
        assert why


KEYWORD_REPLIES = [
    ("pipes", "ANSWER: cat | drum | saw | pear", ("cat", "drum", "saw", "pear")),
    ("numbered", "ANSWER: 1. cat, 2. drum, 3. saw, 4. pear", ("cat", "drum", "saw", "pear")),
    ("three", "ANSWER: cat | drum | saw", None),
]


@pytest.mark.parametrize("name,reply,expected", KEYWORD_REPLIES, ids=[c[0] for c in KEYWORD_REPLIES])
def test_keywords(name, reply, expected):
    assert read_reply(reply, read_keywords)[0] == expected


def test_same_keywords_ignores_case_not_order():
    assert same_keywords(["Cat", " drum"], ["cat", "drum"])
    assert not same_keywords(["drum", "cat"], ["cat", "drum"])
    assert not same_keywords(None, ["cat"])


KEYWORD_MATCHES = [  # answer, truth: the same keyword after normalisation
    ("cats", "cat"), ("Cats", "cat"), ("  the  CAT. ", "cat"), ("'cat'", "cat"), ("boxes", "box"),
    ("berries", "berry"), ("potatoes", "potato"), ("knives", "knife"), ("mice", "mouse"), ("buses", "bus"),
    ("glasses", "glass"), ("ice  creams", "ice cream"), ("a tie", "tie"), ("ｃａｔ", "cat"),
]
KEYWORD_MISMATCHES = [  # answer, truth: different keywords
    ("cat", "dog"), ("cats", "cast"), ("glass", "grass"), ("scissor", "scissors"), ("ice", "ice cream"),
    ("catalogue", "cat"), ("mouse", "moose"), ("", "cat"),
]


@pytest.mark.parametrize("answer,truth", KEYWORD_MATCHES, ids=[a.strip() or "blank" for a, _ in KEYWORD_MATCHES])
def test_keyword_answers_match_after_normalisation(answer, truth):
    assert normalise_keyword(answer) == normalise_keyword(truth)
    assert same_keywords([answer, "drum"], [truth, "Drums"])


@pytest.mark.parametrize("answer,truth", KEYWORD_MISMATCHES, ids=[f"{a or 'blank'}-{t}" for a, t in KEYWORD_MISMATCHES])
def test_different_keywords_stay_different(answer, truth):
    assert normalise_keyword(answer) != normalise_keyword(truth)
    assert not same_keywords([answer, "drum"], [truth, "drum"])


def test_a_known_word_ending_in_s_is_kept_and_an_unknown_plural_still_reduces():
    assert lemma("scissors") == "scissors" and lemma("glass") == "glass"  # in the keyword list
    assert lemma("wugs", known=frozenset()) == "wug" and lemma("wug", known=frozenset()) == "wug"
    assert lemma("shoes", known=frozenset({"shoe"})) == "shoe"
