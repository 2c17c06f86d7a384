"""play_episode's settings: one frozen EpisodeSettings, checked when built; the old keywords still work."""

from __future__ import annotations

import pytest

from cwm.decrypto import EmbedAlice, EmbedBob, EmbedEve, EpisodeSettings, play_episode
from cwm.decrypto.testing import KEYWORDS
from cwm.decrypto.types import DecryptoError


def _agents(toy):  # type: ignore[no-untyped-def]
    return EmbedAlice(toy, k=4), EmbedBob(toy), EmbedEve(toy)


def test_settings_fix_the_keywords_seed_and_label(toy):
    settings = EpisodeSettings(agent_seed=7, episode_id="e/1", keywords=KEYWORDS)
    episode = play_episode(*_agents(toy), game_seed=3, settings=settings)
    assert (episode.episode_id, episode.game_seed, episode.agent_seed) == ("e/1", 3, 7)
    assert episode.keywords == KEYWORDS and episode.turns
    again = play_episode(*_agents(toy), game_seed=3, settings=settings)
    assert again.to_json() == episode.to_json()  # seeded: the same settings play the same game


def test_the_old_keywords_play_the_same_game_with_a_deprecation_warning(toy):
    settings = EpisodeSettings(agent_seed=5, episode_id="old", keywords=KEYWORDS)
    new = play_episode(*_agents(toy), game_seed=4, settings=settings)
    with pytest.warns(DeprecationWarning, match=r"pass settings=EpisodeSettings\(agent_seed=") as caught:
        old = play_episode(*_agents(toy), game_seed=4, agent_seed=5, episode_id="old", keywords=list(KEYWORDS))
    assert old.to_json() == new.to_json()
    assert caught[0].filename == __file__  # the warning names the caller's line, not play.py


def test_a_keyword_that_is_no_setting_is_a_type_error(toy):
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['agent_sed'\]"):
        play_episode(*_agents(toy), game_seed=0, agent_sed=1)


BAD = [
    ("negative-seed", {"agent_seed": -1}, "agent_seed must be an int >= 0, got -1"),
    ("float-seed", {"agent_seed": 1.5}, "agent_seed must be an int >= 0, got 1.5"),
    ("bool-seed", {"agent_seed": True}, "agent_seed must be an int >= 0, got True"),
    ("three-keywords", {"keywords": ("lion", "piano", "hammer")}, "keywords must be 4 distinct words"),
    ("repeated-keyword", {"keywords": ("lion", "lion", "piano", "hammer")}, "keywords must be 4 distinct words"),
    ("empty-keyword", {"keywords": ("lion", "", "piano", "hammer")}, "keywords must be 4 distinct words"),
]


@pytest.mark.parametrize(("fields", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_settings_are_refused_when_built(fields, message):
    with pytest.raises(DecryptoError, match=message):
        EpisodeSettings(**fields)


def test_settings_are_frozen_and_keep_keywords_as_a_tuple():
    settings = EpisodeSettings(keywords=list(KEYWORDS))  # type: ignore[arg-type]
    assert settings.keywords == KEYWORDS and isinstance(settings.keywords, tuple)
    with pytest.raises(AttributeError):
        settings.probes = True  # type: ignore[misc]
