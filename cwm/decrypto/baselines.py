"""Embedding baselines for the three roles, after the published benchmark's word-embedding agents.

- :class:`EmbedAlice` gives, per digit, a random hint among the ``k`` vocabulary words nearest to the
  keyword, never repeating a hint for the same keyword. ``smart`` keeps only candidates closer to their own
  keyword than to the other three. ``wary`` (our addition) plays the embedding Eve in her head: it redraws
  the three hints, up to ``tries`` times, while that Eve would intercept them.
- :class:`EmbedBob` matches hints to keywords by cosine similarity: greedily hint by hint, or by the global
  assignment that maximises the total similarity (Hungarian algorithm, ``scipy``).
- :class:`EmbedEve` does the same against the mean vector of each digit's past hints (a digit with none
  scores 0); on the first turn, with no past hints at all, she guesses a uniformly random code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cwm.decrypto.embeddings import Embedding
from cwm.decrypto.engine import ALL_CODES
from cwm.decrypto.types import DIGITS, Code, DecryptoError, View

ASSIGNMENTS = ("global", "greedy")


def assign(similarity: np.ndarray, *, method: str = "global") -> Code:
    """The code read from a hints x digits similarity matrix: each hint gets a distinct digit.

    ``greedy`` takes the hints in order, each the best digit not yet taken; ``global`` maximises the total
    (``scipy.optimize.linear_sum_assignment``).
    """
    if method == "greedy":
        taken: list[int] = []
        for row in similarity:
            order = [int(j) for j in np.argsort(-row, kind="stable") if int(j) not in taken]
            taken.append(order[0])
        return tuple(DIGITS[j] for j in taken)
    if method != "global":
        raise DecryptoError(f"assignment must be one of {ASSIGNMENTS}, got {method!r}")
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(-similarity)
    return tuple(DIGITS[int(c)] for _, c in sorted(zip(rows, cols)))


def digit_means(embedding: Embedding, view: View) -> np.ndarray | None:
    """Digits x dim: the mean vector of each digit's past hints (zeros for a digit with none; None before
    any turn was played)."""
    if not view.history:
        return None
    means = np.zeros((len(DIGITS), embedding.dim), dtype=np.float32)
    for j, digit in enumerate(DIGITS):
        past = view.hints_for(digit)
        if past:
            means[j] = embedding.matrix(past).mean(axis=0)
    return means


def eve_similarity(embedding: Embedding, hints: Sequence[str], view: View) -> np.ndarray | None:
    """Hints x digits: cosine of each hint to the mean of each digit's past hints (None with no past hints)."""
    means = digit_means(embedding, view)
    return None if means is None else embedding.matrix(hints) @ means.T


class EmbedAlice:
    """Alice from word embeddings.

    Args:
      embedding: the vectors and hint vocabulary.
      k: candidates per keyword: the ``k`` nearest hint words (grows by one each time the keyword is used,
        as unused candidates run out).
      smart: keep only candidates nearer to their own keyword than to any other.
      wary: redraw while the embedding Eve (same vectors, global assignment) would intercept.
      tries: redraws allowed to a wary Alice per turn.
      seed: seeds the hint draws (``reset`` reseeds).
    """

    def __init__(self, embedding: Embedding, *, k: int = 256, smart: bool = True, wary: bool = True,
                 tries: int = 64, seed: int = 0, name: str | None = None) -> None:
        if k < 1 or tries < 1:
            raise DecryptoError(f"embed Alice needs k >= 1 and tries >= 1, got k={k}, tries={tries}")
        self.embedding, self.k, self.smart, self.wary, self.tries = embedding, k, smart, wary, tries
        self.name = name or f"embed:{embedding.name}"
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.used: dict[int, set[str]] = {d: set() for d in DIGITS}

    def candidates(self, keywords: Sequence[str], digit: int) -> list[str]:
        """The hints this Alice may give for ``digit`` now (never empty)."""
        keyword = keywords[digit - 1]
        near = self.embedding.nearest(keyword, self.k + len(self.used[digit]), avoid=keywords)
        fresh = [h for h in near if h not in self.used[digit]] or near
        if not self.smart:
            return fresh
        scores = self.embedding.matrix(fresh) @ self.embedding.matrix(list(keywords)).T
        own = [h for h, row in zip(fresh, scores) if int(np.argmax(row)) == digit - 1]
        return own or fresh[:1]

    def hints(self, view: View) -> tuple[str, ...]:
        pools = [self.candidates(view.keywords, d) for d in view.code]
        picks = self._draw(pools)
        means = digit_means(self.embedding, view) if self.wary else None
        if means is not None:
            vectors = [self.embedding.matrix(pool) for pool in pools]
            for _ in range(self.tries - 1):
                similarity = np.stack([v[i] for v, i in zip(vectors, picks)]) @ means.T
                if assign(similarity) != view.code:
                    break
                picks = self._draw(pools)
        hints = tuple(pool[i] for pool, i in zip(pools, picks))
        for digit, hint in zip(view.code, hints):
            self.used[digit].add(hint)
        return hints

    def _draw(self, pools: list[list[str]]) -> list[int]:
        return [int(self.rng.integers(len(pool))) for pool in pools]


class EmbedBob:
    """Bob from word embeddings: hints matched to the keywords (``assignment``: global or greedy)."""

    def __init__(self, embedding: Embedding, *, assignment: str = "global", name: str | None = None) -> None:
        if assignment not in ASSIGNMENTS:
            raise DecryptoError(f"assignment must be one of {ASSIGNMENTS}, got {assignment!r}")
        self.embedding, self.assignment = embedding, assignment
        self.name = name or f"embed:{embedding.name}"

    def guess(self, view: View) -> Code:
        similarity = self.embedding.matrix(view.hints) @ self.embedding.matrix(list(view.keywords)).T
        return assign(similarity, method=self.assignment)


class EmbedEve:
    """Eve from word embeddings: hints matched to the mean of each digit's past hints."""

    def __init__(self, embedding: Embedding, *, assignment: str = "global", seed: int = 0,
                 name: str | None = None) -> None:
        if assignment not in ASSIGNMENTS:
            raise DecryptoError(f"assignment must be one of {ASSIGNMENTS}, got {assignment!r}")
        self.embedding, self.assignment = embedding, assignment
        self.name = name or f"embed:{embedding.name}"
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def guess(self, view: View) -> Code:
        similarity = eve_similarity(self.embedding, view.hints, view)
        if similarity is None:
            return ALL_CODES[int(self.rng.integers(len(ALL_CODES)))]
        return assign(similarity, method=self.assignment)
