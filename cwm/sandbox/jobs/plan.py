"""The planning server a CWM agent's hardened worker runs: ``plan_session(module, payload)`` builds a
``CWMPlanner`` on the untrusted model (and its inference and value modules) and answers move requests.

Runs inside a sandbox session child (``Sandbox.open_session``), after every layer is on; the model is
called directly, with no per-call guard: the whole move is under the session's CPU budget, timed from
outside. Everything crosses as JSON: the ground truth stays on the trusted side, which sends the action
codec, the game's facts and each move's view of the real game.

Payload: ``{"name", "codec": {"table", "num_distinct_actions", "max_chance_outcomes", "prefixed"},
"facts": GameFacts, "config": SearchConfig, "seed": int, "inference": source or None, "value": source or
None, "twin": bool (optional: the module is a bundle's twin, which plans only with an inference that draws
histories), "playout": bool (optional: the twin's own ``playout`` plays the rollouts; the trusted side sets it only
where the twin's evidence records a passing check of that playout, and a twin not told so is stepped)}``.

Messages: ``{"op": "plan", "player", "legal": [str], "moves_from": int, "moves": [str], "events_from": int,
"events": [{"observation", "action"}]}`` (the real moves since the last message, and the seat's events,
``cwm.events``, from the last one sent before, which goes again with the seat's own action there filled in)
answered by ``{"action": str, "stats": {...}}`` or ``{"refused": why}`` when the model broke the contract
or could not follow the real game.
"""

from __future__ import annotations

import gc
import math
import time
import types
from collections.abc import Callable
from typing import Any

from cwm import events as player_events
from cwm import value_rules
from cwm.codec import ActionCodec
from cwm.contract import INFERENCE_API, PLAYOUT, VALUE_API, resampler
from cwm.jax_contract import JAX_TWIN_MODULE, batched_rollouts_fn
from cwm.model import WorldModel
from cwm.sandbox.child import load_extra
from cwm.sandbox.jobs.check import require
from cwm.sandbox.jobs.jax_twin import Twin
from cwm.sandbox.names import JAX_POLICY
from cwm.types import JSON, CwmError, ModelLoadError
from planners.config import SearchConfig
from planners.cwm import CWMPlanner, GameFacts, inference_sampler

_REASON_CHARS = 2000
_SEARCH_GC_THRESHOLD = 50_000  # allocations between collections of the youngest generation during a move


def plan_session(module: types.ModuleType, payload: dict[str, Any]) -> Callable[[JSON], JSON]:
    """The server of one planning worker (see the module docstring for the payload and messages).

    Raises:
      ModelLoadError: a module misses its contract functions (the session does not start).
    """
    require(module)
    # a twin's own playout loop plays its rollouts only where the trusted side read a passing check of it in the
    # twin's evidence: whatever the module binds, a playout not checked is never called
    fused = bool(payload.get("twin")) and payload.get("playout") is True
    if fused and not callable(vars(module).get(PLAYOUT.name)):
        raise ModelLoadError("the twin's evidence checked its playout, and the twin binds no playout function now")
    model = WorldModel(module, name=str(payload["name"]), codec=ActionCodec.from_json(payload["codec"]), playout=fused)
    sampler = None
    value_fn: Callable[[Any, int], float] | None = None
    if payload.get("inference"):
        kind, resample = resampler(_extra(payload["inference"], "cwm_inference", INFERENCE_API))
        if kind != "history" and payload.get("twin"):  # its states are the model's, which the twin cannot read
            raise ModelLoadError("inference.py binds no resample_history when it runs, and the states its "
                                 "resample_state draws are model.py's: the twin cannot plan with them")
        sampler = inference_sampler(model, resample, kind)  # type: ignore[arg-type]
    if payload.get("value"):
        value_fn = _value_fn(_extra(payload["value"], "cwm_value", VALUE_API).get_value)
    elif payload.get("jax_twin"):
        value_fn = _jax_rollouts(payload, model, SearchConfig.from_json(payload["config"]))
    planner = CWMPlanner(model, GameFacts.from_json(payload["facts"]), SearchConfig.from_json(payload["config"]),
                         sampler=sampler, value_fn=value_fn, seed=int(payload["seed"]))
    return _Server(planner).answer


def _value_fn(get_value: Callable[[Any, int], Any]) -> Callable[[Any, int], float]:
    """The search's value function from a value module's ``get_value`` (on the model's raw state)."""

    def value_fn(state: Any, player: int) -> float:
        return value_rules.number(get_value(state.raw, player), "get_value")

    return value_fn


def _jax_rollouts(payload: dict[str, Any], model: WorldModel, config: SearchConfig) -> Callable[[Any, int], float]:
    """The leaf value of the search from the JAX twin (``payload["jax_twin"]``, loaded under the jax import
    policy): ``config.rollouts`` random playouts of it from the leaf's history, as one vmapped batch
    (``cwm.jax_contract.batched_rollouts_fn``), each cut at the search's rollout cap; asked once per leaf for
    every player (the search asks player by player: the last leaf's values are kept). The history is padded to
    a power of two, so a game compiles the function a few times, not once per length. The keys come from the
    worker's seed, one per leaf, in order: a seeded search stays reproducible."""
    import jax  # JAX is optional: only a worker given a JAX twin imports it (started before the layers)

    module = load_extra(str(payload["jax_twin"]), JAX_TWIN_MODULE, JAX_POLICY)
    codec = model.codec
    twin = Twin(module, codec, model.num_players)  # its constants checked against the codec
    # a step of the scan is a move or a chance outcome
    steps = config.max_rollout_steps or GameFacts.from_json(payload["facts"]).max_game_length * (
        2 if codec.max_chance_outcomes else 1)
    compiled: dict[int, Any] = {}
    key = [jax.random.PRNGKey(int(payload["seed"]))]
    last: list[Any] = [None, ()]  # the last leaf asked about, and its values

    def value_fn(state: Any, player: int) -> float:
        if last[0] is not state:
            history = state.history()
            size = 1 << max(4, (len(history) - 1).bit_length())
            if size not in compiled:
                compiled[size] = batched_rollouts_fn(module, rollouts=max(1, config.rollouts), max_history=size,
                                                     max_steps=steps)
            key[0], sub = jax.random.split(key[0])
            padded = jax.numpy.zeros(size, jax.numpy.int32).at[:len(history)].set(jax.numpy.array(history, jax.numpy.int32))
            values = tuple(float(v) for v in twin.guard(compiled[size], padded, len(history), sub))
            if not all(math.isfinite(v) for v in values):  # the twin is untrusted: a NaN or inf never enters the search
                raise ValueError(f"the JAX twin's rollouts gave a value that is not a finite number: {values}")
            last[:] = [state, values]
        return float(last[1][player])

    return value_fn


def _extra(source: str, name: str, api: tuple[Any, ...]) -> types.ModuleType:
    module = load_extra(source, name)
    require(module, api)
    return module  # type: ignore[no-any-return]


class _Server:
    """One game's view on the worker side: the real moves and the seat's events, grown by each message."""

    def __init__(self, planner: CWMPlanner):
        self.planner = planner
        self.moves: list[str] = []
        self.events: list[dict[str, JSON]] = []

    def answer(self, message: JSON) -> JSON:
        if not isinstance(message, dict) or message.get("op") != "plan":
            raise ModelLoadError(f"the planning worker got a message it does not know: {value_rules.describe(message)}")
        # the events start at the last one sent before (its action is filled in once the seat has moved)
        if message["moves_from"] != len(self.moves) or message["events_from"] != max(0, len(self.events) - 1):
            raise ModelLoadError("the planning worker's view of the game is out of step with the host's")
        self.moves.extend(message["moves"])
        self.events[message["events_from"]:] = message["events"]
        problem = player_events.validate(self.events)
        if problem is not None or player_events.is_over(self.events):
            raise ModelLoadError(f"the planning worker got events it cannot plan on: {problem or 'the game is over'}")
        wall, cpu = time.perf_counter(), time.process_time()
        # A search's tree only grows and holds no cycle (reference counting frees it), yet the collector walks
        # it again and again as it grows: during a move the youngest generation is collected every
        # _SEARCH_GC_THRESHOLD allocations, not every 700 (a model's own cyclic garbage is still collected,
        # a bounded amount of it waiting; the memory limit holds throughout), and as before after the move.
        threshold = gc.get_threshold()
        gc.set_threshold(max(threshold[0], _SEARCH_GC_THRESHOLD), *threshold[1:])
        try:
            action = self.planner.plan(int(message["player"]), list(message["legal"]), moves=self.moves,
                                       events=self.events)
        except (CwmError, value_rules.ValueBreach) as e:  # the model broke the contract, or cannot follow the game
            return {"refused": str(e)[:_REASON_CHARS], "stats": self.planner.stats()}
        finally:
            gc.set_threshold(*threshold)
        spent = {"move_wall_s": time.perf_counter() - wall, "move_cpu_s": time.process_time() - cpu}
        return {"action": action, "stats": self.planner.stats() | spent}
