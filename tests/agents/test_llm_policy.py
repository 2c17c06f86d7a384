"""The direct LLM policy, offline through ScriptedClient: a legal answer, an illegal answer then a
corrected one, garbage until forfeit, the prompt's contents, and LLM errors."""

from __future__ import annotations

import dataclasses

import pyspiel
import pytest

import prompts
from cwm.agents import AgentError, IllegalMoveError, LLMPolicyAgent, RandomAgent, parse_action
from cwm.arena import play_match
from cwm.llm import ScriptedClient

TTT = pyspiel.load_game("tic_tac_toe")


@pytest.mark.parametrize("reply,move", [
    ("I take the centre.\nACTION: x(1,1)", "x(1,1)"),
    ("ACTION: `x(0,2)`", "x(0,2)"),
    ("**ACTION:** x(2,2)", "x(2,2)"),
    ("action: Call", "Call"),
    ("ACTION: x(0,0)\nwait, better:\nACTION: x(1,1)", "x(1,1)"),
    ("I would play x(1,1).", None),
    ("ACTION:   ", None),
])
def test_parse_action(reply, move):
    assert parse_action(reply) == move


def _first_move(client, **kwargs):
    agent = LLMPolicyAgent(client, "tic_tac_toe", num_examples=1, seed=0, **kwargs)
    return agent, agent.step(TTT.new_initial_state())


def test_legal_answer_is_played():
    client = ScriptedClient(["Centre is strongest.\nACTION: x(1,1)"])
    agent, action = _first_move(client)
    assert action == 4
    assert [e["outcome"] for e in agent.log] == ["legal"]
    prompt = client.calls[0].messages[0].text
    assert "## Rules" in prompt and "Example 1" in prompt and "You are player 0" in prompt
    assert "legal moves" not in prompt  # not listed by default
    assert client.calls[0].tag == "policy/step" and "ACTION:" in client.calls[0].system


def test_legal_moves_are_listed_on_request():
    client = ScriptedClient(["ACTION: x(0,0)"])
    _first_move(client, list_legal=True)
    assert "## Your legal moves\nx(0,0), x(0,1)" in client.calls[0].messages[0].text


def test_illegal_answer_then_corrected():
    client = ScriptedClient(["ACTION: x(3,3)", "Sorry.\nACTION: x(0,1)"])
    agent, action = _first_move(client, max_retries=2)
    assert action == 1
    assert [e["outcome"] for e in agent.log] == ["illegal", "legal"]
    rethink = client.calls[1].messages
    assert [m.role for m in rethink] == ["user", "assistant", "user"]
    assert "`x(3,3)` is not legal" in rethink[2].text and "Attempts left after this one: 1" in rethink[2].text


def test_garbage_until_forfeit():
    client = ScriptedClient(["no idea", "still thinking", "ACTION: resign", "blah"])
    agent = LLMPolicyAgent(client, "tic_tac_toe", num_examples=0, max_retries=3, seed=0)
    returns, forfeit, kind, reason, moves = play_match(TTT, [agent, RandomAgent(seed=0)], seed=0)
    assert (forfeit, kind, moves) == (0, "illegal", 0)
    assert "no legal move after 4 attempts" in reason
    assert returns == [-1.0, 1.0]
    assert [e["outcome"] for e in agent.log] == ["unreadable", "unreadable", "illegal", "unreadable"]
    assert [e["attempt"] for e in agent.log] == [0, 1, 2, 3]
    assert "no line of the form" in client.calls[1].messages[-1].text


def test_llm_failure_forfeits_as_an_exception():
    client = ScriptedClient([])  # exhausted at once: raises LLMError
    agent = LLMPolicyAgent(client, "tic_tac_toe", num_examples=0, seed=0)
    with pytest.raises(AgentError, match="the LLM call failed"):
        agent.step(TTT.new_initial_state())
    assert agent.log[-1]["outcome"] == "llm_error"


def test_plays_a_whole_game_from_the_second_seat_with_history():
    replies = [f"ACTION: o({r},{c})" for r in range(3) for c in range(3)]
    client = ScriptedClient(replies)
    agent = LLMPolicyAgent(client, "tic_tac_toe", num_examples=0, max_retries=8, seed=0)
    returns, forfeit, kind, reason, moves = play_match(TTT, [RandomAgent(seed=3), agent], seed=0)
    assert forfeit is None, reason
    last_prompt = client.calls[-1].messages[0].text
    assert "Moves so far (chance outcomes included): x(" in last_prompt
    assert not any(e["outcome"] == "unreadable" for e in agent.log)


def test_imperfect_information_prompt_shows_only_own_view():
    game = pyspiel.load_game("leduc_poker")
    client = ScriptedClient(["ACTION: Call"])
    agent = LLMPolicyAgent(client, "leduc_poker", num_examples=1, seed=0)
    state = game.new_initial_state()
    state.apply_action(0)  # player 0's private card
    state.apply_action(5)  # player 1's private card: must not appear in player 0's prompt
    assert agent.step(state) == 1
    prompt = client.calls[0].messages[0].text
    assert '"private": 0' in prompt and '"private": 5' not in prompt.split("## This game so far")[1]


def test_forfeit_error_type():
    client = ScriptedClient(["nope"])
    agent = LLMPolicyAgent(client, "tic_tac_toe", num_examples=0, max_retries=0, seed=0)
    with pytest.raises(IllegalMoveError, match="after 1 attempts"):
        agent.step(TTT.new_initial_state())


def _piece(name, **values):
    return prompts.render(f"policy/{name}.md", **values).rstrip("\n")


def test_placeholder_texts_come_from_prompt_files():
    """Empty history, no examples, and the "you played" marker are prompt files, not Python strings."""
    from cwm.agents import llm as llm_policy

    client = ScriptedClient(["ACTION: x(1,1)"])
    LLMPolicyAgent(client, "tic_tac_toe", num_examples=0, seed=0).step(TTT.new_initial_state())
    prompt = client.calls[0].messages[0].text
    assert prompts.render("policy/history_perfect.md", moves=_piece("no_moves")) in prompt
    assert "## Example games" in prompt and _piece("no_examples") in prompt.split("## Example games")[1]

    game = pyspiel.load_game("leduc_poker")
    client = ScriptedClient(["ACTION: Call", "ACTION: Call"])
    agent = LLMPolicyAgent(client, "leduc_poker", num_examples=1, seed=0)
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(5)
    agent.step(state)
    first = client.calls[0].messages[0].text
    assert llm_policy._events_text([]) == _piece("no_events")  # nothing seen yet (no leduc state has it)
    assert _piece("event_moved", observation="", action="").strip() in first  # the example's own moves
    state.apply_action(1)  # player 0 calls
    state.apply_action(1)  # player 1 calls: a public card comes next
    state.apply_action(2)
    agent.step(state)
    later = client.calls[1].messages[0].text.split("## This game so far")[1]
    assert _piece("event_moved", observation="", action="Call").strip() in later


def test_a_game_without_rules_text_says_so_from_the_prompt_file():
    from cwm.agents import llm as llm_policy

    spec = llm_policy.games.resolve("tic_tac_toe")
    missing = dataclasses.replace(spec, rules="")
    assert llm_policy._rules(missing) == _piece("no_rules", openspiel=spec.openspiel)
