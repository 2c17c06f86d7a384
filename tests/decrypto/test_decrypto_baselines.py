"""Embedding baselines on a small made-up embedding: assignment, candidates, the three roles."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cwm.decrypto import (
    EmbedAlice,
    EmbedBob,
    Embedding,
    EmbedEve,
    EpisodeSettings,
    View,
    assign,
    play_episode,
)
from cwm.decrypto.baselines import eve_similarity
from cwm.decrypto.testing import KEYWORDS, TOPICS, toy_embedding
from cwm.decrypto.types import DecryptoError, Turn

# Hint 1 likes digit 1 a little more than digit 2; hint 2 likes only digit 1. Greedy gives hint 1 digit 1 and
# loses hint 2; the global assignment gives up a little on hint 1 to win a lot on hint 2.
TRAP = np.array([[0.9, 0.8, 0.0, 0.0], [0.9, 0.0, 0.1, 0.0], [0.0, 0.0, 0.0, 0.9]])


def test_greedy_and_global_assignment_differ_where_they_should():
    assert assign(TRAP, method="greedy") == (1, 3, 4)
    assert assign(TRAP, method="global") == (2, 1, 4)
    with pytest.raises(DecryptoError, match="assignment"):
        assign(TRAP, method="best")


def test_nearest_skips_words_that_contain_a_keyword():
    emb = Embedding.from_arrays("t", ["dog", "dogs", "hotdog", "puppy", "cat"],
                                np.array([[1, 0], [1, 0.01], [1, 0.02], [0.9, 0.3], [0.5, 0.8]]))
    assert emb.nearest("dog", 2) == ["puppy", "cat"]
    assert emb.nearest("dog", 1, avoid=["pup"]) == ["cat"]
    assert emb.vector("unknown words").tolist() == [0.0, 0.0]


def test_bob_reads_smart_hints_and_alice_never_repeats(toy):
    alice, bob = EmbedAlice(toy, k=8, smart=True, wary=False, seed=1), EmbedBob(toy)
    given: dict[int, list[str]] = {d: [] for d in range(1, 5)}
    for code in [(1, 2, 3), (4, 1, 2), (3, 4, 1), (2, 3, 4)]:
        hints = alice.hints(View("alice", 1, (), KEYWORDS, code))
        assert bob.guess(View("bob", 1, (), KEYWORDS, hints=hints)) == code
        for d, h in zip(code, hints):
            assert h in TOPICS[KEYWORDS[d - 1]] and h not in given[d]
            given[d].append(h)


def test_eve_guesses_at_random_first_then_matches_past_hints(toy):
    eve = EmbedEve(toy, seed=3)
    first = Counter(eve.guess(View("eve", 1, (), hints=("mane", "keys", "nail"))) for _ in range(200))
    assert len(first) > 15  # uniform over the 24 codes, not a fixed answer
    past = Turn(1, (1, 2, 3), ("mane", "keys", "nail"), (1, 2, 3), (4, 3, 2))
    view = View("eve", 2, (past,), hints=("anvil", "roar", "melody"))
    assert eve.guess(view) == (3, 1, 2)
    sim = eve_similarity(toy, view.hints, view)
    assert sim.shape == (3, 4) and np.allclose(sim[:, 3], 0)  # digit 4 has no past hints


def test_wary_alice_dodges_the_eve_she_simulates():
    emb = toy_embedding(noise=1.0)  # hints spread enough that some draws fool Eve
    ends = {}
    for wary in (False, True):
        alice, bob, eve = EmbedAlice(emb, k=8, smart=False, wary=wary), EmbedBob(emb), EmbedEve(emb)
        games = [play_episode(alice, bob, eve, game_seed=s, settings=EpisodeSettings(agent_seed=s, keywords=KEYWORDS))
                 for s in range(20)]
        ends[wary] = sum(len(g.interception_turns) for g in games)
    assert ends[True] < ends[False] / 2, ends


def test_alice_options_are_checked(toy):
    with pytest.raises(DecryptoError, match="k >= 1"):
        EmbedAlice(toy, k=0)
    with pytest.raises(DecryptoError, match="assignment"):
        EmbedBob(toy, assignment="magic")
