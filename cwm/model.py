"""A world model as a pyspiel.State-shaped object: ``WorldModel`` here, its states in ``cwm.model_state``.

A code world model is one Python module of top-level functions over a JSON-serialisable state (the
contract: ``cwm.contract``). The library, not the model, owns the invariants: ``ModelState`` checks
legality, keeps terminal states still, validates chance distributions and returns, and raises
``ModelContractError`` naming the call and the step. Action ids come from ``cwm.codec``.
"""

from __future__ import annotations

import functools
import linecache
import threading
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from cwm import value_rules
from cwm.codec import ActionCodec, OpenCodec
from cwm.contract import (
    CONTRACT_VERSION,
    INFERENCE_API,
    PLAYOUT,
    VALUE_API,
    WORLD_MODEL_API,
    ContractFunction,
    api_block,
    moved_loader,
    source_lines,
)
from cwm.model_state import DECODED_LIMIT, MODEL_ERRORS, ModelState
from cwm.types import ModelContractError

# The contract and the codec are re-exported; ``load_source`` moved to ``cwm.sandbox`` (deprecated here).
__all__ = [
    "CONTRACT_VERSION", "INFERENCE_API", "MODEL_ERRORS", "VALUE_API", "WORLD_MODEL_API", "ActionCodec",
    "Beat", "ContractFunction", "Guard", "ModelState", "OpenCodec", "WorldModel", "api_block", "direct_guard",
    "no_beat", "REST", "DECODED_LIMIT", "describe_error", "model_traceback",
]

# ---------------------------------------------------------------------------------------------------
# The wrapper

_READ_ONLY_DICT = value_rules.ReadOnlyDict
_DICT_LEN = dict.__len__
T = TypeVar("T")

Guard = Callable[..., Any]  # guard(fn, *args) -> fn(*args), possibly under a time budget

# MODEL_ERRORS (what a model call may raise that counts as the model's own failure) is defined with ModelState.


def direct_guard(fn: Callable[..., Any], *args: Any) -> Any:
    """The default guard: call the function as it is (no time budget)."""
    return fn(*args)


Beat = Callable[[str], None]  # beat(name), in a stretch of model calls (WorldModel.stretch): call ``name`` starts now
REST = ""  # the beat that says the library's own work follows, not a model call


def no_beat(what: str) -> None:
    """The beat of a stretch that is not timed."""


class WorldModel:
    """A model (module or any object with the contract functions) plus its action codec.

    Args:
      functions: the module or object defining ``WORLD_MODEL_API``.
      codec: maps action strings to ids; an ``OpenCodec`` when there is no ground truth.
      name: shown in errors.
      guard: runs every model call; the sandbox supplies one with a per-call time budget.
      playout: the functions' own playout loop (``cwm.contract.PLAYOUT``) plays this model's rollouts
        (``planners.rollout``), one call each; only for a twin whose ``playout`` the equivalence check
        compared with stepping the checked model. ``functions`` must then define it.
    """

    def __init__(
        self, functions: Any, *, codec: ActionCodec | None = None, name: str = "model", guard: Guard = direct_guard,
        playout: bool = False,
    ):
        self.functions = functions
        self.codec = codec or OpenCodec()
        self.name = name
        self._guard = guard
        api = (*WORLD_MODEL_API, PLAYOUT) if playout else WORLD_MODEL_API
        self._fns = {f.name: getattr(functions, f.name) for f in api}
        # The contract functions with the guard applied once, here: the hot paths (ModelState, rollouts)
        # call these directly instead of going through the guard on every call.
        self.bound: dict[str, Callable[..., Any]] = (
            dict(self._fns) if guard is direct_guard
            else {n: functools.partial(guard, f) for n, f in self._fns.items()})
        self.fused = playout  # rollouts call ``playout`` (``bound["playout"]``) instead of stepping
        # whether the guard times a stretch of calls from beats (``stretch``); if not, a stretch is ``bound``
        self.timed = getattr(guard, "stretch", None) is not None
        self._num_players: int | None = None
        # (player, action strings) -> {id: string} of a state's legal actions or chance outcomes, shared by
        # every state with that list (ModelState._strings_by_id); cleared when it reaches DECODED_LIMIT.
        self.decoded: dict[tuple[int, tuple[str, ...]], dict[int, str]] = {}
        # The items of the last get_rewards answer a state's move passed (exact numbers, immutable), and the
        # rewards they gave: a list of the very same objects is that answer again (ModelState._advance).
        self.last_rewards: tuple[tuple[Any, ...], tuple[float, ...]] = ((), ())

    @property
    def guard(self) -> Guard:
        """Runs every model call (fixed at construction: ``bound`` holds the functions with it applied)."""
        return self._guard

    def call(self, fn_name: str, *args: Any, step: int | None = None) -> Any:
        """Calls one contract function; any exception becomes a ``ModelContractError`` naming the call (and
        ``step``, the number of actions taken so far, when the caller knows it)."""
        try:
            answer = self.bound[fn_name](*args)
            # an unbound dict/list method changed nothing of a read-only input, but it was tried: refused; a
            # read-only dict whose one decoy entry is all its own storage holds (the common case) is untouched
            if args and (type(args[0]) is not _READ_ONLY_DICT or _DICT_LEN(args[0]) != 1):
                value_rules.untouched(args[0])
            return answer
        except MemoryError:  # the memory limit, not the model's bug: a planning worker's memory verdict
            raise
        except MODEL_ERRORS as e:
            raise self.failure(fn_name, e, step)  # noqa: B904 (failure sets the cause as call always has)

    def failure(self, fn_name: str, e: BaseException, step: int | None = None) -> BaseException:
        """What ``call`` raises when the model's ``fn_name`` raised ``e`` (or left its read-only input tampered
        with): ``e`` itself when it is already a ``ModelContractError``, else a ``ModelContractError`` naming the
        call (and ``step``). The hot paths (``ModelState``) call ``bound`` functions directly and raise this
        from their own ``except MODEL_ERRORS``, so that a breach reads the same whichever path met it."""
        if issubclass(type(e), ModelContractError):  # by its real type, never its own __class__
            return e
        if issubclass(type(e), value_rules.StateMutationError):  # the read-only state refused a change
            err = ModelContractError(f"{self.name}: {_where(step)}{fn_name}(...) tried to modify its input state, "
                                     f"which the contract forbids ({e})")
            err.__cause__, err.__suppress_context__ = None, True  # as ``raise ... from None``
            return err
        # the model's bug, reported as a contract breach with the call named
        err = ModelContractError(f"{self.name}: {_where(step)}{fn_name}(...) raised {describe_error(e)}")
        err.__cause__ = e
        return err

    def stretch(self, body: Callable[[Beat, dict[str, Callable[..., Any]]], T]) -> T:
        """Runs ``body(beat, fns)``: a run of model calls through ``fns`` (contract name -> function), each
        call preceded by ``beat(name)``, under this model's guard.

        A per-call budget (``cwm.sandbox.budget.call_budget``) times the whole run from the beats, so each call
        still gets its full budget while the run pays one clock read per call instead of a guard; ``fns``
        are then the bare functions. Without a guard, or with a guard that cannot time a run, ``fns`` are
        ``bound`` (guarded one by one) and beats do nothing.
        """
        timed = getattr(self._guard, "stretch", None)
        if timed is None:  # (``timed`` is False: the caller may run ``body(no_beat, self.bound)`` itself)
            return body(no_beat, self.bound)
        return timed(lambda beat: body(beat, self._fns))  # type: ignore[no-any-return]

    @property
    def num_players(self) -> int:
        """The number of players: the length of ``get_observations`` at the initial state."""
        if self._num_players is None:
            got = self.call("get_observations", self.initial_raw())
            try:  # canonical first: the answer's own __len__ or __bool__ (a list subclass's) is never called
                obs = value_rules.canonical(got, where="its answer")
            except value_rules.ValueBreach as e:
                raise ModelContractError(f"{self.name}: step 0: get_observations: {e}") from None
            if type(obs) is not list or not obs:
                raise ModelContractError(f"{self.name}: step 0: get_observations must return one observation per "
                                         f"player, got {value_rules.describe(got)}")
            self._num_players = len(obs)
        return self._num_players

    def initial_raw(self) -> value_rules.ReadOnlyDict:
        """The initial state, read-only (``cwm.value_rules.state``)."""
        raw = self.call("get_initial_state")
        try:
            return value_rules.state(raw)
        except value_rules.ValueBreach as e:
            raise ModelContractError(f"{self.name}: step 0: get_initial_state: {e}") from None

    def new_initial_state(self) -> ModelState:
        return ModelState(self, self.initial_raw())


def _where(step: int | None) -> str:
    return "" if step is None else f"step {step}: "


def describe_error(e: BaseException) -> str:
    """``Type: message`` of an exception a model raised, without trusting it: its ``__str__`` (or that of
    an argument) may spin or lie, so the message is built from the arguments' safe renderings, and an
    exception class the model defined is named only."""
    kind = type(e)
    name = kind.__name__ if type(kind.__name__) is str else "exception"
    if any("__str__" in vars(c) or "__repr__" in vars(c) for c in kind.__mro__ if c.__module__ != "builtins"):
        return f"{name} (an exception class with its own __str__; its message is not shown)"
    args = BaseException.__dict__["args"].__get__(e)
    if all(type(a) in (str, int, float, bool, type(None)) for a in args):
        text = str(e)  # the builtin __str__ (no class of its own defines one) over builtin arguments
        return f"{name}: {text[:500]}" if text else name
    return f"{name}: {', '.join(value_rules.describe(a) for a in args)}"


_LINES = threading.Lock()  # model_traceback lends linecache a module's own lines while it formats


def model_traceback(e: BaseException, *, limit: int = 6) -> str:
    """The frames of ``e``'s traceback from the model's own code on (its modules compile as ``<name>``: the
    library's frames that called it are left out), at most the last ``limit``, and its description
    (``describe_error``), formatted without calling anything the model defined.

    Each model frame quotes its line from its own module's source (``__source__``, kept by the loader), so a
    traceback reads the same in a sandbox child and in this process, where another module may have been
    loaded under the same name since.
    """
    sources = _frame_sources(e.__traceback__)
    with _LINES:
        saved = {name: linecache.cache.get(name) for name in sources}
        try:
            for name, source in sources.items():
                linecache.cache[name] = (len(source), None, source_lines(source), name)
            frames = traceback.extract_tb(e.__traceback__)
            first = next((i for i, f in enumerate(frames) if f.filename.startswith("<")), 0)
            text = "".join(traceback.format_list(frames[first:][-limit:]))
        finally:
            for name, entry in saved.items():
                if entry is None:
                    linecache.cache.pop(name, None)
                else:
                    linecache.cache[name] = entry
    return text + describe_error(e) + "\n"


def _frame_sources(tb: Any) -> dict[str, str]:
    """Filename -> source of the model modules (``<name>``) in a traceback, from each frame's module globals
    (a plain ``str`` only: the first frame of a filename decides)."""
    found: dict[str, str] = {}
    while tb is not None:
        frame = tb.tb_frame
        name = frame.f_code.co_filename
        if name.startswith("<") and name not in found:
            source = frame.f_globals.get("__source__")
            if type(source) is str:
                found[name] = source
        tb = tb.tb_next
    return found


def __getattr__(name: str) -> Any:
    """``load_source``, which moved to ``cwm.sandbox`` (deprecated here for one release)."""
    if name == "load_source":
        return moved_loader("cwm.model")
    raise AttributeError(f"module 'cwm.model' has no attribute {name!r}")
