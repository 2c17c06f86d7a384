"""The host game: an untrusted model that is the game runs only in a sandbox session, and every view it sends
back is checked here, whatever the code that answered claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import games
from cwm.sandbox import Sandbox
from cwm.sandbox.host import MAX_VIEW_CHARS, HostFailure, HostGame, game_codec, read_view

from .conftest import REFERENCE_TTT as TTT

TIC_TAC_TOE = games.resolve("tic_tac_toe")
CODEC = game_codec("tic_tac_toe")
OBS = {"board": ["."] * 9, "current_player": "x"}
GOOD = {"player": 0, "legal": ["x(0,0)", "x(1,1)"], "observations": [OBS, OBS]}


class Spinning(str):
    """A str subclass whose hash and equality would hang or lie if library code ever called them."""

    def __hash__(self) -> int:
        raise AssertionError("the str subclass's __hash__ was called")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("the str subclass's __eq__ was called")


def read(view: object):  # noqa: ANN201
    return read_view(view, num_players=2, codec=CODEC, utility=(-1.0, 1.0))


def test_a_good_view_is_read_into_exact_values() -> None:
    view = read(dict(GOOD, legal=[Spinning("x(0,0)"), "x(1,1)"]))
    assert view.player == 0 and view.legal == ("x(0,0)", "x(1,1)")
    assert all(type(a) is str for a in view.legal)
    done = read({"player": -4, "observations": [OBS, OBS], "returns": [1, -1.0]})
    assert done.returns == (1.0, -1.0) and done.legal == ()


@pytest.mark.parametrize("change, words", [
    ({"player": True}, "a bool is not an int"),
    ({"player": 7}, "expected 0..1"),
    ({"player": "0"}, "get_current_player returned"),
    ({"legal": ["x(0,0)", "x(0,0)"]}, "duplicate"),
    ({"legal": ["x(9,9)"]}, "not an action of this game"),
    ({"legal": ["x(0,0)"] + [f"pad{i}" for i in range(20)]}, "more than the game's 9"),
    ({"legal": ["x" * 5000]}, "5,000 characters"),
    ({"legal": []}, "no legal actions"),
    ({"legal": "x(0,0)"}, "must return a list"),
    ({"observations": [OBS]}, "one observation per player"),
    ({"observations": [OBS, {"board": float("nan")}]}, "only finite numbers"),
    ({"observations": [OBS, {"big": 10**5000}]}, "too long to write as JSON"),
    ({"observations": [OBS, "y" * (MAX_VIEW_CHARS + 1)]}, "over 1,000,000"),
    ({"player": -4, "returns": [float("nan"), 0.0]}, "finite"),
    ({"player": -4, "returns": [float("inf"), 0.0]}, "finite"),
    ({"player": -4, "returns": [1e300, -1e300]}, "outside the game's utility range"),
    ({"player": -4, "returns": [1.0]}, "list of 2 numbers"),
    ({"player": -4, "returns": [True, False]}, "bool"),
    ({"player": -1, "chance": [["x(0,0)", 0.5]]}, "sum to 1"),
    ({"player": -1, "chance": [["x(0,0)", 1.5], ["x(1,1)", -0.5]]}, "> 0"),
])
def test_a_hostile_view_ends_the_game_with_a_named_rule(change: dict, words: str) -> None:
    with pytest.raises(HostFailure, match="rules refuse") as caught:
        read(dict(GOOD, **change))
    assert caught.value.kind == "value" and words in str(caught.value)


@pytest.mark.parametrize("view", [["not", "a", "view"], None, 12])
def test_a_view_that_is_not_an_object_is_refused(view: object) -> None:
    with pytest.raises(HostFailure, match="a view is an object"):
        read(view)


def test_the_hosts_own_words_for_its_breach_come_back_cleaned() -> None:
    with pytest.raises(HostFailure) as caught:
        read({"failed": "apply_action raised\x1b[2J ValueError"})
    assert caught.value.kind == "contract" and "\x1b" not in str(caught.value) and "\\x1b" in str(caught.value)


def test_the_reference_model_hosts_a_whole_game() -> None:
    with HostGame(TTT, TIC_TAC_TOE, name="ref") as host:
        state = host.start()
        assert state.current_player() == 0 and len(state.legal_actions()) == 9
        for square in ("x(0,0)", "o(1,0)", "x(0,1)", "o(1,1)", "x(0,2)"):
            state = host.apply(state, square)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert state.moves == ("x(0,0)", "o(1,0)", "x(0,1)", "o(1,1)", "x(0,2)") and state.movers == (0, 1, 0, 1, 0)
    assert state.view.observations[1]["board"][:3] == ["x", "x", "x"]


def test_a_host_that_breaks_the_contract_fails_the_game() -> None:
    nan_rewards = TTT.replace('        return [1.0, -1.0]', '        return [float("nan"), -1.0]')
    assert nan_rewards != TTT
    with HostGame(nan_rewards, TIC_TAC_TOE, name="nan") as host:
        state = host.start()
        for square in ("x(0,0)", "o(1,0)", "x(0,1)", "o(1,1)"):
            state = host.apply(state, square)
        with pytest.raises(HostFailure, match="get_rewards") as caught:
            host.apply(state, "x(0,2)")
    assert caught.value.kind == "contract"


def test_a_host_over_its_cpu_budget_is_stopped() -> None:
    spins = TTT.replace("def apply_action(state, action):\n", "def apply_action(state, action):\n    while True:\n"
                                                                 "        pass\n")
    with HostGame(spins, TIC_TAC_TOE, name="spin", cpu_s=0.3) as host:
        state = host.start()
        with pytest.raises(HostFailure, match="budget") as caught:
            host.apply(state, "x(0,0)")
    assert caught.value.kind == "timeout"


PROBE = '''

MARKER = "/tmp/cwm-hostile-selection-host"


def _probe():
    found = []
    try:
        with open(MARKER, "w") as f:
            f.write("pwned")
        found.append("wrote")
    except Exception as e:
        found.append(type(e).__name__)
    try:
        found.append(__import__("os").environ.get("CWM_SELECTION_API_KEY", "unset"))
    except Exception as e:
        found.append(type(e).__name__)
    try:
        import random
        random._os.open(MARKER, 0o101)
        found.append("opened")
    except Exception as e:
        found.append(type(e).__name__)
    return found
'''
HOSTILE = TTT.replace('    return [obs, dict(obs, board=list(obs["board"]))]',
                      '    obs["probe"] = _probe()\n    return [obs, dict(obs, board=list(obs["board"]))]') + PROBE


def test_a_hostile_host_can_neither_write_a_file_nor_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the static gate off, the runtime layers alone stop it: the host plays on, and what it found is
    only the errors it met (the secret exists in this process's environment all along)."""
    assert HOSTILE.endswith(PROBE) and '"probe"' in HOSTILE
    marker = Path("/tmp/cwm-hostile-selection-host")
    marker.unlink(missing_ok=True)
    monkeypatch.setenv("CWM_SELECTION_API_KEY", "sk-canary-7f3a")
    with Sandbox() as box, HostGame(HOSTILE, TIC_TAC_TOE, name="hostile", sandbox=box, gate=False) as host:
        # the sandbox starts now, with the secret in the environment it inherits from
        state = host.apply(host.start(), "x(1,1)")
    probes = [o["probe"] for v in state.views for o in v.observations]
    assert probes and all(p == ["NameError", "ImportError", "AttributeError"] for p in probes), probes
    assert "sk-canary-7f3a" not in repr(state.views)
    assert not marker.exists()


def test_the_gate_refuses_the_hostile_host_before_it_runs() -> None:
    with HostGame(HOSTILE, TIC_TAC_TOE, name="hostile") as host, pytest.raises(HostFailure, match="open") as caught:
        host.start()
    assert caught.value.kind == "static"
