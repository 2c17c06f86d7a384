"""The playout server of the differential equivalence check (``cwm.sandbox.equivalence``): ``trace(module,
payload)`` plays or replays games in one untrusted world model, inside a sandbox child, and writes down what
the model says at every state it reaches.

The check runs this job twice, in two children: on the checked model (the reference), whose playouts choose
their own actions (seeded random play, or cwm's MCTS on the reference), and on the candidate twin, which
replays the reference's actions. Neither model ever runs in the caller's process, and the two never share a
process: the comparison happens on the trusted side, on the JSON each child wrote.

Every answer goes through the library's own contract (``cwm.model_state.ModelState``: the value rules, legal
actions, chance distributions, terminal states kept still), so both models are seen exactly as a planner sees
them. A state's record holds, by default, digests of the bulky fields (the legal set, each player's
observation) and the small ones whole (the player, the chance distribution, the rewards of the move that led
there); ``detail`` asks for one state's record whole, for the report of a divergence.

Payload: ``{"name": str, "playouts": [spec, ...], "max_steps": int, "detail": step or None}`` where a spec is
``{"kind": "random", "seed": int}``, ``{"kind": "mcts", "seed": int, "simulations": int}`` or
``{"kind": "replay", "actions": [str, ...]}``, or (every spec) ``{"kind": "states", "states": [state, ...]}``:
given states (a JAX twin's decoded ones) recorded as they are, with each player's observation encoded by
the payload's ``"encoder"`` source when it has one. With a ``"codec"`` (``ActionCodec.to_json``: the check
of a JAX twin, which speaks in ids) every legal action and chance outcome is recorded under the string the
codec gives its id: a game may give one id several strings by state (backgammon's move ``1011`` reads
``24/23 13/9`` or ``24/23 13/10`` by the dice), and the twin's side can only name the id.

Returns: one entry per playout, ``{"actions": [str], "states": [record], "error": str or None}``; with
``detail`` (one playout only) ``{"record": full record of that step or None, "history": [str], "error": ...}``.

``playouts(module, payload)`` is the check of a twin's own ``playout`` (``cwm.contract.PLAYOUT``): at given
states of replayed playouts, seeded random rollouts played by cwm stepping the model (the reference's role), or
by the twin's ``playout`` and, beside it, by cwm stepping the twin (the twin's role).

``profile(module, payload)`` is the model's own CPU profile over a few seeded random playouts (what a prompt
for a faster twin shows): the calls and CPU seconds of each contract function, timed in the child.
"""

from __future__ import annotations

import collections
import hashlib
import random
import time
import types
from collections.abc import Callable
from typing import Any

from cwm import value_rules
from cwm.codec import ActionCodec
from cwm.contract import ENCODER_API, ENCODER_MODULE, PLAYOUT
from cwm.model import WORLD_MODEL_API, WorldModel
from cwm.model_state import ModelState
from cwm.sandbox.child import child_guard, load_extra
from cwm.sandbox.jobs.check import require
from cwm.types import CHANCE, JSON, TERMINAL, CwmError
from planners.mcts import MCTS
from planners.rollout import playout as step_playout
from planners.settings import MCTSSettings

_ERROR_CHARS = 2000
Namer = Callable[[int, str], str]  # (player, action string) -> the string a record holds


def trace(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Plays (or replays) the payload's playouts in ``module`` and records every state (module docstring).

    Raises:
      ModelLoadError: the module misses a contract function.
    """
    require(module)
    model = WorldModel(module, name=str(payload["name"]), guard=child_guard())
    max_steps = int(payload["max_steps"])
    detail, name = payload.get("detail"), _namer(payload)
    if payload["playouts"] and payload["playouts"][0]["kind"] == "states":
        return [_states(model, spec["states"], _encoder(payload), full=detail is not None, name=name)
                for spec in payload["playouts"]]
    if detail is not None:
        return _detail(model, payload["playouts"][0], int(detail), name)
    return [_playout(model, spec, max_steps, name) for spec in payload["playouts"]]


def _namer(payload: dict[str, Any]) -> Namer | None:
    """How a record names an action: as the payload's codec names the action's id (a string the codec cannot
    read keeps its own name, and so differs from any the twin's side gives), or ``None`` (as the model does)."""
    if not payload.get("codec"):
        return None
    codec = ActionCodec.from_json(payload["codec"])

    def name(player: int, action: str) -> str:
        try:
            return codec.name(player, codec.to_id(player, action))
        except CwmError:
            return action

    return name


def _encoder(payload: dict[str, Any]) -> Any:
    """The payload's observation encoder (``encode(observation, player)``, loaded beside the model under
    every layer), or ``None``."""
    if not payload.get("encoder"):
        return None
    encoder = load_extra(str(payload["encoder"]), ENCODER_MODULE)
    require(encoder, ENCODER_API)
    return vars(encoder)["encode"]


def _states(model: WorldModel, raws: list[JSON], encode: Any, *, full: bool, name: Namer | None) -> dict[str, JSON]:
    """What the model says at each of the given states (a JAX twin's decoded states): records as ``_record``
    writes them, with ``tensors`` (the encoder's vector of each player's observation) when ``encode`` is given;
    the records stop at the first state the model (or the encoder) cannot answer at, whose error is kept."""
    guard, states = child_guard(), []
    try:
        for raw in raws:
            state = ModelState(model, raw)
            record = _record(state, full=full, name=name)
            if encode is not None:
                record["tensors"] = [_vector(guard(encode, obs, p)) for p, obs in enumerate(state.observations())]
            states.append(record)
        return {"actions": [], "states": states, "error": None}
    except (CwmError, value_rules.ValueBreach, TypeError) as e:
        return {"actions": [], "states": states, "error": str(e)[:_ERROR_CHARS]}


def _playout(model: WorldModel, spec: dict[str, Any], max_steps: int, name: Namer | None = None) -> dict[str, JSON]:
    actions: list[str] = []
    states: list[JSON] = []
    chooser = _chooser(spec)
    try:
        state = model.new_initial_state()
        while True:
            states.append(_record(state, full=False, name=name))
            if state.is_terminal() or len(actions) >= max_steps:
                return {"actions": actions, "states": states, "error": None}
            action = chooser(state, len(actions))
            if action is None:  # a replay that ran out of actions
                return {"actions": actions, "states": states, "error": None}
            state = state.child_from_string(action)
            actions.append(action)
    except (CwmError, value_rules.ValueBreach) as e:  # the model broke its contract here
        return {"actions": actions, "states": states, "error": str(e)[:_ERROR_CHARS]}


def _chooser(spec: dict[str, Any]) -> Any:
    """``choose(state, step) -> action string or None`` for one playout spec."""
    kind = spec["kind"]
    if kind == "replay":
        given = [str(a) for a in spec["actions"]]
        return lambda state, step: given[step] if step < len(given) else None
    rng = random.Random(int(spec["seed"]))
    search = None
    if kind == "mcts":
        search = MCTS(MCTSSettings(num_simulations=int(spec["simulations"]), rollouts=1), seed=rng.getrandbits(32))

    def choose(state: ModelState, step: int) -> str:
        # drawn from sorted lists: the same seed picks the same action whatever order the model lists them in
        if state.is_chance_node():
            outcomes = sorted(state.chance_outcome_strings())
            return rng.choices([a for a, _ in outcomes], weights=[p for _, p in outcomes])[0]
        if search is not None:
            return state.action_to_string(state.current_player(), search.search(state).action)
        return rng.choice(sorted(state.legal_action_strings()))

    return choose


def _detail(model: WorldModel, spec: dict[str, Any], step: int, name: Namer | None) -> dict[str, JSON]:
    """The full record of state ``step`` of one replayed playout, and the actions that lead there."""
    chooser = _chooser(spec)
    history: list[str] = []
    try:
        state = model.new_initial_state()
        for k in range(step):
            action = chooser(state, k)
            if action is None or state.is_terminal():
                break
            state = state.child_from_string(action)
            history.append(action)
        return {"record": _record(state, full=True, name=name), "history": history, "error": None}
    except (CwmError, value_rules.ValueBreach) as e:
        return {"record": None, "history": history, "error": str(e)[:_ERROR_CHARS]}


def _record(state: ModelState, *, full: bool, name: Namer | None = None) -> dict[str, JSON]:
    """What the model says at ``state``: who acts, the legal set (sorted: a set), the chance distribution
    (sorted by outcome), every player's observation and the rewards of the move that led here; actions and
    outcomes named by ``name`` when given (module docstring)."""
    player = state.current_player()
    legal = chance = None
    if player == CHANCE:
        chance = sorted([a if name is None else name(CHANCE, a), p] for a, p in state.chance_outcome_strings())
    elif player != TERMINAL:
        legal = sorted(state.legal_action_strings() if name is None else
                       [name(player, a) for a in state.legal_action_strings()])
    obs = list(state.observations())
    record: dict[str, JSON] = {"player": player, "chance": chance, "rewards": state.rewards()}  # type: ignore[dict-item]
    if full:
        record.update(legal=legal, observations=obs)
    else:
        record.update(legal=None if legal is None else _digest(legal),
                      observations=[_digest(o) for o in obs])
    return record


def _vector(value: Any) -> list[float]:
    """An encoder's answer as a list of floats (canonical JSON first: no subclass's methods run here)."""
    vector = value_rules.canonical(value, where="encode(observation, player)")
    if type(vector) is not list or not all(type(x) in (int, float) for x in vector):
        raise value_rules.ValueBreach("encode(observation, player) must return a flat list of numbers")
    return [float(x) for x in vector]  # type: ignore[arg-type]


def digest(value: JSON) -> str:
    """The short sha256 a record holds for a bulky value (canonical JSON text)."""
    return hashlib.sha256(value_rules.dumps(value).encode()).hexdigest()[:32]


_digest = digest


def profile(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """The CPU time each contract function of ``module`` takes over seeded uniformly random playouts.

    Payload: ``{"name": str, "playouts": int, "cpu_s": float, "seed": int, "max_steps": int}``: playouts
    (``i`` seeded ``seed + i``) until ``playouts`` are played or this child has used ``cpu_s`` CPU seconds.
    Each model call is timed by ``time.process_time`` around it, in this child, under the per-call budget; the
    library's own work between calls is not counted, except the one part of it a twin's own design decides:
    making each state ``apply_action`` returns read-only (``cwm.value_rules.state``, which copies every list
    and dict in it), timed once more on the very object returned (``"library"``; a state that breaks a rule
    ends the profile there, as the model's breach). Where the kernel counts CPU time in scheduler ticks, each
    tick falls to the call that was running, so the shares are those of a sampling profiler.

    Returns:
      ``{"calls": {function: int}, "cpu_s": {function: float}, "library": {"freeze_s": float, "frozen": int},
      "playouts": int, "states": int, "error": str or None}`` (the error of the first playout the model broke,
      after which profiling stops).
    """
    require(module)
    names = {id(vars(module)[f.name]): f.name for f in WORLD_MODEL_API}
    calls: collections.Counter[str] = collections.Counter()
    spent: dict[str, float] = dict.fromkeys(names.values(), 0.0)
    guard, clock = child_guard(), time.process_time
    freezing = {"freeze_s": 0.0, "frozen": 0}

    def timed(fn: Any, *args: Any) -> Any:
        start = clock()
        try:
            got = guard(fn, *args)
        finally:
            name = names.get(id(fn), "other")
            spent[name] = spent.get(name, 0.0) + clock() - start
            calls[name] += 1
        if name == "apply_action":  # the library freezes what apply_action returned: timed on that very object
            start = clock()
            try:
                value_rules.state(got)
            except value_rules.ValueBreach as e:  # ends the step here, the profile's error naming the rule
                raise value_rules.ValueBreach(f"the library refused the state it returned: {e}") from None
            finally:
                freezing["freeze_s"] += clock() - start
                freezing["frozen"] += 1
        return got

    model = WorldModel(module, name=str(payload["name"]), guard=timed)
    states, error, played_out, budget = 0, None, 0, clock() + float(payload["cpu_s"])
    while played_out < int(payload["playouts"]) and clock() < budget and error is None:
        played = _playout(model, {"kind": "random", "seed": int(payload["seed"]) + played_out},
                          int(payload["max_steps"]))
        states += len(played["states"])  # type: ignore[arg-type]
        played_out += 1
        error = played["error"]
    return {"calls": dict(calls), "cpu_s": spent, "library": freezing,  # type: ignore[dict-item]
            "playouts": played_out, "states": states, "error": error}


def playouts(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Seeded random rollouts from states of replayed playouts, for the check of a twin's ``playout``.

    Payload: ``{"name": str, "role": "reference" or "twin", "playouts": [{"actions": [str], "at": [[step,
    [[seed, limit], ...]], ...]}]}``: each playout's actions are replayed, and at each listed step (ascending)
    one rollout per ``[seed, limit]`` is played with ``random.Random(seed)``, at most ``limit`` moves. The
    reference's are played by cwm stepping the model (``planners.rollout.playout``); the twin's by its own
    ``playout`` (one call, checked as a planner checks it), and again by cwm stepping the twin, whose end state
    the fused one must equal.

    Returns:
      ``{"playout": bool (the module binds a callable playout; always true for the reference), "runs": [[run,
      ...] per playout]}``, a run ``{"returns": [float], "next": float (the draw after the rollout), "end": the
      record (``_record``) of the state it was cut at or None, "same": bool (twin: the end state equals, as
      JSON, the one stepping reached), "error": str or None}``.
    """
    require(module)
    twin = payload["role"] == "twin"
    if twin and not callable(vars(module).get(PLAYOUT.name)):
        return {"playout": False, "runs": []}
    name = str(payload["name"])
    stepped = WorldModel(module, name=name, guard=child_guard())
    fused = WorldModel(module, name=name, guard=child_guard(), playout=True) if twin else None
    return {"playout": True, "runs": [_runs_of(stepped, fused, spec) for spec in payload["playouts"]]}


def _runs_of(model: WorldModel, fused: WorldModel | None, spec: dict[str, Any]) -> list[JSON]:
    """The runs at each listed step of one replayed playout (a run that could not be played holds its error)."""
    actions = [str(a) for a in spec["actions"]]
    runs: list[JSON] = []
    try:
        state, done = model.new_initial_state(), 0
        for step, plan in spec["at"]:
            while done < int(step):
                state = state.child_from_string(actions[done])
                done += 1
            runs.extend(_run(state, fused, int(seed), int(limit)) for seed, limit in plan)
    except (CwmError, value_rules.ValueBreach) as e:  # the replay broke: the runs not played say why
        wanted = sum(len(plan) for _, plan in spec["at"])
        runs.extend([_failed(str(e))] * (wanted - len(runs)))
    return runs


def _run(state: ModelState, fused: WorldModel | None, seed: int, limit: int) -> JSON:
    """One seeded rollout from ``state``: stepped (the reference), or fused and compared with stepping (a twin)."""
    try:
        rng = random.Random(seed)
        if fused is None:
            returns, end = step_playout(state, rng, limit)
            return {"returns": returns, "next": rng.random(), "end": _end(end), "same": True, "error": None}
        returns, end = step_playout(ModelState(fused, state.raw, returns=tuple(state.returns())), rng, limit)
        after = rng.random()
        _, stepped = step_playout(state, random.Random(seed), limit)
        same = (end is None) == (stepped is None) and (end is None or _json(end.raw) == _json(stepped.raw))
        return {"returns": returns, "next": after, "end": _end(end), "same": same, "error": None}
    except (CwmError, value_rules.ValueBreach) as e:
        return _failed(str(e))


def _end(state: ModelState | None) -> JSON:
    return None if state is None else _record(state, full=False)


def _json(raw: JSON) -> str:
    return value_rules.dumps(value_rules.canonical(raw, where="a state"))


def _failed(error: str) -> dict[str, JSON]:
    return {"returns": [], "next": 0.0, "end": None, "same": False, "error": error[:_ERROR_CHARS]}
