"""Decrypto's rules: seeded keyword draws and codes, hint and code checks, end conditions, the game record.

The engine owns the invariants; agents only propose. A code has 3 distinct digits from 1-4 and never repeats
within a game; a hint is one short line that does not contain a keyword; the game ends at 2 interceptions
or 2 miscommunications (both on the same turn is its own end condition) or after turn 8.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import itertools
import math
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from cwm.decrypto.types import (
    CODE_LENGTH,
    DIGITS,
    MAX_TURNS,
    TOKENS_TO_WIN,
    Code,
    DecryptoError,
    Turn,
)

ALL_CODES: tuple[Code, ...] = tuple(itertools.permutations(DIGITS, CODE_LENGTH))  # the 24 codes
MAX_HINT_CHARS = 40


@lru_cache(maxsize=1)
def keyword_list() -> tuple[str, ...]:
    """The packaged keyword list (``cwm/decrypto/data/keywords.txt``): common concrete English nouns."""
    text = importlib.resources.files("cwm.decrypto").joinpath("data/keywords.txt").read_text(encoding="utf-8")
    words = tuple(w.strip() for w in text.splitlines() if w.strip())
    if len(set(words)) != len(words):
        raise DecryptoError("cwm/decrypto/data/keywords.txt lists a word twice")
    return words


def keyword_combinations(words: Sequence[str] | None = None) -> int:
    """How many distinct sets of 4 keywords the list allows."""
    return math.comb(len(keyword_list() if words is None else words), len(DIGITS))


def deal_keywords(rng: np.random.Generator, words: Sequence[str] | None = None) -> tuple[str, ...]:
    """Four distinct keywords drawn uniformly (consumes one ``rng.choice``)."""
    pool = keyword_list() if words is None else tuple(words)
    if len(set(pool)) < len(DIGITS):
        raise DecryptoError(f"a keyword list needs at least {len(DIGITS)} distinct words, got {len(set(pool))}")
    picks = rng.choice(len(pool), size=len(DIGITS), replace=False)
    return tuple(pool[int(i)] for i in picks)


def draw_code(rng: np.random.Generator, used: Sequence[Code]) -> Code:
    """A code not used yet in this game, uniform among the rest (consumes one ``rng.integers``)."""
    fresh = [c for c in ALL_CODES if c not in set(used)]
    if not fresh:
        raise DecryptoError("every code has been used")
    return fresh[int(rng.integers(len(fresh)))]


def code_problem(code: object) -> str:
    """Why ``code`` is not a legal guess ("" when it is)."""
    if not isinstance(code, tuple) or len(code) != CODE_LENGTH:
        return f"a code is {CODE_LENGTH} digits, got {code!r}"
    if any(isinstance(d, bool) or not isinstance(d, int) or d not in DIGITS for d in code):
        return f"each digit is one of {', '.join(map(str, DIGITS))}, got {code!r}"
    if len(set(code)) != CODE_LENGTH:
        return f"a code's digits are distinct, got {'-'.join(map(str, code))}"
    return ""


def hint_problem(hint: object, keywords: Sequence[str]) -> str:
    """Why ``hint`` may not be given ("" when it may): empty, over 40 characters, several lines, or
    containing a keyword as a word or word part (``dogs`` for ``dog``)."""
    if not isinstance(hint, str) or not hint.strip():
        return "a hint is a non-empty word or short phrase"
    if len(hint) > MAX_HINT_CHARS or "\n" in hint:
        return f"a hint is one line of at most {MAX_HINT_CHARS} characters, got {hint[:60]!r}"
    low = hint.lower()
    for word in keywords:
        if re.search(re.escape(word.lower()), low):
            return f"the hint {hint!r} contains the keyword {word!r}"
    return ""


def end_condition(turns: Sequence[Turn]) -> str | None:
    """The game's end condition after ``turns``, or None while it goes on."""
    interceptions = sum(t.intercepted for t in turns)
    miscommunications = sum(t.miscommunicated for t in turns)
    if interceptions >= TOKENS_TO_WIN and miscommunications >= TOKENS_TO_WIN:
        return "both"
    if interceptions >= TOKENS_TO_WIN:
        return "intercepted"
    if miscommunications >= TOKENS_TO_WIN:
        return "miscommunicated"
    if len(turns) >= MAX_TURNS:
        return "survived"
    return None


@dataclasses.dataclass
class Game:
    """A game in progress: its keywords, the turns so far, and the seeded source of codes.

    Args:
      rng: the game's generator; it drew the keywords and draws every code.
      keywords: the four keywords, digit 1 first.
    """

    rng: np.random.Generator
    keywords: tuple[str, ...]
    turns: list[Turn] = dataclasses.field(default_factory=list)

    @classmethod
    def new(cls, seed: int, *, words: Sequence[str] | None = None) -> Game:
        """A game whose keywords and codes all follow from ``seed``."""
        rng = np.random.default_rng(seed)
        return cls(rng, deal_keywords(rng, words))

    @property
    def end(self) -> str | None:
        return end_condition(self.turns)

    def next_code(self) -> Code:
        """The code of the next turn (raises once the game is over)."""
        if self.end is not None:
            raise DecryptoError(f"the game is over ({self.end}); there is no next code")
        return draw_code(self.rng, [t.code for t in self.turns])

    def record(self, code: Code, hints: Sequence[str], bob_guess: Code, eve_guess: Code) -> Turn:
        """Checks and appends one turn.

        Raises:
          DecryptoError: the game is over, the code was used before, a hint or guess breaks the rules.
        """
        if self.end is not None:
            raise DecryptoError(f"the game is over ({self.end})")
        problems = [code_problem(code), code_problem(bob_guess), code_problem(eve_guess)]
        if any(t.code == code for t in self.turns):
            problems.append(f"the code {'-'.join(map(str, code))} was already used")
        if len(hints) != CODE_LENGTH:
            problems.append(f"{CODE_LENGTH} hints are needed, got {len(hints)}")
        problems += [hint_problem(h, self.keywords) for h in hints]
        problem = next((p for p in problems if p), "")
        if problem:
            raise DecryptoError(f"turn {len(self.turns) + 1}: {problem}")
        turn = Turn(len(self.turns) + 1, tuple(code), tuple(hints), tuple(bob_guess), tuple(eve_guess))
        self.turns.append(turn)
        return turn


def format_code(code: Code) -> str:
    """``3-1-4``."""
    return "-".join(str(d) for d in code)
