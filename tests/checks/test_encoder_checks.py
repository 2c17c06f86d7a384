"""The encoder checks: the hand-written encoders pass on recorded games, each kind of broken encoder fails
with the check named, and the sandboxed run refuses code the gate refuses."""

from __future__ import annotations

import pytest

from cwm.checks.encoder import check_encoder, observations_of
from cwm.games import trajectories
from cwm.sandbox.checkers import sandbox_check_encoder

GAMES = ["tic_tac_toe", "connect_four", "leduc_poker", "quadranto"]


@pytest.fixture(scope="module")
def recorded() -> dict[str, list]:
    return {g: trajectories.collect(g, 8, seed=3) for g in GAMES}


@pytest.mark.parametrize("game", GAMES)
def test_hand_written_encoders_pass(game, recorded, encode):
    pairs = observations_of(recorded[game])
    report = check_encoder(encode(game), pairs)
    assert report.ok, report.problems
    assert report.checked == len(pairs) > 20
    assert report.length == {"tic_tac_toe": 27, "connect_four": 126, "leduc_poker": 22, "quadranto": 23}[game]


def _ttt(fn):
    def broken(obs, player):
        return fn([float(c == "x") for c in obs["board"]], obs, player)
    return broken


BROKEN = {
    "fixed length": _ttt(lambda v, obs, p: v[: 9 - obs["board"].count(".") % 2]),
    "finite": _ttt(lambda v, obs, p: v + [float("nan")]),
    "distinct": _ttt(lambda v, obs, p: [0.0] * 9),
    "type": _ttt(lambda v, obs, p: tuple(v)),
    "raises": _ttt(lambda v, obs, p: v[100]),
}


@pytest.mark.parametrize("check", sorted(BROKEN))
def test_broken_encoders_fail_their_check(check, recorded):
    report = check_encoder(BROKEN[check], observations_of(recorded["tic_tac_toe"]))
    assert not report.ok
    assert any(p.startswith(f"{check}:") for p in report.problems), report.problems


def test_non_deterministic_and_slow_encoders_fail(recorded):
    calls = [0]

    def drifting(obs, player):
        calls[0] += 1
        return [float(calls[0] % 2)] + [float(c == "x") for c in obs["board"]]

    def slow(obs, player):
        sum(range(200_000))
        return [float(c == "x") for c in obs["board"]] + [float(c == "o") for c in obs["board"]]

    pairs = observations_of(recorded["tic_tac_toe"])
    assert any(p.startswith("deterministic:") for p in check_encoder(drifting, pairs).problems)
    assert any(p.startswith("cheap:") for p in check_encoder(slow, pairs, call_s=1e-4).problems)


def test_cheapness_is_cpu_time_not_waiting(recorded):
    # A call that waits (as one descheduled on a busy machine does) uses no CPU: it is cheap. Timed by the
    # wall clock it would be over any budget the sleep exceeds.
    import time

    def waiting(obs, player):
        time.sleep(0.002)
        return [float(c == "x") for c in obs["board"]] + [float(c == "o") for c in obs["board"]]

    report = check_encoder(waiting, observations_of(recorded["tic_tac_toe"])[:20], call_s=1e-3)
    assert report.ok, report.problems


def test_no_observations_is_not_a_pass(encode):
    assert not check_encoder(encode("tic_tac_toe"), []).ok


def test_sandboxed_checks(recorded, source):
    good = sandbox_check_encoder(source("tic_tac_toe_encoder.py"), recorded["tic_tac_toe"])
    assert good.ok and good.length == 27
    gated = sandbox_check_encoder("import os\n\ndef encode(observation, player_id):\n    return [0.0]\n",
                                  recorded["tic_tac_toe"])
    assert not gated.ok and gated.problems[0].startswith("static:")
    colliding = sandbox_check_encoder("def encode(observation, player_id):\n    return [1.0]\n",
                                      recorded["tic_tac_toe"])
    assert any(p.startswith("distinct:") for p in colliding.problems)


def test_an_empty_first_vector_fixes_the_length_too(recorded):
    def empty_at_the_start(obs, player):  # [] for the empty board, nine numbers after it
        return [float(c == "x") for c in obs["board"]] if obs["board"].count(".") < 9 else []

    pairs = observations_of(recorded["tic_tac_toe"])
    assert pairs[0][0]["board"].count(".") == 9
    report = check_encoder(empty_at_the_start, pairs)
    assert any(p.startswith("fixed length:") and "9 numbers, the first observation had 0" in p
               for p in report.problems), report.problems


def test_every_call_is_counted_and_the_report_names_where_it_failed(recorded):
    from cwm.checks.encoder import encoder_check_report, observation_sites

    def padded(obs, player):  # the whole board, then one more number after an even number of moves
        board = obs["board"]
        return [float(c == "x") for c in board] + [float(c == "o") for c in board] + [0.0] * (board.count(".") % 2)

    sites = observation_sites(recorded["tic_tac_toe"])
    report = check_encoder(padded, [(s.observation, s.player) for s in sites])
    failing = sum(s.observation["board"].count(".") % 2 == 0 for s in sites)  # the first board has 9 empty cells
    assert report.by_check["raises"] == (len(sites), len(sites)) and failing > len(report.problems) == 10
    assert report.by_check["fixed length"] == (len(sites) - failing, len(sites))
    checks = encoder_check_report(report, sites)
    assert checks.by_type["encoder_fixed_length"].total == len(sites) and checks.transitions_total == len(sites)
    assert checks.transitions_passed == len(sites) - failing and not checks.all_passed
    first = checks.failures[0]
    site = sites[report.failed_at[0]]
    assert (first.trajectory, first.step, first.history) == (site.trajectory, site.step, site.history)
    assert recorded["tic_tac_toe"][site.trajectory].steps[site.step - 1].action_string == site.history[-1]
    assert first.got == "18 numbers, the first observation had 19" and f", {site.player})" in first.call


def test_the_report_survives_json(recorded):
    from cwm.checks.encoder import EncoderReport

    report = check_encoder(BROKEN["fixed length"], observations_of(recorded["tic_tac_toe"]))
    assert EncoderReport.from_json(report.to_json()) == report


def test_a_slow_encoder_is_named_over_every_call(recorded):
    from cwm.checks.encoder import encoder_check_report, observation_sites

    def slow(obs, player):
        sum(range(200_000))
        return [float(c == "x") for c in obs["board"]] + [float(c == "o") for c in obs["board"]]

    sites = observation_sites(recorded["tic_tac_toe"])
    checks = encoder_check_report(check_encoder(slow, [(s.observation, s.player) for s in sites], call_s=1e-4), sites)
    (failure,) = [f for f in checks.failures if f.test_type == "encoder_cheap"]
    assert "on average" in failure.call and failure.got.startswith("a call took") and "ms on average" in failure.got
    assert checks.by_type["encoder_cheap"].total == 1 and checks.transitions_passed == len(sites)
