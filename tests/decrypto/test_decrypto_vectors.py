"""A second embedding from a text vector file, and which configuration each spec plays (the paper's or cwm's)."""

from __future__ import annotations

import numpy as np
import pytest

import cwm.decrypto.embeddings as embeddings
from cwm.decrypto import EmbedAlice, build_agent, configuration, load_text_vectors, parse_spec
from cwm.decrypto.types import DecryptoError

VECTORS = "3 2\ncat 1 0\ndog 0.8 0.6\ncat 5 5\n\nkitten 1 0.1\nox 0 1\n"  # word2vec header, a repeat, a blank


def write(tmp_path, text, name="vectors.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_text_vector_file_is_read_in_order_with_first_vectors_kept(tmp_path):
    emb = load_text_vectors(write(tmp_path, VECTORS), extra_words=["dog"])
    assert emb.name == "vectors" and emb.words == ("cat", "dog", "kitten", "ox")
    assert np.allclose(emb.vector("cat"), [1, 0]) and np.allclose(emb.vector("dog"), [0.8, 0.6])
    assert emb.hint_words == ("cat", "dog", "kitten")  # "ox" is under 3 letters
    assert emb.nearest("cat", 1) == ["kitten"]


def test_words_past_the_lookup_size_keep_a_vector_only_when_needed(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "LOOKUP_WORDS", 2)
    emb = load_text_vectors(write(tmp_path, VECTORS), extra_words=["ox"])
    assert emb.words == ("cat", "dog", "ox")


BAD_FILES = [  # name, text, the error
    ("letters-for-numbers", "cat 1 0\ndog one two\n", r"vectors.txt:2: expected a word then numbers"),
    ("wrong-dimension", "cat 1 0\ndog 1 0 0\n", r"vectors.txt:2: expected a word then 2 finite numbers, got 3"),
    ("not-finite", "cat 1 nan\n", r"vectors.txt:1: expected a word then its finite numbers"),
    ("word-alone", "cat\n", r"vectors.txt:1: expected a word then its finite numbers, got 0"),
    ("no-vectors", "\n\n", r"vectors.txt: no word vectors in the file"),
    ("missing-keyword", "cat 1 0\n", r"vectors.txt: no vector for \['lion'\]"),
]


@pytest.mark.parametrize("name,text,message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_vector_file_is_a_one_line_error_naming_the_line(tmp_path, name, text, message):
    with pytest.raises(DecryptoError, match=message) as error:
        load_text_vectors(write(tmp_path, text), extra_words=["lion"] if name == "missing-keyword" else ())
    assert "\n" not in str(error.value)


def test_a_long_line_and_a_binary_file_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "MAX_VECTOR_LINE", 32)
    with pytest.raises(DecryptoError, match=r"vectors.txt:1: a line over 32 bytes"):
        load_text_vectors(write(tmp_path, "cat " + "0.5 " * 40 + "\n"))
    path = tmp_path / "binary.bin"
    path.write_bytes(b"\xff\xfe\x00cat 1 0\n")
    with pytest.raises(DecryptoError, match=r"binary.bin:1: not UTF-8"):
        load_text_vectors(path)
    with pytest.raises(DecryptoError, match=r"cannot read the vector file"):
        load_text_vectors(tmp_path / "absent.txt")


def test_the_paper_preset_is_the_published_encoder(toy):
    spec = parse_spec("embed:paper", "alice")
    assert spec.options == {"k": 16, "smart": True, "wary": False}
    alice = build_agent(spec, "alice", embedding=lambda vocab, vectors: toy)
    assert isinstance(alice, EmbedAlice) and (alice.k, alice.smart, alice.wary) == (16, True, False)
    assert parse_spec("embed:paper,k=32", "alice").options["k"] == 32  # a later option overrides
    with pytest.raises(DecryptoError, match=r"'paper' is not an option of the bob baseline"):
        parse_spec("embed:paper", "bob")
    with pytest.raises(DecryptoError, match=r"the presets \['paper'\]"):
        parse_spec("embed:papr", "alice")


def test_vectors_reach_the_embedding_factory(toy):
    asked = []
    build_agent(parse_spec("embed:vectors=/data/w2v.txt,vocab=500", "bob"), "bob",
                embedding=lambda vocab, vectors: asked.append((vocab, vectors)) or toy)
    build_agent(parse_spec("embed", "eve"), "eve", embedding=lambda vocab, vectors: asked.append((vocab, vectors)) or toy)
    assert asked == [(500, "/data/w2v.txt"), (0, "glove50")]
    with pytest.raises(DecryptoError, match="vectors must be"):
        parse_spec("embed:vectors=", "alice")


GLOVE = "GloVe 6B 50d, not the paper's GloVe 840B-300d or word2vec vectors"
CONFIGURATIONS = [  # spec, role, what the report calls it
    ("embed", "alice", f"cwm's wary variant, not the paper's (k=256, smart, wary), on {GLOVE}"),
    ("embed:paper", "alice", f"the paper's configuration of the embedding encoder (k=16, smart, not wary), on {GLOVE}"),
    ("embed:k=16,wary=0", "alice",
     f"the paper's configuration of the embedding encoder (k=16, smart, not wary), on {GLOVE}"),
    ("embed:paper,wary=1", "alice", f"cwm's wary variant, not the paper's (k=16, smart, wary), on {GLOVE}"),
    ("embed:k=64,smart=0,wary=0", "alice", f"the paper's encoder changed to k=64, not smart, not wary, on {GLOVE}"),
    ("embed", "eve", f"the paper's configuration of the embedding eve (global assignment), on {GLOVE}"),
    ("embed:assignment=greedy,vectors=w.txt", "bob",
     "cwm's greedy variant of the paper's embedding bob (greedy assignment), on vectors w.txt"),
    ("llm:gemini", "bob", "LLM (gemini)"),
]


@pytest.mark.parametrize("spec,role,label", CONFIGURATIONS, ids=[f"{r}-{s}" for s, r, _ in CONFIGURATIONS])
def test_each_spec_says_whose_configuration_it_plays(spec, role, label):
    assert configuration(spec, role) == label
