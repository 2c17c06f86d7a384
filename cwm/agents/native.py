"""GT-MCTS and GT-ISMCTS on OpenSpiel's C++ searchers (``MCTSBot``, ``ISMCTSBot``), with cwm's Python
planners standing in wherever the C++ search cannot run the game or the settings.

The C++ bots search the same tree as ``planners.MCTS`` / ``planners.ISMCTS`` at the same settings
(simulations, UCT constant, random rollouts per leaf, the solver), several times faster on long games,
but from their own random streams: a seeded C++ agent is reproducible, yet plays other moves than the
Python planner with the same seed (the parity test compares their strength, not their moves).

They are used only through ``step_with_policy`` on games implemented in C++: OpenSpiel's ``step()``
crashes the process on Python-defined games, and a C++ search of a Python game would call back into
Python at every node anyway. Where ``native_problem`` names a reason (a Python-defined game, a rollout
cap the C++ rollouts do not have, availability counts, an engine without ``resample_from_infostate``)
the agent plays with the Python planner instead and ``stats()`` says which one played.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from cwm.agents.base import AgentBase, ISMCTSAgent, MCTSAgent
from cwm.files import quiet_stderr
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.ismcts import resample_from_infostate

MAX_TREE_MB = 2000  # MCTSBot's tree memory cap; 1,000 simulations of backgammon use a few MB


def native_problem(game: pyspiel.Game, config: SearchConfig, *, imperfect: bool = False) -> str:
    """Why OpenSpiel's C++ search cannot stand in for cwm's Python planner here (``""`` when it can).

    Args:
      game: the real game.
      config: the search settings the agent must honour.
      imperfect: the agent is ISMCTS (availability counts are then a setting the C++ search lacks).
    """
    if type(game).__module__.partition(".")[0] != "pyspiel":  # pybind classes live in pyspiel and its submodules
        return "the game is defined in Python (OpenSpiel's C++ search cannot step it safely)"
    if config.max_rollout_steps is not None:
        return "a rollout cap is set (OpenSpiel's C++ rollouts always play to the end)"
    if imperfect and config.availability_counts:
        return "availability counts are on (OpenSpiel's C++ ISMCTS has none)"
    return ""


def native_seed(seed: int | np.random.Generator | None, config: SearchConfig) -> int:
    """An int seed for a C++ bot: ``seed`` itself, one draw from a Generator, ``config.seed`` for ``None``,
    or fresh entropy when that is ``None`` too (C++ seeds are 32-bit)."""
    if seed is None:
        seed = config.seed
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31))
    if seed is None:
        return int(np.random.default_rng().integers(2**31))
    return int(seed) % 2**31


class _NativeAgent(AgentBase):
    """A C++ bot for one game, with the Python agent it stands in for kept as the fallback."""

    engine = "openspiel-c++"

    def __init__(self, game: pyspiel.Game, config: SearchConfig, problem: str, seed: int):
        self.game = game
        self.config = config
        self.problem = problem
        self.moves = 0
        self._bot: Any = None
        self._fallback: Any = None
        self._seed = seed
        self._probed = False
        self._evaluator = pyspiel.RandomRolloutEvaluator(config.rollouts, seed)

    def step(self, state: pyspiel.State) -> int:
        self.moves += 1
        if not self._probed:
            self.problem = self.problem or self._state_problem(state)
            self._probed = True
        if self.problem:
            if self._fallback is None:
                self._fallback = self._python_agent()
            return int(self._fallback.step(state))
        if self._bot is None:
            self._bot = self._make_bot()
        _, action = self._bot.step_with_policy(state)
        return int(action)

    def stats(self) -> dict[str, Any]:
        """Which search played the moves (``openspiel-c++`` or ``python``) and, for Python, why, with the
        Python agent's own record (an ISMCTS's draws and fallback moves)."""
        if not self.problem:
            return {"engine": self.engine, "moves": self.moves}
        own = self._fallback.stats() if self._fallback is not None else {}
        return {**own, "engine": "python", "moves": self.moves, "why_python": self.problem}

    def _state_problem(self, state: pyspiel.State) -> str:
        return ""

    def _make_bot(self) -> Any:
        raise NotImplementedError

    def _python_agent(self) -> Any:
        raise NotImplementedError


class NativeMCTSAgent(_NativeAgent):
    """GT-MCTS on OpenSpiel's C++ ``MCTSBot`` (perfect-information games), else on ``planners.MCTS``.

    Args:
      game: the real game.
      config: the search settings (simulations, UCT constant, rollouts, solver).
      seed: an int, an ``np.random.Generator`` (one draw) or ``None`` (``config.seed``, else fresh entropy);
        it seeds both the tree policy and the rollouts (the C++ bot's own streams).
    """

    def __init__(self, game: pyspiel.Game, config: SearchConfig = DEFAULT_SEARCH, *,
                 seed: int | np.random.Generator | None = None):
        config.check("gt-mcts")
        super().__init__(game, config, native_problem(game, config), native_seed(seed, config))

    def _make_bot(self) -> Any:
        c = self.config
        return pyspiel.MCTSBot(self.game, self._evaluator, c.uct_c, c.num_simulations, MAX_TREE_MB, c.solve,
                               self._seed, False)

    def _python_agent(self) -> Any:
        return MCTSAgent(self.config, seed=self._seed)


class NativeISMCTSAgent(_NativeAgent):
    """GT-ISMCTS on OpenSpiel's C++ ``ISMCTSBot`` (the engine's ``resample_from_infostate`` draws the worlds),
    else on ``planners.ISMCTS`` with cwm's ground-truth sampler.

    The move is the most visited action, as in ``planners.ISMCTS``; worlds are drawn without limit.

    Args:
      game, config, seed: as in ``NativeMCTSAgent``.
    """

    def __init__(self, game: pyspiel.Game, config: SearchConfig = DEFAULT_SEARCH, *,
                 seed: int | np.random.Generator | None = None):
        config.check("gt-ismcts")
        super().__init__(game, config, native_problem(game, config, imperfect=True), native_seed(seed, config))

    def _state_problem(self, state: pyspiel.State) -> str:
        try:
            with quiet_stderr():  # OpenSpiel's C++ prints the exception it raises
                resample_from_infostate(state, state.current_player(), np.random.default_rng(0))
        except pyspiel.SpielError:
            return ("the engine has no resample_from_infostate (cwm's ground-truth sampler serves instead: the "
                    "game's world sampler, else the generic resampler)")
        return ""

    def _make_bot(self) -> Any:
        c = self.config
        return pyspiel.ISMCTSBot(self._seed, self._evaluator, c.uct_c, c.num_simulations, -1,
                                 pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False)

    def _python_agent(self) -> Any:
        return ISMCTSAgent(self.config, seed=self._seed)
