"""The rules as tables: codes, hints, end conditions, the keyword list and seeded draws."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from cwm.decrypto import (
    ALL_CODES,
    DecryptoError,
    Game,
    Turn,
    end_condition,
    keyword_combinations,
    keyword_list,
)
from cwm.decrypto.engine import code_problem, deal_keywords, draw_code, hint_problem

CODE = (1, 2, 3)
OTHER = (4, 3, 2)
SHAPES = {  # a turn's outcome: (Eve intercepts, Bob misses)
    "ok": (False, False), "int": (True, False), "mis": (False, True), "both": (True, True),
}


def turns(*outcomes: str) -> list[Turn]:
    """Turns with the given outcomes (codes need not be distinct here: end_condition reads outcomes)."""
    out = []
    for n, name in enumerate(outcomes, start=1):
        intercept, miss = SHAPES[name]
        out.append(Turn(n, CODE, ("a", "b", "c"), OTHER if miss else CODE, CODE if intercept else OTHER))
    return out


END_CASES = [
    ("nothing yet", [], None),
    ("seven quiet turns go on", ["ok"] * 7, None),
    ("turn-8 survival", ["ok"] * 8, "survived"),
    ("one token each still survives turn 8", ["int", "mis"] + ["ok"] * 6, "survived"),
    ("second interception", ["int", "ok", "int"], "intercepted"),
    ("second miscommunication", ["mis", "mis"], "miscommunicated"),
    ("second miscommunication on turn 8 beats survival", ["mis"] + ["ok"] * 6 + ["mis"], "miscommunicated"),
    ("second interception on turn 8 beats survival", ["int"] + ["ok"] * 6 + ["int"], "intercepted"),
    ("both tokens reach two on the same turn", ["int", "mis", "both"], "both"),
    ("two double turns", ["both", "both"], "both"),
    ("interception tokens first, then a miss", ["int", "int"], "intercepted"),
]


@pytest.mark.parametrize("name,outcomes,expected", END_CASES, ids=[c[0] for c in END_CASES])
def test_end_conditions(name, outcomes, expected):
    assert end_condition(turns(*outcomes)) == expected


@pytest.mark.parametrize("seed", range(5))
def test_codes_never_repeat_within_a_game(seed):
    rng = np.random.default_rng(seed)
    used = []
    for _ in range(len(ALL_CODES)):
        used.append(draw_code(rng, used))
    assert sorted(used) == sorted(ALL_CODES)
    assert len(ALL_CODES) == 24
    with pytest.raises(DecryptoError, match="every code"):
        draw_code(rng, used)


def test_game_refuses_a_used_code_and_moves_after_the_end():
    game = Game.new(0)
    code = game.next_code()
    game.record(code, ("mane", "roar", "pride"), code, OTHER if code != OTHER else CODE)
    with pytest.raises(DecryptoError, match="already used"):
        game.record(code, ("x", "y", "z"), code, code)
    for _ in range(7):
        c = game.next_code()
        game.record(c, ("x", "y", "z"), c, tuple(reversed(c)))
    assert game.end == "survived" and len(game.turns) == 8
    with pytest.raises(DecryptoError, match="over"):
        game.next_code()


CODE_CASES = [
    ((3, 1, 4), ""), ((1, 1, 2), "distinct"), ((1, 2), "3 digits"), ((1, 2, 5), "one of"),
    ((0, 1, 2), "one of"), ([1, 2, 3], "3 digits"), ((True, 2, 3), "one of"), ("123", "3 digits"),
]


@pytest.mark.parametrize("code,problem", CODE_CASES, ids=[repr(c[0]) for c in CODE_CASES])
def test_code_rules(code, problem):
    found = code_problem(code)
    assert (problem in found and found) if problem else found == ""


HINT_CASES = [
    ("mane", ""), ("big cat", ""), ("lions", "contains the keyword 'lion'"), ("Sea LION", "contains"),
    ("", "non-empty"), ("   ", "non-empty"), ("a" * 41, "at most 40"), ("two\nlines", "one line"),
    ("pineapple", "contains the keyword 'apple'"),
]


@pytest.mark.parametrize("hint,problem", HINT_CASES, ids=[c[0][:12] or "empty" for c in HINT_CASES])
def test_hint_rules(hint, problem):
    found = hint_problem(hint, ("lion", "piano", "hammer", "apple"))
    assert (problem in found) if problem else found == ""


def test_keyword_list_is_large_common_and_clean():
    words = keyword_list()
    assert len(words) >= 680 and len(set(words)) == len(words)
    assert all(w.isalpha() and w.islower() for w in words)
    assert keyword_combinations() == math.comb(len(words), 4) > 8.7e9


def test_keyword_draws_follow_the_seed():
    first = [Game.new(s).keywords for s in range(20)]
    assert first == [Game.new(s).keywords for s in range(20)]
    assert len(set(first)) == 20 and all(len(set(k)) == 4 for k in first)
    assert deal_keywords(np.random.default_rng(1), ["a", "b", "c", "d"]) in {
        tuple(p) for p in itertools.permutations("abcd")}
    with pytest.raises(DecryptoError, match="at least 4"):
        deal_keywords(np.random.default_rng(1), ["a", "b", "a"])


def test_codes_follow_the_game_seed():
    def codes(seed):
        game = Game.new(seed)
        out = []
        for _ in range(8):
            c = game.next_code()
            game.record(c, ("x", "y", "z"), c, tuple(reversed(c)))
            out.append(c)
        return out

    assert codes(3) == codes(3) and codes(3) != codes(4)
