"""The equivalence property of issue 14: for every model in tests/data and every mutant of them, the checks
find a contract breach (``CheckReport.breaches > 0``) if and only if seeded random games through
``ModelState`` (``checks.random_play_checks``) raise a contract error; and the checks' fast path scores
every model exactly as the full checks do.

A breach is a failed check that play would refuse too (an exception, a wrong type, an invalid value, a
mutation, an action the game does not have); a mismatch is a valid answer that differs from the ground
truth, which play cannot see.
"""

from __future__ import annotations

import collections

from cwm import checks


class _Counting:
    """A guard that counts model calls by function name."""

    def __init__(self):
        self.calls = collections.Counter()

    def __call__(self, fn, *args):
        self.calls[fn.__name__] += 1
        return fn(*args)


def test_random_play_asks_every_state_what_the_replay_asks(known_good):
    """Every player's observation at every state (the terminal ones too), the legal actions at every
    non-terminal state (chance nodes too) and the chance outcomes at every chance node: what the replay
    checks ask of a recorded state, so that a breach in any of them is found by both."""
    counting = _Counting()
    games_played = 10
    report = checks.random_play_checks(known_good("leduc_poker", guard=counting), num_games=games_played, seed=0)
    calls = counting.calls
    assert report.all_passed and calls["apply_action"] > 5 * games_played
    states = calls["apply_action"] + games_played
    assert calls["get_observations"] == states + 1  # and once more, for the number of players
    assert calls["get_legal_actions"] == states - games_played  # every state but the terminal ones
    assert 0 < calls["get_chance_outcomes"] < calls["get_legal_actions"]
