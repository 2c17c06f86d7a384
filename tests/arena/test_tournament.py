"""Tournaments: complete, seeded and identical across executors; resumed without losing or repeating a
match (also after a kill -9); broken agents forfeit with the reason recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyspiel
import pytest

import cwm
from cwm.agents import RandomAgent, Settings
from cwm.agents.base import AgentError
from cwm.arena import ArenaError, MatchJob, load_results, plan_jobs, play_match, run_match, tournament
from cwm.arena.plan import TournamentPlan
from cwm.pipeline.on_policy import replay
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parent.parent / "data" / "planners"
FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_plan_covers_both_seats_and_is_seeded():
    jobs = plan_jobs("tic_tac_toe", ["random", "gt-mcts", "gt-ismcts"], TournamentPlan(matches=2, settings=FAST, seed=5))
    assert len(jobs) == 3 * 2 * 2
    assert {j.seats for j in jobs} == {("random", "gt-mcts"), ("gt-mcts", "random"), ("random", "gt-ismcts"),
                                       ("gt-ismcts", "random"), ("gt-mcts", "gt-ismcts"), ("gt-ismcts", "gt-mcts")}
    again = plan_jobs("tic_tac_toe", ["gt-mcts", "random", "gt-ismcts"], TournamentPlan(matches=2, settings=FAST, seed=5))
    assert {j.key: j.seed for j in jobs} == {j.key: j.seed for j in again}  # independent of order
    self_play = plan_jobs("tic_tac_toe", ["random"], TournamentPlan(matches=3, settings=FAST, pairings=[("random", "random")]))
    assert len(self_play) == 3
    with pytest.raises(ArenaError, match="at least two"):
        plan_jobs("tic_tac_toe", ["random"], TournamentPlan(matches=1, settings=FAST))


def test_tournament_writes_results_and_resumes_without_replaying(tmp_path):
    results = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=3, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    assert len(results) == 6 and len({r.key for r in results}) == 6
    for name in ("config.json", "matches.jsonl", "results.json", "results.csv", "results.md", "results.png"):
        assert (tmp_path / name).exists(), name
    for r in results:  # every match keeps the actions it applied: the game replays from them
        assert len(r.actions) == r.moves and replay("tic_tac_toe", r.actions).returns == r.returns
    before = (tmp_path / "matches.jsonl").read_text()
    again = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=3, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    assert (tmp_path / "matches.jsonl").read_text() == before
    assert again == results
    more = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=4, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    assert len(more) == 8 and len(_lines(tmp_path / "matches.jsonl")) == 8


def test_other_settings_in_the_same_folder_are_refused(tmp_path):
    tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    with pytest.raises(ArenaError, match="other settings"):
        tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=Settings(search=SearchConfig(num_simulations=21, rollouts=1))), out_dir=tmp_path, executor="inline", progress=False)


def test_a_torn_last_line_is_dropped_and_replayed(tmp_path):
    tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    path = tmp_path / "matches.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) - 40])  # a run killed while writing the last match
    assert len(load_results(path)) == 3
    results = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    assert len(results) == 4 and len(_lines(path)) == 4


def test_process_pool_gives_the_same_matches_as_inline(tmp_path):
    agents = ["random", "gt-mcts"]
    inline = tournament("tic_tac_toe", agents, TournamentPlan(matches=3, settings=FAST), out_dir=tmp_path / "a", executor="inline", progress=False)
    pooled = tournament("tic_tac_toe", agents, TournamentPlan(matches=3, settings=FAST), out_dir=tmp_path / "b", executor="local:2", progress=False)
    assert [(r.key, r.returns, r.moves) for r in inline] == [(r.key, r.returns, r.moves) for r in pooled]


def test_broken_model_forfeits_with_its_reason(tmp_path):
    broken = f"cwm:{DATA / 'broken' / 'syntax_error.py'}"
    crashes = f"cwm:{DATA / 'broken' / 'crashes.py'}"
    results = tournament("tic_tac_toe", ["random", broken, crashes], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)
    by_agent = {}
    for r in results:
        if r.forfeit_seat is not None:
            by_agent.setdefault(r.seats[r.forfeit_seat], set()).add((r.forfeit_kind, r.reason.split(" (")[0]))
    # the models are planned on in hardened workers: one that does not load cannot start its worker
    assert by_agent[broken] == {("exception", "AgentError: world model syntax_error could not start its planning "
                                              "worker")}
    assert {kind for kind, _ in by_agent[crashes]} == {"exception"}
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    row = next(r for r in rows if r["agent"] == broken and r["seat"] == "all" and r["opponent"] == "random")
    assert row["forfeits_exception"] == 2 and "syntax error" in row["forfeit_reasons"][0]


def test_run_match_is_a_pure_function_of_its_job():
    job = MatchJob("tic_tac_toe", "gt-mcts|random#0", ("gt-mcts", "random"), 123, FAST)
    a, b = run_match(job), run_match(job)
    assert a["returns"] == b["returns"] and a["moves"] == b["moves"]


def test_killed_run_resumes_with_no_match_lost_or_repeated(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "cwm.cli", "arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--matches",
           "30", "--sims", "600", "--rollouts", "3", "--executor", "local:2", "--out", str(out), "--no-progress"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(cwm.__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = out / "matches.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not path.exists() or len(path.read_text().splitlines()) < 8):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the run's own process group: the CLI and its pool workers
    proc.wait()
    finished_before = len(load_results(path))
    assert 8 <= finished_before < 60, "the run must be killed part-way"
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    keys = [r["key"] for r in _lines(path)]
    assert len(keys) == 60 and len(set(keys)) == 60
    assert "60 matches of tic_tac_toe" in done.stdout


class _Failing(RandomAgent):
    """A random agent whose ``method`` raises ``error`` (on the ``after``-th call of ``inform``)."""

    def __init__(self, method, error, after=0):
        super().__init__(seed=0)
        self.method, self.error, self.after, self.calls = method, error, after, 0

    def reset(self):
        if self.method == "reset":
            raise self.error

    def inform(self, action):
        self.calls += 1
        if self.method == "inform" and self.calls > self.after:
            raise self.error


class _Stale(AgentError):
    kind = "illegal"


@pytest.mark.parametrize("seat,method,error,kind,moves", [
    (0, "reset", RuntimeError("no reset today"), "exception", 0),
    (1, "reset", RuntimeError("no reset today"), "exception", 0),
    (0, "inform", KeyError("unknown move"), "exception", 3),
    (1, "inform", _Stale("history out of step"), "illegal", 3),
], ids=["reset-seat0", "reset-seat1", "inform-seat0", "inform-agent-error-seat1"])
def test_reset_or_inform_that_raises_forfeits_the_match(seat, method, error, kind, moves):
    failing = _Failing(method, error, after=2)
    seats = [failing, RandomAgent(seed=1)] if seat == 0 else [RandomAgent(seed=1), failing]
    returns, forfeit, got_kind, reason, got_moves = play_match(pyspiel.load_game("tic_tac_toe"), seats, seed=0)
    assert (forfeit, got_kind, got_moves) == (seat, kind, moves)
    assert type(error).__name__ in reason and returns[seat] == -1.0 and returns[1 - seat] == 1.0


@pytest.mark.parametrize("agents,settings,kwargs,message", [
    (["random", "llm:gemini"], FAST, {}, "GEMINI_API_KEY"),
    (["random", "llm:nosuchprovider"], FAST, {}, "nosuchprovider"),
    (["random", "gt-mcts"], Settings(search=SearchConfig(num_simulations=0, rollouts=1)), {}, "simulations"),
    (["random", "gt-mcts"], Settings(search=SearchConfig(num_simulations=20, rollouts=0)), {}, "rollouts"),
    (["random", "llm:gemini"], Settings(search=SearchConfig(num_simulations=0)), {}, "simulations"),  # even if no agent searches
    (["random", "gt-mcts"], FAST, {"matches": 0}, "matches"),
    (["random", "gt-mcts"], FAST, {"move_time_limit": 0.0}, "time limit"),
    (["random", "cwm:no/such/model.py"], FAST, {}, "neither"),
], ids=["llm-no-key", "llm-unknown-provider", "sims-0", "rollouts-0", "sims-0-no-searcher", "matches-0",
        "time-limit-0", "cwm-missing-file"])
def test_configuration_errors_stop_the_tournament_and_write_nothing(tmp_path, monkeypatch, agents, settings,
                                                                     kwargs, message):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "run"
    with pytest.raises(ArenaError, match=message):
        tournament("tic_tac_toe", agents, TournamentPlan(**{"matches": 1, "settings": settings, **kwargs}),
                   out_dir=out, executor="inline", progress=False)
    assert not out.exists()
    results = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=out, executor="inline", progress=False)  # the fixed spec plays: nothing was recorded
    assert len(results) == 2 and all(r.forfeit_seat is None for r in results)


def test_gt_mcts_on_an_imperfect_information_game_is_a_configuration_error(tmp_path):
    with pytest.raises(ArenaError, match="gt-mcts needs perfect information"):
        tournament("leduc_poker", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path / "run", executor="inline", progress=False)
    assert not (tmp_path / "run").exists()
    results = tournament("leduc_poker", ["random", "gt-ismcts"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path / "run", executor="inline", progress=False)
    assert len(results) == 2 and all(r.forfeit_seat is None for r in results)


@pytest.mark.parametrize("option,value", [("--matches", "0"), ("--sims", "0"), ("--rollouts", "0"),
                                          ("--move-time-limit", "0"), ("--llm-examples", "-1")],
                         ids=["matches-0", "sims-0", "rollouts-0", "time-limit-0", "llm-examples-negative"])
def test_cli_refuses_bad_numbers_with_one_line(tmp_path, capsys, option, value):
    from cwm.cli import main

    code = main(["arena", "tic_tac_toe", "--agents", "random,gt-mcts", option, value, "--out",
                 str(tmp_path / "run"), "--executor", "inline", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("cwm arena: error:") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_cli_llm_examples_reaches_the_settings(tmp_path, capsys):
    from cwm.cli import main

    out = tmp_path / "run"
    assert main(["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--matches", "1", "--sims", "20",
                 "--rollouts", "1", "--llm-examples", "4", "--out", str(out), "--executor", "inline",
                 "--no-progress"]) == 0
    assert json.loads((out / "config.json").read_text())["settings"]["llm_examples"] == 4


def test_the_python_example_in_the_docs_runs(tmp_path, monkeypatch, capsys):
    import re

    docs = Path(__file__).resolve().parents[2] / "docs" / "arena.md"  # the checkout (tests run on an installed cwm)
    blocks = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), re.S)
    assert blocks, "docs/arena.md has no Python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, str(docs), "exec"), {})
    assert (tmp_path / "runs" / "c4" / "matches.jsonl").exists()



def test_cli_leaf_reaches_the_search_settings(tmp_path):
    from cwm.cli import main

    out = tmp_path / "run"
    assert main(["arena", "tic_tac_toe", "--agents", "random,gt-mcts-py", "--matches", "1", "--sims", "20",
                 "--rollouts", "1", "--leaf", "rollout", "--max-rollout-steps", "3", "--out", str(out),
                 "--executor", "inline", "--no-progress"]) == 0
    search = json.loads((out / "config.json").read_text())["settings"]["search"]
    assert (search["leaf"], search["max_rollout_steps"]) == ("rollout", 3)
