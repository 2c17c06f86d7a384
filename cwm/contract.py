"""The CWM contract: the functions a synthesized model defines (one definition for the loader, the checks and
the prompt), the names checked modules run under, and how a module's lines are numbered. Loading source into a
module (through the static gate) is the sandbox's: ``cwm.sandbox.load_source``."""

from __future__ import annotations

import ast
import dataclasses
import re
import threading
import types
from collections.abc import Sequence
from typing import Any


@dataclasses.dataclass(frozen=True)
class ContractFunction:
    """One function of the contract: its name, signature and the promise it makes."""

    name: str
    signature: str
    doc: str


# The one definition of the world-model API: the loader requires these names and the synthesis prompt
# renders them (``api_block``), so the LLM is shown exactly what the checks enforce. Each doc says what a
# function means; what its values must be is the rules table of ``cwm.value_rules.RULES``, shown next to it.
WORLD_MODEL_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "get_initial_state", "get_initial_state() -> dict",
        "The state before any move (chance included)."),
    ContractFunction(
        "get_current_player", "get_current_player(state: dict) -> int",
        "Who acts at `state`: a player, chance, or no one once the game is over."),
    ContractFunction(
        "get_legal_actions", "get_legal_actions(state: dict) -> list[str]",
        "The legal actions at `state`."),
    ContractFunction(
        "get_chance_outcomes", "get_chance_outcomes(state: dict) -> list[tuple[str, float]]",
        "Every chance outcome at `state` with its probability."),
    ContractFunction(
        "apply_action", "apply_action(state: dict, action: str) -> dict",
        "The state after `action` is taken at `state`."),
    ContractFunction(
        "get_observations", "get_observations(state: dict) -> list[dict]",
        "One observation per player (index = player id), each exactly what that player sees, in the "
        "format the trajectories show. Identical for all players in perfect-information games."),
    ContractFunction(
        "get_rewards", "get_rewards(state: dict) -> list[float]",
        "One reward per player for the move that led to `state` (at the end of the game this is where "
        "the final payoffs appear in games that pay only at the end). All zeros for the initial state."),
)

# A twin's own playout loop (optional; a fast twin is asked for it): one call plays a whole random playout the
# way cwm steps a model in a rollout (``planners.rollout``), so a planner on the twin pays one call per rollout
# instead of several per step. The equivalence check compares it, exactly, with cwm stepping the checked model.
PLAYOUT = ContractFunction(
    "playout", "playout(state: dict, returns: list[float], rand, limit: int) -> tuple[list[float], dict | None]",
    "A uniformly random playout from `state` (never modify it; work on your own copy, in place), exactly as "
    "the library plays one by stepping the other functions: at most `limit` moves; every move draws exactly "
    "one number u = rand() (a float in [0, 1)) before anything else; where a player moves it takes "
    "legal[int(u * len(legal))], `legal` in the order get_legal_actions gives; at a chance node it walks "
    "get_chance_outcomes(state) in order adding up the probabilities (acc = 0.0; acc += p) and takes the first "
    "outcome with u < acc (the last one when none is); after each move it adds that move's get_rewards to "
    "`returns`, player by player (returns[i] + reward[i], in move order). Stops when the game is over or after "
    "`limit` moves. Returns (the returns, a list of one float per player; None if the game is over, else the "
    "state reached, equal as JSON to the one apply_action would have reached). No other number is drawn.")

FAST_API: tuple[ContractFunction, ...] = (*WORLD_MODEL_API, PLAYOUT)  # what a fast twin is asked to define

INFERENCE_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "resample_history", "resample_history(events: list[dict], player_id: int, seed: int) -> list[str]",
        "Given one player's observations and own actions so far (events: {'observation': ..., "
        "'action': str or None}; the last one, once the game is over, also has 'terminal': True and "
        "'return': the player's total return), return a full action history (all players and chance) whose "
        "replay from get_initial_state() reproduces every observation and own action of that player (and, "
        "at the end, ends the game paying the player that return)."),
)

# The hidden-state variant: cheaper to write, weaker to trust (the state need not be reachable, and what came
# before it, the opponents' information and the returns so far, is unknown to the planner).
STATE_INFERENCE_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "resample_state", "resample_state(events: list[dict], player_id: int, seed: int) -> dict",
        "Given one player's observations and own actions so far (events: {'observation': ..., 'action': str "
        "or None}; the last one, once the game is over, also has 'terminal': True and 'return': the player's "
        "total return), return a state of the world model (as get_initial_state and apply_action return "
        "them) at which get_observations(state)[player_id] is the player's latest observation and it is "
        "that player's turn with its recorded action legal, or, when the last event is terminal, the game "
        "is over."),
)

VALUE_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "get_value", "get_value(state: dict, player_id: int) -> float",
        "An estimate of the final return of `player_id` from `state`; the true return at terminal states."),
)

ENCODER_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "encode", "encode(observation: dict, player_id: int) -> list[float]",
        "A fixed-length vector of finite floats for one player's observation."),
)

CONTRACT_VERSION = "1"

# A contract a module may meet by defining another set of functions instead (an inference module: the
# hidden-history function, or the hidden-state variant).
ALTERNATIVES: dict[tuple[ContractFunction, ...], tuple[ContractFunction, ...]] = {INFERENCE_API: STATE_INFERENCE_API}


def missing_functions(namespace: dict[str, object], api: Sequence[ContractFunction]) -> list[str]:
    """The functions of ``api`` that ``namespace`` (a module's ``__dict__``) does not define as callables;
    none when it defines every function of the contract's alternative instead."""
    missing = [f.name for f in api if not callable(namespace.get(f.name))]
    other = ALTERNATIVES.get(tuple(api))
    if missing and other is not None and all(callable(namespace.get(f.name)) for f in other):
        return []
    if missing and other is not None:
        missing[-1] += f" (or {', '.join(f.name for f in other)}, the hidden-state variant)"
    return missing


def resampler(module: types.ModuleType) -> tuple[str, object]:
    """An inference module's kind, ``"history"`` (``resample_history``) or ``"state"`` (``resample_state``,
    defined without ``resample_history``), and that function. The module passed its contract check."""
    namespace = module.__dict__
    if callable(namespace.get("resample_history")):
        return "history", namespace["resample_history"]
    return "state", namespace["resample_state"]


def draws_histories(source: str) -> bool:
    """Whether an inference module's source defines ``resample_history`` by a top-level ``def`` (read, not run):
    its draws are action histories, which any observationally equal model replays alike (a bundle's twin).
    ``False`` for a source that does not parse. What the module binds when it runs decides its kind
    (``resampler``); a planning worker refuses a module whose kind then differs."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name == "resample_history" for node in tree.body)


def api_block(functions: Sequence[ContractFunction] = WORLD_MODEL_API) -> str:
    """The API as Python stubs with docstrings, for prompts and documentation."""
    parts = []
    for f in functions:
        parts.append(f'def {f.signature}:\n    """{f.doc}"""\n')
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------
# Loading

# The names checked modules run under, in a sandbox child and in this process alike, so that a failure
# report (its tracebacks and error messages) reads the same wherever the check ran.
CANDIDATE_MODULE = "cwm_model"  # the candidate being checked (a world model, or what stands beside one)
WORLD_MODEL_MODULE = "cwm_world_model"  # the world model an inference or value candidate is checked in
ENCODER_MODULE = "cwm_encoder"  # an observation encoder beside a world model (PPO training)

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


# CPython 3.11 keeps the syntax-tree builder's recursion depth per interpreter, not per thread: two threads
# parsing at once (the nfg transcriber's pool, concurrent in-process checks) can raise "SystemError: AST
# constructor recursion depth mismatch" (CPython gh-106905, fixed in 3.11.8). cwm parses one source at a time.
_PARSE = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time (see ``_PARSE``)."""
    with _PARSE:
        return ast.parse(source)


def source_lines(source: str) -> list[str]:
    """A module's lines, with their ends, as the compiler numbers them: only ``\n``, ``\r\n`` and ``\r`` end
    a line (``str.splitlines`` also breaks at ``\f``, ``\x1c``, ``\u2028``... and would shift every line after
    one, so a traceback would quote the wrong code)."""
    return _LINE.findall(source)


def __getattr__(name: str) -> Any:
    """``load_source``, which moved to ``cwm.sandbox`` (deprecated here for one release)."""
    if name == "load_source":
        return moved_loader("cwm.contract")
    raise AttributeError(f"module 'cwm.contract' has no attribute {name!r}")


def moved_loader(where: str) -> Any:
    """``cwm.sandbox.load_source``, with a ``DeprecationWarning`` naming ``where`` it was imported from."""
    import importlib
    import warnings

    warnings.warn(f"{where}.load_source moved to cwm.sandbox.load_source; the old name is deprecated",
                  DeprecationWarning, stacklevel=3)
    return importlib.import_module("cwm.sandbox").load_source
