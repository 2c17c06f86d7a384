"""The cost estimate of a tournament: timed moves scaled to the run's settings, projected over the matches
still to play, refused over the threshold without --yes (from a terminal or a script), and recorded beside the real time."""

from __future__ import annotations

import json
import random
import sys
import types
from pathlib import Path

import pytest

import cwm
from cwm import games
from cwm.agents.base import AgentBase
from cwm.agents.grammar import AgentSpecError
from cwm.agents.specs import Settings
from cwm.arena import cost
from cwm.arena.plan import TournamentPlan, plan_jobs
from cwm.cli import main
from cwm.types import UsageError
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))
RECORDED_TEAM = Path(cwm.__file__).resolve().parent / "data" / "recordings" / "teams" / "hanabi"


def test_the_projection_is_the_timed_moves_times_the_moves_of_every_match():
    # Probed at 100 simulations and scaled to 400: a search's move then costs far more than a random draw's,
    # whatever noise the CPU clock's readings add to a draw of a few microseconds.
    plan = TournamentPlan(matches=3, settings=Settings(search=SearchConfig(num_simulations=400, rollouts=1)))
    est = cost.estimate_tournament("connect_four", ["random", "gt-mcts"], plan, executor="local:2")
    assert est.matches == 6 and est.workers == 2
    assert set(est.per_move_s) == {"random", "gt-mcts"}
    assert est.per_move_s["gt-mcts"] > 10 * est.per_move_s["random"]  # a search costs more than a random draw
    per_match = est.moves_per_match / 2 * (est.per_move_s["random"] + est.per_move_s["gt-mcts"])
    starts = est.start_s["random"] + est.start_s["gt-mcts"]
    once = 2 * (est.once_s["random"] + est.once_s["gt-mcts"])  # each of the 2 workers starts each agent once
    assert est.cpu_s == pytest.approx(6 * (per_match + starts) + once)
    assert est.wall_s == pytest.approx(est.cpu_s / 2) and est.wall_on(64) == pytest.approx(est.cpu_s / 6)


class _Clock:
    """A CPU clock that only the fake agents move: the timing is exact whatever the machine's load."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class _CostsPerSimulation(AgentBase):
    """An agent whose move costs 0.1 ms per simulation on the fake clock (what the scaling assumes)."""

    def __init__(self, settings, clock):
        self.seconds, self.clock = settings.search.num_simulations * 1e-4, clock

    def step(self, state):
        self.clock.now += self.seconds
        return state.legal_actions()[0]


def test_search_agents_are_timed_at_the_probe_size_and_scaled_to_the_real_count(monkeypatch):
    clock, built = _Clock(), []
    monkeypatch.setattr(cost, "tree_cpu", lambda **_: clock())
    monkeypatch.setattr(cost, "time", types.SimpleNamespace(process_time=clock))  # reading it costs nothing
    monkeypatch.setattr(cost, "make_agent", lambda spec, game, *, settings, **_: (
        built.append(settings) or _CostsPerSimulation(settings, clock)))
    many = Settings(search=SearchConfig(num_simulations=1000, rollouts=1))
    est = cost.estimate_tournament("connect_four", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=many))
    assert {s.search.num_simulations for s in built} == {cost.PROBE_SIMULATIONS, 1000}  # random is not scaled
    assert est.per_move_s["gt-mcts"] == pytest.approx(0.1)  # 10 ms at 100 simulations, times 10
    assert est.per_move_s["random"] == pytest.approx(0.1)  # built at the real count, timed as it is
    assert est.start_s == pytest.approx({"random": 0.0, "gt-mcts": 0.0})  # the warm-up moves cost what a move costs
    assert est.once_s == pytest.approx({"random": 0.0, "gt-mcts": 0.0})


class _StartsSlowly(_CostsPerSimulation):
    """On the fake clock: its first move in a match costs 0.5 s more (a worker starting), and its very first
    move 0.25 s more again (a sandbox starting, once per process)."""

    def __init__(self, settings, clock):
        super().__init__(settings, clock)
        self.started, self.matches = False, 0

    def reset(self):
        self.started = False

    def step(self, state):
        if not self.started:
            self.started, self.clock.now = True, self.clock.now + 0.5 + (0.25 if self.matches == 0 else 0.0)
            self.matches += 1
        return super().step(state)


def test_an_agents_start_is_counted_once_per_match_and_its_setup_once_per_worker(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(cost, "tree_cpu", lambda **_: clock())
    monkeypatch.setattr(cost, "time", types.SimpleNamespace(process_time=clock))
    monkeypatch.setattr(cost, "make_agent", lambda spec, game, *, settings, **_: (
        _StartsSlowly if spec == "gt-mcts" else _CostsPerSimulation)(settings, clock))
    est = cost.estimate_tournament("connect_four", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST),
                                   executor="local:3")
    assert est.start_s == pytest.approx({"random": 0.0, "gt-mcts": 0.5})
    assert est.once_s == pytest.approx({"random": 0.0, "gt-mcts": 0.25})
    moves = est.moves_per_match / 2 * (est.per_move_s["random"] + est.per_move_s["gt-mcts"])
    assert est.cpu_s == pytest.approx(4 * (moves + 0.5) + 3 * 0.25)  # 4 matches; 3 workers start it once each


def test_matches_already_recorded_are_not_counted(tmp_path):
    first = plan_jobs("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST, seed=0, move_time_limit=None))[0]
    (tmp_path / "matches.jsonl").write_text(json.dumps({"key": first.key}) + "\nnot json\n")
    est = cost.estimate_tournament("tic_tac_toe", ["random", "gt-mcts"],
                                   TournamentPlan(matches=2, settings=FAST, move_time_limit=None), out_dir=tmp_path)
    assert est.matches == 3


def test_an_agent_that_cannot_be_built_is_untimed_and_no_total_is_printed(monkeypatch):
    real = cost.make_agent

    def make(spec, game, **kw):
        if spec == "gt-mcts":
            raise OSError("the worker could not start\nsecond line")
        return real(spec, game, **kw)

    monkeypatch.setattr(cost, "make_agent", make)
    est = cost.estimate_tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST))
    assert est.per_move_s["gt-mcts"] is None
    assert est.untimed["gt-mcts"] == "it could not be built (OSError: the worker could not start)"
    head, total = est.lines()
    assert "gt-mcts not timed" in head
    assert total.startswith("  2 matches: no total, as an agent could not be timed (gt-mcts: it could not be built (")
    assert "CPU" not in total and "\n" not in total


def test_a_spec_that_cannot_be_built_for_the_game_is_refused_before_any_probe():
    with pytest.raises(AgentSpecError, match="no/such/model.py"):
        cost.estimate_tournament("tic_tac_toe", ["random", "cwm:/no/such/model.py"], TournamentPlan(matches=1, settings=FAST))


class _FailsItsSecondMove(AgentBase):
    def __init__(self):
        self.moves = 0

    def step(self, state):
        self.moves += 1
        if self.moves == 2:
            raise ValueError("the model's legal_actions broke\nsecond line")
        return state.legal_actions()[0]


def test_an_agent_whose_probe_move_fails_is_not_counted_as_free(monkeypatch):
    real = cost.make_agent
    monkeypatch.setattr(cost, "make_agent", lambda spec, game, **kw: (
        _FailsItsSecondMove() if spec == "gt-mcts" else real(spec, game, **kw)))
    est = cost.estimate_tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST))
    assert est.untimed == {"gt-mcts": "a probe move failed (ValueError: the model's legal_actions broke)"}
    assert est.per_move_s["random"] is not None and est.per_move_s["gt-mcts"] is None
    assert "no total, as an agent could not be timed (gt-mcts: a probe move failed" in est.lines()[1]


def test_a_probe_counts_cpu_time_of_a_sandboxed_worker(tmp_path):
    # The CWM agent plans in a sandbox child: its moves cost this process almost nothing, the worker the
    # search. The estimate counts both (CPU of this process and its descendants).
    from pathlib import Path

    model = Path(__file__).parents[1] / "data" / "reference" / "tic_tac_toe_model.py"
    est = cost.estimate_tournament("tic_tac_toe", ["random", f"cwm:{model}"],
                                   TournamentPlan(matches=1, settings=FAST))
    assert not est.untimed, est.untimed
    assert est.per_move_s[f"cwm:{model}"] > 20 * est.per_move_s["random"]


def _big() -> cost.CostEstimate:
    return cost.CostEstimate({"gt-mcts": 30.0}, 200, 100, 600_000.0, 2)


def test_a_long_run_needs_yes_from_a_terminal_or_a_script(capsys, monkeypatch):
    for terminal in (True, False):
        monkeypatch.setattr(sys, "stdin", type("Stdin", (), {"isatty": lambda self, t=terminal: t})())
        with pytest.raises(UsageError, match="rerun with --yes"):
            cost.confirm(_big(), yes=False)
    cost.confirm(_big(), yes=True)
    assert "3.5 days" in capsys.readouterr().err


def test_cwm_arena_prints_the_estimate_and_records_it_with_the_real_time(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--matches", "2", "--sims", "10",
                 "--rollouts", "1", "--executor", "inline", "--out", str(out), "--no-progress"]) == 0
    assert "cost estimate: per move random" in capsys.readouterr().err
    record = json.loads((out / "cost.json").read_text())
    assert record["estimate"]["matches"] == 4 and record["elapsed_wall_s"] > 0
    assert record["elapsed_cpu_s"] > 0  # the run's CPU, beside the estimate's cpu_s


@pytest.mark.parametrize("matches, shown", [(6, None), (64, None), (200, "200 cores (one a match) 15.0 min")])
def test_the_estimate_names_one_core_a_match_where_a_cluster_could_give_more_than_its_sizes(matches, shown):
    est = cost.CostEstimate({"a": 1.0}, moves_per_match=100.0, matches=matches, cpu_s=matches * 900.0, workers=2)
    line = est.lines()[1]
    assert "16 cores" in line and "64 cores" in line
    if shown is None:
        assert "one a match" not in line
    else:
        assert f", {shown}; " in line
        assert est.wall_on(matches) == pytest.approx(900.0) == est.wall_on(10 * matches)  # no faster on more


@pytest.mark.parametrize("matches, per_match_s, cores", [
    (200, 1296.0, 100),  # docs/performance.md's backgammon twin: two whole matches a core in the hour
    (300, 470.0, 43),  # docs/arena.md's example: 7 matches a core (8 would take 3,760 s)
    (200, 1800.0, 100),  # two matches of exactly half an hour fit
    (200, 1800.5, 200),  # a little more: one a core
    (6, 100.0, 1),  # fits in an hour on one core
    (200, 3600.0, 200),  # one core a match, each match exactly the hour
])
def test_the_estimate_names_the_fewest_cores_that_fit_the_run_in_an_hour(matches, per_match_s, cores):
    est = cost.CostEstimate({"a": 1.0}, moves_per_match=100.0, matches=matches, cpu_s=matches * per_match_s,
                            workers=2)
    assert est.cores_for() == cores
    assert est.wall_on(cores) <= 3600.0 and (cores == 1 or est.wall_on(cores - 1) > 3600.0)
    assert est.lines()[1].endswith(f"; fits in an hour on {cores} core{'s' if cores > 1 else ''})")


def test_no_cluster_fits_a_run_whose_matches_each_take_more_than_an_hour():
    # docs/performance.md's backgammon model: CPU 18.2 days over 200 matches, 2.2 h a match
    est = cost.CostEstimate({"a": 1.0}, moves_per_match=118.0, matches=200, cpu_s=18.2 * 86400, workers=2)
    assert est.cores_for() is None and est.wall_on(10**6) > 3600.0
    assert est.lines()[1].endswith("; no cluster fits it in an hour: a match takes 2.2 h of CPU)")
    assert est.cores_for(wall_s=3 * 3600.0) == 200  # but one a match fits in three hours


def test_hanabi_is_projected_at_its_stated_match_length_not_its_random_games():
    """Random Hanabi loses the three lives in about 12 moves; a match that keeps a life plays to the end of the
    deck. The shipped direct-LLM team's recording (every reply is one decision) shows the stated length."""
    plan = TournamentPlan(matches=1, settings=FAST)
    est = cost.estimate_tournament("hanabi", ["random"], plan, executor="local:2")
    assert est.random_moves is not None and est.random_moves < 20
    assert est.moves_per_match == games.resolve("hanabi").match_moves == 75
    assert "~75 moves a match (the game's stated length; random games end after ~" in est.lines()[0]
    recorded = json.loads(RECORDED_TEAM.joinpath("provenance.json").read_text())
    per_match = recorded["replies"] / recorded["matches"]  # 201 decisions over 3 deals
    assert all(deal["score"] > 0 for deal in recorded["deals"])  # every deal kept a life
    assert 0.85 * est.moves_per_match <= per_match <= est.moves_per_match
    assert per_match > 3 * est.random_moves


def test_a_game_without_a_stated_length_is_projected_at_its_random_games():
    plan = TournamentPlan(matches=1, settings=FAST)
    est = cost.estimate_tournament("connect_four", ["random", "gt-mcts"], plan, executor="local:2")
    assert games.resolve("connect_four").match_moves is None
    assert est.random_moves is None and 7 <= est.moves_per_match <= 42
    assert "stated length" not in est.lines()[0]


def test_the_cores_named_agree_with_the_wall_time_projected_on_them_at_exact_divisors():
    """Float division at an exact divisor (a match of 3600/7 s) must not name a core more or fewer than the
    projection itself fits: the named count fits the hour, one core fewer does not."""
    rng = random.Random(0)
    cases = [(314, 3600.0 / 7), (15, 3600.0 / 4), (200, 1296.0)] + [
        (rng.randint(1, 400), 3600.0 / rng.randint(1, 12) * rng.choice([1.0, 1.0 + 1e-15, 1.0 - 1e-15]))
        for _ in range(2000)]
    for matches, per_match_s in cases:
        est = cost.CostEstimate({"a": 1.0}, moves_per_match=10.0, matches=matches, cpu_s=matches * per_match_s,
                                workers=2)
        cores = est.cores_for()
        if cores is None:
            assert est.wall_on(matches) > 3600.0
            continue
        assert est.wall_on(cores) <= 3600.0 and (cores == 1 or est.wall_on(cores - 1) > 3600.0), (matches, per_match_s)
