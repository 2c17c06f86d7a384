"""Fixtures of the checks tests. For the contract tests: recorded trajectories, the known-good models in
tests/data, and the contract mutants (small patches of them, each breaking or bending one value rule of the
contract). For the inference checks: the reference Leduc model loaded, and an inference function that searches
the model itself for a consistent history (a hand-written test fixture, exact but slow); the recorded Leduc
games and the model's source are shared with the synthesis tests (tests/conftest.py). For the value checks:
the reference tic-tac-toe model and hand-written value functions for it (a sound one, its sign-flipped twin,
one that says nothing).

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where test
folders are not on sys.path.
"""

from __future__ import annotations

import functools
import importlib.util
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cwm import games, model, value_rules
from cwm.games import trajectories
from cwm.sandbox import load_source

DATA = Path(__file__).resolve().parent.parent / "data"
NUM_TRAJECTORIES = 20

VALUES = DATA / "values"
TTT = (DATA / "reference" / "tic_tac_toe_model.py").read_text()
GOOD = (VALUES / "tic_tac_toe_value.py").read_text()
FLIPPED = (VALUES / "tic_tac_toe_value_flipped.py").read_text()
NEUTRAL = (VALUES / "neutral_value.py").read_text()

# game -> its known-good model in tests/data (the source the contract mutants patch)
KNOWN_GOOD = {
    "tic_tac_toe": "reference/tic_tac_toe_model.py",
    "leduc_poker": "reference/leduc_poker_model.py",
    "quadranto": "games/quadranto_cwm.py",
}

_DEAL = '    return [(f"Chance outcome:{c}", 1.0 / len(deck)) for c in deck]'
_DEALT = '    outcomes = [(f"Chance outcome:{c}", 1.0 / len(deck)) for c in deck]\n'

# game -> mutant -> (old text, new text (or tuples of them), whether it breaks a rule both the checks and
# ModelState enforce).
# Each differs from the known-good model by the one value it is named after.
CONTRACT_MUTANTS: dict[str, dict[str, tuple[Any, Any, bool]]] = {
    "tic_tac_toe": {
        "bool_current_player": ('    return state["player"]\n', '    return bool(state["player"])\n', True),
        "nan_reward": ('if winner == "x":\n        return [1.0, -1.0]',
                       'if winner == "x":\n        return [float("nan"), -1.0]', True),
        "legal_actions_write_their_state": ('    symbol = SYMBOLS[state["player"]]',
                                            '    state["asked"] = True\n    symbol = SYMBOLS[state["player"]]', True),
        "mixed_key_types": ('return {"board": ["."] * 9, "player": 0}',
                            'return {"board": ["."] * 9, "player": 0, 7: "seven", None: [1.5]}', False),
        "keys_json_writes_alike": ('return {"board": board, "player": 1 - state["player"]}',
                                   'return {"board": board, "player": 1 - state["player"], 1: 0, "1": 0}', True),
        "id_prefixed_action": ('return [f"{symbol}', 'return ["99 - anything"] + [f"{symbol}', True),
        "unknown_action_strings": ('return [f"{symbol}(', 'return [f"{symbol.upper()}(', True),
        "observation_raises_at_the_end": ('        current = "Terminal"',
                                          '        raise ValueError("no observation of a finished game")', True),
        "player_who_does_not_own_the_actions": ('    return state["player"]\n', '    return 1 - state["player"]\n', True),
        "chance_node_without_outcomes": ('    return state["player"]\n',
                                         '    return -1 if state["board"].count(".") == 4 else state["player"]\n', True),
        "reward_too_large_for_a_float": ('if winner == "x":\n        return [1.0, -1.0]',
                                         'if winner == "x":\n        return [10 ** 400, -1.0]', True),
    },
    "leduc_poker": {
        "float_observations": ('"round": state["round"],', '"round": float(state["round"]),', False),
        "duplicate_chance_outcome": (_DEAL, _DEALT + "    return outcomes + outcomes[:1]", True),
        "nan_chance_probability": (_DEAL, _DEALT + '    return [(outcomes[0][0], float("nan"))] + outcomes[1:]', True),
        # never offers Fold, and returns its input for it: a state play never applies Fold to (a mismatch)
        "input_returned_for_an_action_never_offered": (
            ('if state["ante"][1 - player] > state["ante"][player]:\n        actions.append("Fold")',
             'if action == "Fold":\n        new["folded"] = player'),
            ('if False:\n        actions.append("Fold")', 'if action == "Fold":\n        return state'), False),
        "legal_actions_raise_at_chance_nodes": ('        return [f"Chance outcome:{c}" for c in _deck(state)]',
                                                '        raise ValueError("ask get_chance_outcomes")', True),
    },
    "quadranto": {
        "float_observations": ('"moves_made": state["moves"]', '"moves_made": float(state["moves"])', False),
    },
}


# Every other model in tests/data whose game has a ground truth (known-good or broken on purpose), by game.
OTHER_MODELS: dict[str, tuple[str, ...]] = {
    "tic_tac_toe": ("planners/ttt_model.py", "synthesis/ttt_correct.py",
                    "synthesis/ttt_v1_no_diagonals_bad_terminal.py", "synthesis/ttt_v2_no_diagonals.py",
                    "planners/broken/crashes.py", "planners/broken/wrong_notation.py",
                    "planners/broken/poisoned_message.py"),
    "hand_of_war": ("games/hand_of_war_cwm.py",),
    "gen_chess": ("games/gen_chess_cwm.py",),
    f"{DATA / 'foundation' / 'tiny_nim.py'}:tiny_nim": ("foundation/tiny_nim_model.py",),
}


def _reference_mutants() -> dict[str, dict[str, tuple[str, str, str, str]]]:
    """The mutant table of test_reference_models.py (read from the file: test modules are not importable)."""
    path = Path(__file__).parent / "test_reference_models.py"
    spec = importlib.util.spec_from_file_location("_reference_mutants", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MUTANTS  # type: ignore[no-any-return]


def every_model() -> list[tuple[str, str, str]]:
    """``(game, label, source)`` of every model in tests/data and every mutant of them (reference and contract
    mutants)."""
    cases = [(game, KNOWN_GOOD[game], known_good_source(game)) for game in KNOWN_GOOD]
    cases += [(game, path, (DATA / path).read_text(encoding="utf-8")) for game, paths in OTHER_MODELS.items()
              for path in paths]
    for game, table in _reference_mutants().items():
        cases += [(game, f"{game}-{name}", patched(game, old, new)) for name, (old, new, _, _) in table.items()]
    for game, contract_table in CONTRACT_MUTANTS.items():
        cases += [(game, f"{game}-{name}", patched(game, old, new)) for name, (old, new, _) in contract_table.items()]
    return cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests that take ``any_model`` run once per model of ``every_model()``; tests that take
    ``contract_mutant`` once per ``(game, name, breaks a rule)`` of ``CONTRACT_MUTANTS``."""
    if "any_model" in metafunc.fixturenames:
        cases = every_model()
        metafunc.parametrize("any_model", cases, ids=[label for _, label, _ in cases])
    if "contract_mutant" in metafunc.fixturenames:
        mutants = [(game, name, breaks) for game, table in CONTRACT_MUTANTS.items()
                   for name, (_, _, breaks) in table.items()]
        metafunc.parametrize("contract_mutant", mutants, ids=[f"{g}-{n}" for g, n, _ in mutants])


def known_good_source(game: str) -> str:
    return (DATA / KNOWN_GOOD[game]).read_text(encoding="utf-8")


def patched(game: str, old: str | tuple[str, ...], new: str | tuple[str, ...]) -> str:
    """The known-good source of ``game`` with ``old`` replaced by ``new`` (or each of a tuple of patches)."""
    source = known_good_source(game)
    for o, n in zip((old,) if isinstance(old, str) else old, (new,) if isinstance(new, str) else new, strict=True):
        assert source.count(o) == 1, f"the patch target {o!r} must occur exactly once in {KNOWN_GOOD[game]}"
        source = source.replace(o, n)
    return source


@functools.cache
def codec(game: str) -> model.ActionCodec:
    return model.ActionCodec.from_game(games.load_game(game))


def world_model(game: str, source: str, name: str, *, gate: bool = True,
                guard: model.Guard = model.direct_guard) -> model.WorldModel:
    return model.WorldModel(load_source(source, name=name, gate=gate), codec=codec(game), name=name, guard=guard)


@functools.cache
def _recorded(game: str) -> tuple[trajectories.Trajectory, ...]:
    return tuple(trajectories.collect(game, NUM_TRAJECTORIES, seed=0))


@pytest.fixture(scope="session")
def recorded() -> Callable[[str], list[trajectories.Trajectory]]:
    """``recorded(game)``: 20 ground-truth trajectories of ``game`` (seeds 0..19), recorded once."""
    return lambda game: list(_recorded(game))


@pytest.fixture(scope="session")
def make_model() -> Callable[..., model.WorldModel]:
    """``make_model(game, source, name, gate=True, guard=...)``: a WorldModel with the game's action ids."""
    return world_model


@pytest.fixture(scope="session")
def mutant() -> Callable[..., model.WorldModel]:
    """``mutant(game, name, guard=...)``: the contract mutant ``name`` of ``game`` (``CONTRACT_MUTANTS``)."""

    def make(game: str, name: str, *, guard: model.Guard = model.direct_guard) -> model.WorldModel:
        old, new, _ = CONTRACT_MUTANTS[game][name]
        return world_model(game, patched(game, old, new), f"{game}_{name}", guard=guard)

    return make


@pytest.fixture(scope="session")
def known_good() -> Callable[..., model.WorldModel]:
    """``known_good(game, guard=...)``: the known-good model of ``game`` in tests/data."""
    return lambda game, *, guard=model.direct_guard: world_model(game, known_good_source(game), f"{game}_good",
                                                                 guard=guard)


@pytest.fixture(scope="session")
def patched_model() -> Callable[..., model.WorldModel]:
    """``patched_model(game, old, new, extra="", gate=True, guard=...)``: the known-good model of ``game`` with
    ``old`` (which must occur once) replaced by ``new``, and ``extra`` appended."""

    def make(game: str, old: str, new: str, *, extra: str = "", gate: bool = True,
             guard: model.Guard = model.direct_guard) -> model.WorldModel:
        return world_model(game, patched(game, old, new) + extra, f"{game}_patched", gate=gate, guard=guard)

    return make


def model_search_inference(module):  # noqa: ANN001, ANN201
    """A ``resample_history`` for ``module`` that walks the model's own game tree, depth first in a seeded
    random order, pruning every branch where the player's observation or own action differs."""

    def resample_history(events, player_id, seed):  # noqa: ANN001, ANN202
        rng = random.Random(seed)
        wanted = [value_rules.canonical(e["observation"]) for e in events]

        def walk(state, depth):  # noqa: ANN001, ANN202
            if not value_rules.same(value_rules.canonical(module.get_observations(state)[player_id]), wanted[depth]):
                return None
            if depth == len(events) - 1:
                return []
            own = events[depth]["action"]
            mover = module.get_current_player(state)
            if (mover == player_id) != (own is not None):
                return None
            options = [own] if own is not None else list(module.get_legal_actions(state))
            rng.shuffle(options)
            for action in options:
                rest = walk(module.apply_action(state, action), depth + 1)
                if rest is not None:
                    return [action, *rest]
            return None

        found = walk(module.get_initial_state(), 0)
        if found is None:
            raise ValueError("no history of the model matches these events")
        return found

    return resample_history


@pytest.fixture(scope="session")
def leduc_module(leduc_source):
    return load_source(leduc_source, name="leduc_reference")
