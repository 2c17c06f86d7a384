"""Theory-of-mind scores: hand-made probe records as a table, and probes asked in a played game."""

from __future__ import annotations

import pytest

from cwm.decrypto import (
    Episode,
    EpisodeSettings,
    LLMAgent,
    keyword_scores,
    perspective_scores,
    play_episode,
    tom_report,
)
from cwm.decrypto.testing import RuleClient

TRUE = ["lion", "piano", "hammer", "apple"]
BELIEF = ["cat", "drum", "saw", "pear"]


def episode(*probes):
    return Episode("e", 0, 0, {"alice": "a", "bob": "b", "eve": "e"}, tuple(TRUE), (), "survived", (), probes)


def keywords_probe(now, before, other):
    return {"kind": "keywords", "turn": 2, "keywords": TRUE, "keywords_now": now, "keywords_before": before,
            "keywords_other": other}


KEYWORD_CASES = [  # name, (now, before, other), strong RC, weak RC, strong FB, weak FB, self-consistent
    ("keeps her belief", (BELIEF, BELIEF, BELIEF), 1, 1, 1, 1, 1),
    ("rewrites the past to the truth", (BELIEF, TRUE, TRUE), 0, 0, 0, 0, 1),
    ("other belief moves", (BELIEF, BELIEF, ["x", "y", "z", "w"]), 1, 1, 0, 1, 0),
    ("unanswered second question", (BELIEF, None, BELIEF), 0, 0, 1, 1, 0),
]


@pytest.mark.parametrize("name,answers,rc_s,rc_w,fb_s,fb_w,sc", KEYWORD_CASES, ids=[c[0] for c in KEYWORD_CASES])
def test_keyword_task_passes(name, answers, rc_s, rc_w, fb_s, fb_w, sc):
    scores = keyword_scores([episode(keywords_probe(*answers))])
    got = (scores["representational_change"]["strong"]["successes"], scores["representational_change"]["weak"][
        "successes"], scores["false_belief"]["strong"]["successes"], scores["false_belief"]["weak"]["successes"],
        scores["self_consistency"]["successes"])
    assert got == (rc_s, rc_w, fb_s, fb_w, sc)


def test_probes_where_eve_knew_the_keywords_are_left_out():
    scores = keyword_scores([episode(keywords_probe(TRUE, TRUE, TRUE), keywords_probe(BELIEF, BELIEF, TRUE))])
    assert scores["probes"] == 2 and scores["knew_keywords"] == 1
    assert scores["false_belief"]["weak"]["n"] == 1 and scores["false_belief"]["weak"]["successes"] == 0


def test_perspective_taking_against_the_real_interception_rate():
    probes = [{"kind": "perspective", "turn": t, "predicted": p, "eve_guess": g, "code": c}
              for t, (p, g, c) in enumerate([([1, 2, 3], [1, 2, 3], [1, 2, 3]), ([1, 2, 4], [3, 2, 1], [1, 2, 4]),
                                             (None, [4, 3, 2], [2, 3, 4]), ([4, 1, 2], [4, 1, 2], [2, 1, 3])], 1)]
    scores = perspective_scores([episode(*probes)])
    assert scores["accuracy"]["successes"] == 2 and scores["accuracy"]["n"] == 4
    assert scores["predicted_interception"]["successes"] == 2 and scores["real_interception"]["successes"] == 1
    assert scores["unanswered"] == 1
    assert 0 <= scores["accuracy"]["low"] < 0.5 < scores["accuracy"]["high"] <= 1


def test_probes_in_a_played_game_are_scored_per_model():
    client = RuleClient(eve_guess="2-1-4")
    agents = [LLMAgent(client, r, name=f"llm:{r}") for r in ("alice", "bob", "eve")]
    game = play_episode(*agents, game_seed=2, settings=EpisodeSettings(agent_seed=0, probes=True))
    report = tom_report([game])
    assert set(report) == {"llm:alice", "llm:eve"}
    persp = report["llm:alice"]["perspective"]
    assert persp["accuracy"]["successes"] == persp["accuracy"]["n"] == len(game.turns)  # both say 2-1-4
    kw = report["llm:eve"]["keywords"]
    # the rule LLM keeps its wrong belief about its past self but names the truth for the other interceptor
    assert kw["representational_change"]["strong"]["rate"] == 1.0 and kw["false_belief"]["weak"]["rate"] == 0.0
    assert kw["probes"] == len(game.turns) - 1


def test_keyword_answers_are_scored_after_normalisation():
    plural_truth = ["Lions", " pianos", "the Hammer", "apples."]
    plural_belief = ["cats", "Drums", "saws", "pears"]
    scores = keyword_scores([episode(keywords_probe(plural_truth, TRUE, TRUE),
                                     keywords_probe(BELIEF, plural_belief, ["Cat", "drum", "saw", "pear"]))])
    assert scores["knew_keywords"] == 1  # the plural, capitalised answer names the true keywords
    assert scores["representational_change"]["strong"]["successes"] == 1
    assert scores["false_belief"]["strong"]["successes"] == 1 and scores["self_consistency"]["successes"] == 1
