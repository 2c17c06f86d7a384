"""Information-set MCTS: one search tree per acting player's information state, over sampled worlds.

Each simulation draws a full state (a "determinization") consistent with what the searching player
knows, from a sampler: ground-truth resampling (``resample_from_infostate``) for GT-ISMCTS, or a
synthesized inference function for CWM agents. Statistics live in nodes keyed by the information-state
string of whoever acts at a state, so every determinization shares them; on an engine without
information-state strings, by the actor's perfect-recall trace (``planners.info_key``).

Reference: Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree Search" (IEEE TCIAIG 2012);
the multiple-observer tree keyed by each actor's information state follows OpenSpiel's ISMCTS.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyspiel

from cwm.types import CHANCE, TERMINAL
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.evaluators import ValueFn, leaf_evaluator
from planners.gt_sampler import GroundTruthSampler, resample_from_infostate  # noqa: F401  (re-exported)
from planners.info_key import EngineKeys, TraceKeys, has_information_states, trace_key
from planners.rollout import rng_from, sample_outcome
from planners.search import paranoid
from planners.settings import ISMCTSSettings
from planners.tree import SearchResult

# sampler(state_or_view, player, rng) -> a full state consistent with ``player``'s information state.
Sampler = Callable[[Any, int, np.random.Generator], Any]


class InfoNode:
    """Statistics of one information state (read them to inspect a search; only the search changes them).

    Attributes:
      visits: simulations that selected an action here.
      stats: per action ``[visits, summed return of the actor, simulations in which it was legal here (its
        availability)]``.
    """

    __slots__ = ("visits", "stats")

    def __init__(self) -> None:
        self.visits = 0
        self.stats: dict[int, list[float]] = {}


@dataclasses.dataclass(frozen=True)
class InfoTree:
    """A finished ISMCTS search's tree, for inspection: one ``InfoNode`` per information state reached, keyed
    by the information-state string of whoever acts there.

    Attributes:
      root_key: the searching player's information state at the root.
      nodes: every node, by information state, in the order the search created them.
    """

    root_key: str
    nodes: dict[str, InfoNode]


class ISMCTS:
    """Information-set MCTS with random-rollout or value-function leaf evaluation.

    Args:
      config: the settings: ``ISMCTSSettings``, or the ``SearchConfig`` record (its ``ismcts()``, every field
        of it checked): simulations, UCT constant, rollouts per new leaf, rollout cap, leaf evaluation,
        ``max_sample_tries`` (draws per simulation before the search gives up: when a
        simulation gets no state whose information state matches the root's, the search stops, and if the
        root then has no statistics the move is a uniformly random legal action, ``SearchResult.fallback``)
        and ``availability_counts`` (Cowling et al.'s exploration term), and ``backup``: with more than two
        players, each actor's statistics hold its own return (max^n, the default) or, for every player but
        the searching one, the searching player's return negated (paranoid).
      value_fn: ``(state, player) -> float`` leaf evaluator: used instead of rollouts (``config.leaf="value"``)
        or to score the rollouts the cutoff stops (``config.leaf="rollout"``).
      sampler: draws a determinization; by default ground-truth resampling (``GroundTruthSampler``: the
        game's world sampler of ``planners.worlds``, else the engine's ``resample_from_infostate``, else the
        generic resampler of ``planners.gt_resample``). Any exception it raises
        (``Exception``: never the arena's move timer or a worker's budget interrupt) is a failed draw.
      max_game_length: the game's longest possible play, the default rollout cap (as in ``MCTS``).
      seed: an int, an ``np.random.Generator`` or ``None`` for ``config.seed``.
      trace_keys: key the information states of OpenSpiel states by the players' perfect-recall traces
        (``planners.info_key``) instead of the engine's strings; ``None`` (the default): only on engines that
        have no ``information_state_string``. The traces split states as perfect-recall strings do, so the
        search is the same either way on such an engine (a test shows it on Kuhn poker).

    Attributes:
      searches, simulations, draws, failed_draws, fallbacks: over this searcher's life, the moves searched,
        the simulations run (fewer than asked when a search gave up drawing), the draws accepted, the draws
        rejected (inconsistent or raising) and the moves chosen by the random fallback.

    Raises:
      UsageError: a setting out of range.

    Randomness: the sampler receives an ``np.random.Generator`` derived from ``seed``; the tree policy,
    chance outcomes and rollouts draw from a ``random.Random`` derived from the same seed.
    """

    def __init__(
        self,
        config: ISMCTSSettings | SearchConfig = DEFAULT_SEARCH,
        *,
        value_fn: ValueFn | None = None,
        sampler: Sampler | None = None,
        max_game_length: int | None = None,
        seed: int | np.random.Generator | None = None,
        trace_keys: bool | None = None,
    ):
        config.check("ISMCTS", value_fn=value_fn is not None)
        settings = config.ismcts() if isinstance(config, SearchConfig) else config
        self.config = config
        self.settings = settings
        self.num_simulations = settings.num_simulations
        self.uct_c = settings.uct_c
        self.value_fn = value_fn
        if sampler is None:
            sampler = GroundTruthSampler()
        self.sampler = sampler
        self.max_sample_tries = settings.max_sample_tries
        self.availability = settings.availability_counts
        self.max_game_length = max_game_length
        self.max_rollout_steps = settings.rollout_cap(max_game_length)
        self.evaluator = leaf_evaluator(settings, value_fn, self.max_rollout_steps)
        self.rng = rng_from(settings.seed if seed is None else seed)
        self.np_rng = np.random.default_rng(self.rng.getrandbits(63))
        self.searches = 0
        self.simulations = 0
        self.draws = 0
        self.failed_draws = 0
        self.fallbacks = 0
        self._children: dict[tuple[int, int], tuple[Any, Any]] = {}  # this search's (parent, child) by edge
        self._paranoid_for: int | None = None  # the searching player of a paranoid search, else None (max^n)
        self.trace_keys = trace_keys
        self._traced = False  # this search keys information states by traces

    def search(self, state: Any, *, keep_tree: bool = False) -> SearchResult:
        """Searches from the current player's information state at ``state`` (left unchanged).

        Args:
          state: needs ``current_player``, ``legal_actions`` and ``information_state_string`` (an OpenSpiel
            state may do without: ``trace_keys``); the sampler receives it (an OpenSpiel state, a model state,
            or a view of one player's history).
          keep_tree: return the tree (an ``InfoTree``) in ``SearchResult.tree``.
        """
        player = state.current_player()
        if player < 0:
            raise ValueError("ISMCTS.search needs a decision node; got a terminal or chance state")
        game = getattr(state, "get_game", None)
        if self.max_game_length is None and callable(game):
            cap = self.settings.rollout_cap(int(game().max_game_length()))
            if cap != self.max_rollout_steps:
                self.max_rollout_steps = cap
                self.evaluator = leaf_evaluator(self.settings, self.value_fn, cap)
        self._traced = self._uses_traces(state)
        root_key = trace_key(state, player) if self._traced else state.information_state_string(player)
        self._paranoid_for = player if self.settings.backup == "paranoid" else None
        nodes: dict[str, InfoNode] = {}
        self._children = {}
        done = 0
        for _ in range(self.num_simulations):
            drawn = self._draw(state, player, root_key)
            if drawn is None:
                break
            self._simulate(*drawn, nodes)
            done += 1
        self._children = {}
        result = self._result(state, nodes.get(root_key), done)
        if keep_tree:
            result = dataclasses.replace(result, tree=InfoTree(root_key, nodes))
        self.searches += 1
        self.simulations += done
        self.fallbacks += int(result.fallback)
        return result

    def step(self, state: Any) -> int:
        """The chosen action id at ``state``."""
        return self.search(state).action

    def stats(self) -> dict[str, int]:
        """This searcher's record over its life: moves searched, simulations run, draws accepted and rejected,
        and moves chosen by the random fallback (for a match record)."""
        return {"moves": self.searches, "simulations": self.simulations, "draws": self.draws,
                "rejected_draws": self.failed_draws, "fallback_moves": self.fallbacks}

    def _uses_traces(self, state: Any) -> bool:
        if not isinstance(state, pyspiel.State):
            return False  # model states and views key themselves
        if self.trace_keys is None:
            return not has_information_states(state.get_game())
        return self.trace_keys

    def _draw(self, state: Any, player: int, root_key: str) -> tuple[Any, EngineKeys | TraceKeys] | None:
        """A world whose information state for ``player`` is the root's, with its keys (``None``: every try
        failed)."""
        for _ in range(self.max_sample_tries):
            try:
                world = self.sampler(state, player, self.np_rng)
                if world is not state and world.current_player() == player:
                    keys = TraceKeys(world) if self._traced else EngineKeys(world)
                    if keys.key(player) == root_key:
                        self.draws += 1
                        return world, keys
            except Exception:  # any failure of the sampler (or the world it drew) is a failed draw
                pass
            self.failed_draws += 1
        return None

    def _simulate(self, world: Any, keys: EngineKeys | TraceKeys, nodes: dict[str, InfoNode]) -> None:
        in_place = isinstance(world, pyspiel.State)  # a fresh determinization: safe to move in place
        path: list[tuple[InfoNode, int, int]] = []
        s = world
        while True:
            player = s.current_player()
            if player == TERMINAL:
                returns = s.returns()
                break
            if player == CHANCE:
                outcome = sample_outcome(s.chance_outcomes(), self.rng)
                s = self._move(s, outcome, in_place)
                keys.moved(CHANCE, outcome, s)
                continue
            key = keys.key(player)
            node = nodes.get(key)
            if node is None:
                nodes[key] = InfoNode()
                returns = self._evaluate(s)
                break
            action = self._select(node, s.legal_actions())
            path.append((node, action, player))
            s = self._move(s, action, in_place)
            keys.moved(player, action, s)
        if self._paranoid_for is not None:
            returns = paranoid(returns, self._paranoid_for)
        for node, action, player in path:
            node.visits += 1
            stat = node.stats.setdefault(action, [0, 0.0, 1])  # available in this, its first, simulation
            stat[0] += 1
            stat[1] += returns[player]

    def _move(self, state: Any, action: int, in_place: bool) -> Any:
        """The state after ``action``: moved in place (a fresh OpenSpiel determinization), else its child,
        remembered for this search: a sampler may draw the same (read-only) world again, as an inference
        sampler does for a history it drew before, and its tree path is then not rebuilt."""
        if in_place:
            state.apply_action(action)
            return state
        key = (id(state), action)
        found = self._children.get(key)
        if found is not None and found[0] is state:  # the parent is held, so its id names no other object
            return found[1]
        child = state.child(action)
        self._children[key] = (state, child)
        return child

    def _select(self, node: InfoNode, legal: list[int]) -> int:
        stats = node.stats
        if self.availability:  # each legal action was available in this simulation
            for a in legal:
                if a in stats:
                    stats[a][2] += 1
        unvisited = [a for a in legal if a not in stats]
        if unvisited:
            return unvisited[int(self.rng.random() * len(unvisited))]
        best, best_v = legal[0], -math.inf
        if self.availability:
            for a in legal:
                n, total, available = stats[a]
                v = total / n + self.uct_c * math.sqrt(math.log(max(available, 1)) / n)
                if v > best_v:
                    best, best_v = a, v
            return best
        c = self.uct_c * math.sqrt(math.log(max(node.visits, 1)))
        for a in legal:
            n, total, _ = stats[a]
            v = total / n + c / math.sqrt(n)
            if v > best_v:
                best, best_v = a, v
        return best

    def _evaluate(self, state: Any) -> Sequence[float]:
        return self.evaluator.evaluate(state, self.rng)[0]

    def _result(self, state: Any, root: InfoNode | None, done: int) -> SearchResult:
        legal = list(state.legal_actions())
        stats = {a: root.stats[a] for a in legal if root is not None and a in root.stats}
        if not stats:
            return SearchResult(action=int(legal[int(self.rng.random() * len(legal))]), visits={}, values={},
                                simulations=done, fallback=True)
        best = max(stats, key=lambda a: (stats[a][0], stats[a][1] / stats[a][0]))
        return SearchResult(action=int(best), visits={a: int(v[0]) for a, v in stats.items()},
                            values={a: v[1] / v[0] for a, v in stats.items()}, simulations=done)


