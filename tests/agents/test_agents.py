"""Agents: spec parsing, the CWM agent with a correct model (no gap to GT-MCTS detected) and with broken ones
(forfeits whose reason names the problem), and the random agent."""

from __future__ import annotations

import dataclasses

import pyspiel
import pytest

from cwm.agents import (
    AgentSpec,
    AgentSpecError,
    CWMAgent,
    ISMCTSAgent,
    MCTSAgent,
    RandomAgent,
    Settings,
    check_agent,
    make_agent,
    parse_agent_spec,
    parse_agent_specs,
)
from cwm.agents.native import NativeISMCTSAgent, NativeMCTSAgent
from cwm.agents.worker import WorkerAgent
from cwm.arena import play_match
from cwm.games.oracle import oracle_model
from planners.config import SearchConfig

TTT = pyspiel.load_game("tic_tac_toe")


@pytest.mark.parametrize("text,kind,target", [
    ("random", "random", ""),
    ("gt-mcts", "gt-mcts", ""),
    ("gt-ismcts", "gt-ismcts", ""),
    ("cwm:models/ttt.py", "cwm", "models/ttt.py"),
    ("cwm:runs/bundle", "cwm", "runs/bundle"),
    ("llm:gemini", "llm", "gemini"),
    ("llm:openai:gpt-x", "llm", "openai:gpt-x"),
    ("llm+legal:gemini", "llm+legal", "gemini"),
])
def test_parse_agent_spec(text, kind, target):
    spec = parse_agent_spec(text)
    assert spec == AgentSpec(kind, target) and spec.label == text


@pytest.mark.parametrize("text,message", [
    ("alphazero", "unknown kind"), ("cwm", "needs an argument"), ("random:3", "takes no argument"),
    ("llm:", "needs an argument"),
])
def test_bad_agent_specs_are_refused(text, message):
    with pytest.raises(AgentSpecError, match=message):
        parse_agent_spec(text)


@pytest.mark.parametrize("text,kind,target,label", [
    ("cwm=cwm:/abs/run/bundle", "cwm", "/abs/run/bundle", "cwm"),
    ("ttt.v2=cwm:models/ttt.py", "cwm", "models/ttt.py", "ttt.v2"),
    ("llm=llm:openai:gpt-x", "llm", "openai:gpt-x", "llm"),
    ("mcts-1k=gt-mcts", "gt-mcts", "", "mcts-1k"),
    ("cwm:runs/a=b/model.py", "cwm", "runs/a=b/model.py", "cwm:runs/a=b/model.py"),  # "=" in a path: no name
])
def test_a_named_spec_is_labelled_by_its_name(text, kind, target, label):
    spec = parse_agent_spec(text)
    assert (spec.kind, spec.target, spec.label) == (kind, target, label)
    assert parse_agent_spec(str(spec)) == spec and str(spec) == text
    assert spec.bare == (text.partition("=")[2] if spec.name else text)


@pytest.mark.parametrize("text,message", [
    ("my bot=random", "not a letter followed by"), ("run/a=cwm:x.py", "not a letter followed by"),
    ("1st=random", "not a letter followed by"), ("=random", "not a letter followed by"),
    ("a|b=random", "not a letter followed by"), ("mine=", "needs a spec after '='"),
    ("gt-mcts=cwm:x.py", "another kind of agent's"), ("mine=alphazero", "unknown kind"),
], ids=["space", "path", "digit-first", "empty", "key-separator", "no-spec", "another-kind", "bad-kind"])
def test_malformed_names_are_refused(text, message):
    with pytest.raises(AgentSpecError, match=message):
        parse_agent_spec(text)


@pytest.mark.parametrize("text,message", [
    ("a=cwm:", "agent spec 'a=cwm:': cwm needs an argument"),
    ("a=b=cwm:x", "agent spec 'a=b=cwm:x': more than one NAME="),
    ("a=alphazero", "agent spec 'a=alphazero': unknown kind 'alphazero'"),
    ("my:bot=cwm:x.py", r"unknown kind 'my'.*a NAME= may not contain ':'"),
], ids=["no-target", "two-names", "bad-kind", "colon-in-name"])
def test_errors_quote_the_spec_as_typed(text, message):
    with pytest.raises(AgentSpecError, match=message):
        parse_agent_spec(text)


@pytest.mark.parametrize("target,hint", [
    ("runs/a=b/missing.py", False), ("missing.py", False), ("v2=cwm:missing.py", True)])
def test_a_missing_cwm_target_hints_at_names_only_when_one_was_likely_meant(target, hint):
    with pytest.raises(AgentSpecError, match="neither") as info:
        check_agent(f"cwm:{target}", "tic_tac_toe")
    assert ("may not contain ':'" in str(info.value)) == hint, str(info.value)


def test_agent_list_refuses_duplicates():
    assert [s.label for s in parse_agent_specs("random, gt-mcts")] == ["random", "gt-mcts"]
    with pytest.raises(AgentSpecError, match="twice"):
        parse_agent_specs("random,random")
    with pytest.raises(AgentSpecError, match="the label 'a' is given twice"):
        parse_agent_specs("a=random,a=gt-mcts")
    with pytest.raises(AgentSpecError, match="the label 'gt-mcts' is given twice"):
        parse_agent_specs("gt-mcts,gt-mcts=gt-mcts")


def test_make_agent_builds_each_kind(data_dir):
    settings = Settings(search=SearchConfig(num_simulations=20, rollouts=1))
    assert isinstance(make_agent("random", "tic_tac_toe", seed=0), RandomAgent)
    assert isinstance(make_agent("gt-mcts", "tic_tac_toe", settings=settings, seed=0), NativeMCTSAgent)
    assert isinstance(make_agent("gt-ismcts", "leduc_poker", settings=settings, seed=0), NativeISMCTSAgent)
    assert isinstance(make_agent("gt-mcts-py", "tic_tac_toe", settings=settings, seed=0), MCTSAgent)
    assert isinstance(make_agent("gt-ismcts-py", "leduc_poker", settings=settings, seed=0), ISMCTSAgent)
    agent = make_agent(f"cwm:{data_dir / 'ttt_model.py'}", "tic_tac_toe", settings=settings, seed=0)
    assert isinstance(agent, WorkerAgent)  # contained: the model runs in a hardened planning worker
    trusted = dataclasses.replace(settings, trust_models=True)
    assert isinstance(make_agent(f"cwm:{data_dir / 'ttt_model.py'}", "tic_tac_toe", settings=trusted, seed=0),
                      CWMAgent)
    with pytest.raises(AgentSpecError, match="gt-ismcts"):
        make_agent("gt-mcts", "leduc_poker")
    with pytest.raises(AgentSpecError, match="gt-mcts-py needs perfect information"):
        make_agent("gt-mcts-py", "leduc_poker")
    with pytest.raises(AgentSpecError, match="neither"):
        make_agent("cwm:/no/such/model.py", "tic_tac_toe")


def test_random_agent_plays_legal_moves():
    agent = RandomAgent(seed=0)
    state = TTT.new_initial_state()
    while not state.is_terminal():
        action = agent.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)


@pytest.mark.parametrize("which", ["oracle", "hand-written"])
def test_cwm_agent_with_a_correct_model_shows_no_detected_gap_to_gt_mcts(which, fixture_model, mean_ci):
    model = oracle_model("tic_tac_toe") if which == "oracle" else fixture_model("ttt_model.py")
    scores = []
    for i in range(16):
        cwm = CWMAgent(model, "tic_tac_toe", SearchConfig(num_simulations=300, rollouts=3), seed=i)
        gt = MCTSAgent(SearchConfig(num_simulations=300, rollouts=3), seed=1000 + i)
        returns, forfeit, kind, reason, _ = play_match(TTT, [cwm, gt] if i % 2 == 0 else [gt, cwm], seed=i)
        assert forfeit is None, reason
        scores.append(returns[i % 2])
    mean, lo, hi = mean_ci(scores)
    assert lo <= 0 <= hi, f"CWM agent ({which}) vs GT-MCTS: {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"


@pytest.mark.parametrize("fixture,seat,kind,reason", [
    ("broken/crashes.py", 0, "exception", "raised KeyError: 'board cell missing'"),
    ("broken/wrong_notation.py", 0, "exception", "'x[0,0]' of player 0 is not an action of this game"),
    ("broken/wrong_notation.py", 1, "exception", "rejects real move 0"),
    ("broken/hangs.py", 0, "timeout", "more than its limit of 1 s of CPU time"),
])
def test_cwm_agent_with_a_broken_model_forfeits_and_says_why(fixture, seat, kind, reason, fixture_model):
    agent = CWMAgent(fixture_model(fixture), "tic_tac_toe", SearchConfig(num_simulations=50, rollouts=1), seed=0)
    seats = [agent, RandomAgent(seed=1)] if seat == 0 else [RandomAgent(seed=1), agent]
    returns, forfeit, got_kind, got_reason, _ = play_match(TTT, seats, seed=0, move_time_limit=1.0)
    assert forfeit == seat and got_kind == kind
    assert reason in got_reason
    assert returns[seat] == -1.0 and returns[1 - seat] == 1.0


def test_cwm_agent_from_a_bundle_directory_uses_its_value_function(tmp_path, data_dir):
    from cwm.bundle import export_bundle
    from cwm.games import trajectories

    value_source = "def get_value(state, player_id):\n    return 0.0\n"
    bundle = export_bundle(tmp_path / "ttt_bundle", game="tic_tac_toe",
                           model_source=(data_dir / "ttt_model.py").read_text(),
                           train=trajectories.collect("tic_tac_toe", 5, seed=0), extra_sources={"value.py": value_source})
    settings = Settings(search=SearchConfig(num_simulations=30, rollouts=1), trust_models=True)
    agent = make_agent(f"cwm:{bundle}", "tic_tac_toe", settings=settings, seed=0)
    assert isinstance(agent, CWMAgent) and agent.mcts is not None and agent.mcts.value_fn is not None
    returns, forfeit, kind, reason, _ = play_match(TTT, [agent, RandomAgent(seed=0)], seed=0)
    assert forfeit is None, reason
    contained = make_agent(f"cwm:{bundle}", "tic_tac_toe", settings=dataclasses.replace(settings, trust_models=False),
                           seed=0)
    assert isinstance(contained, WorkerAgent) and "value.py" in contained.sources
    returns, forfeit, kind, reason, _ = play_match(TTT, [contained, RandomAgent(seed=0)], seed=0)
    contained.close()
    assert forfeit is None, reason


def test_check_agent_refuses_configuration_errors_without_running_model_code(data_dir, monkeypatch):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    check_agent(f"cwm:{data_dir / 'broken' / 'syntax_error.py'}", "tic_tac_toe")  # loading is the match's job
    with pytest.raises(AgentSpecError, match="perfect information"):
        check_agent("gt-mcts", "leduc_poker")
    with pytest.raises(AgentSpecError, match="neither"):
        check_agent(f"cwm:{data_dir / 'no_such_model.py'}", "tic_tac_toe")
    with pytest.raises(ValueError, match="GEMINI_API_KEY"):
        check_agent("llm:gemini", "tic_tac_toe")
    with pytest.raises(ValueError, match="simulations must be >= 1"):
        check_agent("gt-mcts", "tic_tac_toe", settings=Settings(search=SearchConfig(num_simulations=0)))


def test_settings_name_what_is_out_of_range():
    assert Settings().problems() == []
    problems = Settings(search=SearchConfig(num_simulations=0, rollouts=0), llm_retries=-1, llm_examples=-2).problems()
    assert [p.split(" must")[0] for p in problems] == ["simulations", "rollouts", "LLM retries", "LLM examples"]
