"""GT-ISMCTS on any game: a game whose engine has no ``resample_from_infostate`` is searched with the generic
resampler (no random move on every turn, no OpenSpiel exception on stderr), each match says how its draws
were made; agents that could only forfeit are refused before any match is played.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cwm.agents.specs import AgentSpecError, Settings, check_agent
from cwm.arena import ArenaError, tournament
from cwm.arena.plan import TournamentPlan
from cwm.bundle import export_bundle
from cwm.games import trajectories
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parent.parent / "data"
TINY_POKER = f"{DATA / 'foundation' / 'tiny_poker.py'}:tiny_poker"
TINY_NIM = f"{DATA / 'foundation' / 'tiny_nim.py'}:tiny_nim"
FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def _gt_ismcts_stats(game, tmp_path, matches=2):
    results = tournament(game, ["random", "gt-ismcts"], TournamentPlan(matches=matches, settings=FAST), out_dir=tmp_path / "run", executor="inline", progress=False)
    assert all(r.forfeit_seat is None for r in results), [r.reason for r in results]
    return [r.stats[r.seats.index("gt-ismcts")] for r in results]


@pytest.mark.parametrize("game,resampler", [
    (TINY_POKER, "generic"),  # a user's module game without resampling
    ("rock_paper_scissors", "generic"),  # OpenSpiel's turn-based wrapper has none either
    ("hand_of_war", "engine"), ("quadranto", "engine"), (TINY_NIM, "engine"),
    ("coin_game", "generic"),  # no information-state strings either: keyed by the players' traces
], ids=["tiny_poker", "rps", "hand_of_war", "quadranto", "tiny_nim", "coin_game"])
def test_gt_ismcts_never_falls_back_and_stderr_stays_quiet(game, resampler, tmp_path, capfd):
    for stats in _gt_ismcts_stats(game, tmp_path):
        assert stats["fallback_moves"] == 0 and stats["rejected_draws"] == 0 and stats["draws"] >= 20, stats
        assert stats["resampler"] == resampler
        if resampler == "generic":
            assert stats["exact_draws"] == stats["draws"] and stats["engine_draws"] == 0
    assert "OpenSpiel exception" not in capfd.readouterr().err


def test_match_records_say_how_draws_were_made(tmp_path):
    _gt_ismcts_stats(TINY_POKER, tmp_path, matches=1)
    lines = [json.loads(line) for line in (tmp_path / "run" / "matches.jsonl").read_text().splitlines()]
    recorded = [s for line in lines for s in line["stats"] if s]
    assert len(recorded) == 2 and all(s["resampler"] == "generic" and "fallback_moves" in s for s in recorded)


@pytest.mark.parametrize("game,reason", [
    # keyed by traces, but the hand appears whole after a deal the player does not see, card by card: no
    # forward draw matches it, and the deals are far too many to enumerate (crazy eights' world sampler,
    # planners.worlds, does not model reshuffling the pile)
    ("crazy_eights(players=3,reshuffle=true)",
     "found no world consistent with the player's information in 8 of 8 draws"),
])
def test_a_game_no_resampler_can_serve_is_refused_before_any_match(game, reason, tmp_path):
    with pytest.raises(AgentSpecError, match=reason):
        check_agent("gt-ismcts", game, settings=FAST)
    with pytest.raises(ArenaError, match=re.escape(f"gt-ismcts cannot play {game}")):
        tournament(game, ["random", "gt-ismcts"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path / "run", executor="inline", progress=False)
    assert not (tmp_path / "run").exists()


def _leduc_bundle(tmp_path, with_inference):
    reference = DATA / "reference"
    extra = {"inference.py": (reference / "leduc_poker_inference.py").read_text()} if with_inference else {}
    return export_bundle(tmp_path / ("with" if with_inference else "without"), game="leduc_poker",
                         model_source=(reference / "leduc_poker_model.py").read_text(),
                         train=trajectories.collect("leduc_poker", 2, seed=0), extra_sources=extra)


def test_a_cwm_agent_without_inference_on_hidden_information_is_refused_before_any_match(tmp_path):
    model_file = DATA / "reference" / "leduc_poker_model.py"
    bundle = _leduc_bundle(tmp_path, with_inference=False)
    for target, what in [(model_file, "a model file has no inference function"), (bundle, "has no inference.py")]:
        with pytest.raises(AgentSpecError, match=what):
            check_agent(f"cwm:{target}", "leduc_poker", settings=FAST)
        with pytest.raises(ArenaError, match="needs an inference function"):
            tournament("leduc_poker", ["random", f"cwm:{target}"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path / "run", executor="inline", progress=False)
        assert not (tmp_path / "run").exists()
    check_agent(f"cwm:{model_file}", "tic_tac_toe", settings=FAST)  # perfect information needs none


def test_the_cli_exits_with_an_error_for_a_cwm_agent_without_inference(tmp_path, capsys):
    from cwm.cli import main

    code = main(["arena", "leduc_poker", "--agents", f"random,cwm:{DATA / 'reference' / 'leduc_poker_model.py'}",
                 "--matches", "1", "--out", str(tmp_path / "run"), "--executor", "inline", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "needs an inference function" in err
    assert not (tmp_path / "run").exists()


def test_a_contained_cwm_agent_with_inference_draws_every_world_it_asks_for(tmp_path):
    """The planning worker gets the seat's view of the game anew each move: the last event it was sent was
    the seat's own decision, whose action was not yet known, and with that stale copy every later draw was
    rejected (each move after the first a random fallback)."""
    bundle = _leduc_bundle(tmp_path, with_inference=True)
    check_agent(f"cwm:{bundle}", "leduc_poker", settings=FAST)
    results = tournament("leduc_poker", ["random", f"cwm={'cwm:' + str(bundle)}"], TournamentPlan(matches=3, settings=FAST), out_dir=tmp_path / "run", executor="inline", progress=False)
    stats = [r.stats[r.seats.index("cwm")] for r in results]
    assert all(r.forfeit_seat is None for r in results)
    assert sum(s["draws"] for s in stats) >= 20 * len(stats)
    assert all(s["rejected_draws"] == 0 and s["fallback_moves"] == 0 for s in stats), stats


NO_INFOSTATE = f"{DATA / 'foundation' / 'tiny_poker_no_infostate.py'}:tiny_poker_no_infostate"


def test_gt_ismcts_keyed_by_traces_beats_random_play_on_an_engine_without_information_states(tmp_path):
    """Tiny poker whose engine has no information-state strings: gt-ismcts keys its tree by the players'
    traces, draws every world exactly, and wins chips from random play over 80 games (both seats): its mean
    return exceeds 0 by more than two standard errors (a one-sided z-test at about 2.3%)."""
    plan = TournamentPlan(matches=40, settings=Settings(search=SearchConfig(num_simulations=100, rollouts=2)))
    results = tournament(NO_INFOSTATE, ["random", "gt-ismcts"], plan, out_dir=tmp_path / "run", executor="inline",
                         progress=False)
    won = [r.returns[r.seats.index("gt-ismcts")] for r in results]
    stats = [r.stats[r.seats.index("gt-ismcts")] for r in results]
    assert len(won) == 80 and all(r.forfeit_seat is None for r in results)
    assert all(s["fallback_moves"] == 0 and s["exact_draws"] == s["draws"] > 0 for s in stats), stats[:2]
    mean, error = sum(won) / len(won), (sum((w - sum(won) / len(won)) ** 2 for w in won) / (len(won) - 1) / len(won)) ** 0.5
    assert mean - 2 * error > 0, (mean, error)


def test_cwm_run_of_crazy_eights_plays_the_ground_truth_ismcts_and_says_why_there_is_no_true_posterior(tmp_path):
    """The suite's crazy eights is keyed by traces and its worlds are drawn by its world sampler
    (``planners.worlds``): ``cwm run`` plays gt-ismcts as an opponent beside random play, and says why it
    measured no true posterior (the sampler's model of the opponents is not the check's)."""
    from cwm.cli import main

    small = ["--num-test", "2", "--matches", "1", "--sims", "5", "--rollouts", "1", "--quiet", "--yes"]
    assert main(["run", "crazy_eights_3p", "--out", str(tmp_path / "run"), *small]) == 0
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert {row["opponent"] for row in report["arena"]} == {"random", "gt-ismcts"}
    assert "world sampler for crazy_eights draws uniformly" in report["posterior"]["skipped"]
