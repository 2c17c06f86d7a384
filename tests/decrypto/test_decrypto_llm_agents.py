"""LLM players offline: scripted replies (legal; malformed then corrected; malformed until the default),
the conversation and its probe branches, and whole games from recorded replies."""

from __future__ import annotations

import pytest

from cwm.decrypto import DEFAULT_GUESS, EpisodeSettings, LLMAgent, View, default_hints, play_episode
from cwm.decrypto.testing import KEYWORDS, RuleClient
from cwm.decrypto.types import Turn
from cwm.llm import RecordingClient, ReplayClient, ScriptedClient

BOB_VIEW = View("bob", 1, (), KEYWORDS, hints=("mane", "keys", "nail"))
ALICE_VIEW = View("alice", 1, (), KEYWORDS, code=(2, 4, 1))

CASES = [  # name, replies, expected guess, logged outcomes
    ("legal", ["Hints point to piano, lion, hammer.\nANSWER: 2-1-3"], (2, 1, 3), ["ok"]),
    ("malformed then corrected", ["no idea", "ANSWER: 1-1-1", "ANSWER: 4-1-2"], (4, 1, 2),
     ["unreadable", "invalid", "ok"]),
    ("malformed until the default", ["hmm", "ANSWER: 7", "ANSWER: none"], DEFAULT_GUESS,
     ["unreadable", "invalid", "invalid", "default"]),
]


@pytest.mark.parametrize("name,replies,expected,outcomes", CASES, ids=[c[0] for c in CASES])
def test_guess_attempts(name, replies, expected, outcomes):
    client = ScriptedClient(replies)
    bob = LLMAgent(client, "bob", max_retries=2)
    assert bob.guess(BOB_VIEW) == expected
    attempts = bob.take_attempts()
    assert [a.outcome for a in attempts] == outcomes
    assert [a.reply for a in attempts if a.outcome != "default"] == replies
    assert client.remaining == 0 and bob.take_attempts() == []
    if len(replies) > 1:  # the retry shows the earlier reply and says what was wrong
        second = client.calls[1].messages
        assert second[-2].role == "assistant" and second[-2].text == replies[0]
        assert "ANSWER:" in second[-1].text and "no line starting with 'ANSWER:'" in second[-1].text


def test_alice_default_hints_avoid_keywords():
    alice = LLMAgent(ScriptedClient(["ANSWER: lions | keys | nail"] * 2), "alice", max_retries=1)
    assert alice.hints(ALICE_VIEW) == default_hints(KEYWORDS) == ("pass", "pass", "pass")
    assert [a.outcome for a in alice.attempts] == ["invalid", "invalid", "default"]
    assert "contains the keyword 'lion'" in alice.attempts[0].error
    assert default_hints(("pass", "x", "y", "z")) == ("skip", "skip", "skip")


def test_prompts_show_each_role_only_its_view():
    client = ScriptedClient(["ANSWER: a | b | c", "ANSWER: 1-2-3", "ANSWER: 1-2-3"])
    LLMAgent(client, "alice").hints(ALICE_VIEW)
    LLMAgent(client, "bob").guess(BOB_VIEW)
    LLMAgent(client, "eve").guess(View("eve", 1, (), hints=BOB_VIEW.hints))
    alice, bob, eve = client.calls
    assert "2-4-1" in alice.last_user_text and "lion" in alice.last_user_text
    assert "lion" in bob.last_user_text and "2-4-1" not in bob.last_user_text
    assert not any(w in eve.last_user_text + eve.system for w in KEYWORDS)
    assert "You are **Eve**" in eve.system and "intercepts" in eve.system  # the rules are in the system prompt


def test_conversation_continues_and_probes_branch():
    client = ScriptedClient(["ANSWER: 1-2-3", "ANSWER: cat | drum | saw | pear", "ANSWER: 2-3-4"])
    eve = LLMAgent(client, "eve")
    eve.guess(View("eve", 1, (), hints=("a", "b", "c")))
    turn = Turn(1, (1, 2, 4), ("a", "b", "c"), (1, 2, 4), (1, 2, 3))
    view = View("eve", 2, (turn,), hints=("d", "e", "f"))
    assert eve.keyword_belief(view, "keywords_now", KEYWORDS) == ("cat", "drum", "saw", "pear")
    before = len(eve.conversation)
    assert eve.guess(view) == (2, 3, 4)
    last = client.calls[-1]
    assert len(eve.conversation) == before + 2  # the probes left no trace in the game's context
    assert not any("keywords are" in m.text for m in last.messages)
    assert last.temperature == 0.6 and client.calls[1].temperature == 0.0


def test_reveal_is_only_in_the_branch():
    client = ScriptedClient(["ANSWER: cat | drum | saw | pear", "ANSWER: 1-2-3"])
    eve = LLMAgent(client, "eve")
    turn = Turn(1, (1, 2, 4), ("a", "b", "c"), (1, 2, 4), (1, 2, 3))
    view = View("eve", 2, (turn,), hints=("d", "e", "f"))
    eve.keyword_belief(view, "keywords_before", KEYWORDS)
    assert "1. lion" in client.calls[0].last_user_text
    eve.guess(view)
    assert not any("lion" in m.text for m in client.calls[1].messages)


def _game(client, probes=True):
    agents = [LLMAgent(client, r, seed=5) for r in ("alice", "bob", "eve")]
    return play_episode(*agents, game_seed=11, settings=EpisodeSettings(agent_seed=5, episode_id="llm-game", probes=probes))


def test_three_llm_players_and_probes_from_recorded_replies(tmp_path):
    live = RuleClient()
    path = tmp_path / "replies.jsonl"
    recorded = _game(RecordingClient(live, path))
    assert recorded.end == "survived" and len(recorded.turns) == 8  # Bob reads the rule hints; Eve guesses 1-2-3
    kinds = [p["kind"] for p in recorded.probes]
    assert kinds.count("perspective") == 8 and kinds.count("keywords") == 7  # keyword probes from turn 2 on
    replayed = _game(ReplayClient(path))
    assert replayed.to_json() == recorded.to_json()
    assert live.calls == len(recorded.attempts)  # every reply logged once, none asked again on replay
