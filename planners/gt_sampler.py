"""GT-ISMCTS's sampler: a world sampler written for the game's engine where there is one
(``planners.worlds``: Hanabi, crazy eights), else the engine's own ``resample_from_infostate`` where it has
one, else the generic ground-truth resampler (``planners.gt_resample.HistoryResampler``); and the games where
none can work: those ``resampler_problem`` names from the game's type, and those where the sampler's
self-test (``resampler_self_test``: draws at reachable states, each checked by replay) finds no consistent
world.

Whether an engine resamples is found out once per game, by asking it once with file descriptor 2 silenced:
OpenSpiel's C++ prints every exception it raises, so asking on every draw would fill stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from cwm.files import quiet_stderr
from planners.gt_resample import HistoryResampler, ResampleFailure
from planners.info_key import info_key, keys_problem
from planners.worlds import WorldSampler, world_sampler


def resample_from_infostate(state: pyspiel.State, player: int, rng: np.random.Generator) -> pyspiel.State:
    """The ground-truth sampler: OpenSpiel's ``resample_from_infostate`` with a seeded uniform sampler."""
    return state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(int(rng.integers(2**31)), 0.0, 1.0))


class GroundTruthSampler:
    """A ``Sampler`` over real game states: the game's own world sampler (``planners.worlds``), else the
    engine's resampling, else ``HistoryResampler``.

    Args:
      max_nodes, max_steps: the generic resampler's budgets (``HistoryResampler``).

    Attributes:
      kinds: game string -> ``"game"``, ``"engine"`` or ``"generic"``, as found out on the first draw in that
        game.

    Randomness: each draw uses only the ``np.random.Generator`` it is given.
    """

    def __init__(self, *, max_nodes: int = 20_000, max_steps: int = 5_000):
        self.max_nodes = max_nodes
        self.max_steps = max_steps
        self.kinds: dict[str, str] = {}
        self._generic: dict[str, HistoryResampler] = {}
        self._worlds: dict[str, WorldSampler] = {}
        self.engine_draws = 0
        self.game_draws = 0

    def __call__(self, state: pyspiel.State, player: int, rng: np.random.Generator) -> pyspiel.State:
        game = str(state.get_game())
        kind = self.kinds.get(game)
        if kind is None:
            found = world_sampler(state.get_game())
            if found is not None:
                self._worlds[game] = found
                self.kinds[game] = kind = "game"
        if kind == "game":
            world = self._worlds[game](state, player, rng)
            self.game_draws += 1
            return world
        if kind == "generic":
            return self._generic_for(game)(state, player, rng)
        if kind is None:
            world = self._probe(game, state, player, rng)
            if world is None:
                return self._generic_for(game)(state, player, rng)
        else:
            world = resample_from_infostate(state, player, rng)
        self.engine_draws += 1
        return world

    def _probe(self, game: str, state: pyspiel.State, player: int, rng: np.random.Generator) -> pyspiel.State | None:
        """The engine's draw, or ``None`` when the engine has no resampling (then ``kinds[game]`` says so)."""
        try:
            with quiet_stderr():
                world = resample_from_infostate(state, player, rng)
        except pyspiel.SpielError as e:
            if not _not_implemented(e):
                raise
            self.kinds[game] = "generic"
            return None
        self.kinds[game] = "engine"
        return world

    def _generic_for(self, game: str) -> HistoryResampler:
        if game not in self._generic:
            self._generic[game] = HistoryResampler(max_nodes=self.max_nodes, max_steps=self.max_steps)
        return self._generic[game]

    def stats(self) -> dict[str, Any]:
        """How the draws were made: by the game's world sampler, by the engine, exactly, by rejection, and the
        generic draws that failed."""
        generic = list(self._generic.values())
        out: dict[str, Any] = {"engine_draws": self.engine_draws}
        if self.game_draws:
            out["game_draws"] = self.game_draws
        if generic:
            out |= {"exact_draws": sum(g.exact_draws for g in generic),
                    "rejection_draws": sum(g.rejection_draws for g in generic),
                    "failed_generic_draws": sum(g.failed_draws for g in generic)}
        if self.kinds:
            out["resampler"] = ",".join(sorted(set(self.kinds.values())))
        return out


def _not_implemented(error: Exception) -> bool:
    return "not implemented" in str(error).lower()


def resampler_problem(game: pyspiel.Game) -> str:
    """Why no ground-truth resampler can serve ISMCTS in ``game`` (``""`` when one can).

    ISMCTS keys its statistics by information states: the engine's strings, else each player's trace of
    observations (``planners.info_key``), so a game with neither strings cannot be searched; the generic
    resampler needs listed chance outcomes, so an engine that only samples its chance events serves only if
    it resamples itself.
    """
    name = str(game)
    if name not in _PROBLEMS:
        _PROBLEMS[name] = _problem(game)
    return _PROBLEMS[name]


_PROBLEMS: dict[str, str] = {}  # game string -> its problem (games are not hashable; their strings name them)


def _problem(game: pyspiel.Game) -> str:
    gtype = game.get_type()
    if gtype.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return f"{gtype.short_name} has simultaneous moves; ISMCTS plays turn-based games (pyspiel.convert_to_turn_based)"
    if _first_decision(game) is None:
        return ""  # no decision ever: nothing is searched
    problem = keys_problem(game)
    if problem:
        return f"ISMCTS keys its statistics by information states, and {problem}"
    if world_sampler(game) is not None or engine_resamples(game):
        return ""
    if gtype.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        return (f"{gtype.short_name} has no resample_from_infostate and samples its chance events without listing "
                f"their probabilities, so no consistent history can be weighted")
    return ""


def _first_decision(game: pyspiel.Game, max_chance: int = 10_000) -> pyspiel.State | None:
    """The first decision of a game whose chance events are drawn with a fixed seed (``None``: the game ends
    first, or chance moves on for ``max_chance`` events)."""
    rng = np.random.default_rng(0)
    with quiet_stderr():
        state = game.new_initial_state()
        for _ in range(max_chance):
            if not state.is_chance_node():
                break
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
    return None if state.is_terminal() or state.is_chance_node() else state


def engine_resamples(game: pyspiel.Game) -> bool:
    """Whether the engine implements ``resample_from_infostate``: asked once per game, quietly, at the first
    decision (an engine that has resampling but fails there counts as having it: its draws fail one by one,
    counted)."""
    name = str(game)
    if name not in _ENGINES:
        _ENGINES[name] = _engine_resamples(game)
    return _ENGINES[name]


_ENGINES: dict[str, bool] = {}


def _engine_resamples(game: pyspiel.Game) -> bool:
    state = _first_decision(game)
    if state is None:
        return True  # nothing to resample: the sampler is never asked
    try:
        with quiet_stderr():
            resample_from_infostate(state, state.current_player(), np.random.default_rng(0))
    except pyspiel.SpielError as e:
        return not _not_implemented(e)
    return True


SELF_TEST_STATES = 4  # decision states of one seeded random game where the self-test draws
SELF_TEST_DRAWS = 2  # draws at each of them


def resampler_self_test(game: pyspiel.Game, *, sampler: WorldSampler | None = None) -> str:
    """Why the ground-truth sampler cannot serve ISMCTS in ``game``, found by drawing (``""`` when it can).

    A game whose engine resamples passes untested. A game with its own world sampler (``planners.worlds``)
    is held to that sampler's claim: each of ``WORLD_TEST_DRAWS`` draws at each of ``WORLD_TEST_STATES``
    decision states spread over ``WORLD_TEST_GAMES`` seeded random games must give the player to act there
    the same trace (every observation and own action, replayed: ``planners.info_key``); one that does not
    is a wrong sampler and the game is refused. Otherwise the generic resampler draws ``SELF_TEST_DRAWS``
    worlds at each of ``SELF_TEST_STATES`` decision states of a seeded random game; when most draws find no
    world with that player's information state, an ISMCTS would play its random fallback on most moves, so the
    game is refused with the fix. Asked once per game per process.

    Args:
      game: the real game.
      sampler: test this sampler (``(state, player, rng) -> state``) as a game's world sampler instead (not remembered).

    Randomness: seeded (the same game, the same verdict).
    """
    if sampler is not None:
        return _world_test(game, sampler)
    name = str(game)
    if name not in _SELF_TESTS:
        found = world_sampler(game)
        if found is not None:
            _SELF_TESTS[name] = _world_test(game, found)
        else:
            _SELF_TESTS[name] = "" if engine_resamples(game) else _self_test(game)
    return _SELF_TESTS[name]


WORLD_TEST_GAMES = 2  # seeded random games whose decision states the world sampler's self-test draws at
WORLD_TEST_STATES = 16  # decision states of each, spread over the game
WORLD_TEST_DRAWS = 4  # draws at each


def _world_test(game: pyspiel.Game, sampler: WorldSampler) -> str:
    rng = np.random.default_rng(0)
    failed = total = 0
    first = ""
    for _ in range(WORLD_TEST_GAMES):
        with quiet_stderr():
            states = decision_states(game, rng)
        for state in _spread(states, WORLD_TEST_STATES):
            player = state.current_player()
            for _ in range(WORLD_TEST_DRAWS):
                total += 1
                why = _inconsistency(sampler, state, player, rng)
                failed += bool(why)
                first = first or (why and f"{why} at move {state.move_number()} of a random game")
    if not failed:
        return ""
    return (f"the world sampler of {game.get_type().short_name} drew {failed} of {total} worlds inconsistent with "
            f"the player's observations (first: {first}), so it is wrong and GT-ISMCTS would search worlds "
            f"the player knows are false")


def _inconsistency(sampler: WorldSampler, state: pyspiel.State, player: int, rng: np.random.Generator) -> str:
    """Why one draw is not consistent with ``player``'s information at ``state`` (``""``: it is)."""
    try:
        with quiet_stderr():
            world = sampler(state, player, rng)
            same = info_key(world, player) == info_key(state, player)
    except (ResampleFailure, pyspiel.SpielError, ValueError) as e:
        return f"the draw failed ({type(e).__name__}: {e})"
    return "" if same else "a drawn world replays other observations"


_SELF_TESTS: dict[str, str] = {}


def _self_test(game: pyspiel.Game) -> str:
    rng = np.random.default_rng(0)
    states = _spread_decisions(game, rng)
    sampler = GroundTruthSampler()
    failed = total = 0
    for state in states:
        player = state.current_player()
        for _ in range(SELF_TEST_DRAWS):
            total += 1
            try:
                with quiet_stderr():
                    world = sampler(state, player, rng)
                    ok = info_key(world, player) == info_key(state, player)
            except (ResampleFailure, pyspiel.SpielError):
                ok = False
            failed += not ok
    if 2 * failed <= total:
        return ""
    return (f"the generic ground-truth resampler found no world consistent with the player's information in "
            f"{failed} of {total} draws at reachable states of {game.get_type().short_name}, so ISMCTS would "
            f"play its random fallback on most moves; give the game's engine a resample_from_infostate "
            f"(pyspiel.State.resample_from_infostate), which gt-ismcts then uses")


def decision_states(game: pyspiel.Game, rng: np.random.Generator,
                    policy: Callable[[pyspiel.State, np.random.Generator], int] | None = None) -> list[pyspiel.State]:
    """The decision states of one game (chance by its probabilities), its moves chosen by ``policy(state, rng)``,
    uniformly at random without one."""
    state, found = game.new_initial_state(), []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            continue
        found.append(state.clone())
        if policy is not None:
            state.apply_action(policy(state, rng))
            continue
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])
    return found


def _spread_decisions(game: pyspiel.Game, rng: np.random.Generator) -> list[pyspiel.State]:
    """Up to ``SELF_TEST_STATES`` decision states spread over one random game (chance by its probabilities)."""
    with quiet_stderr():
        found = decision_states(game, rng)
    return _spread(found, SELF_TEST_STATES)


def _spread(found: list[pyspiel.State], count: int) -> list[pyspiel.State]:
    """Up to ``count`` of ``found``, evenly spread (the first and the last among them)."""
    if len(found) <= count:
        return found
    return [found[int(i)] for i in np.linspace(0, len(found) - 1, count)]
