"""Agent specs: short picklable strings that name an agent, and the factory that builds one in any process.

Spec grammar::

    random                 uniformly random legal moves
    gt-mcts                UCT MCTS on the real game (perfect information), on OpenSpiel's C++ MCTSBot
                           where it can run (cwm.agents.native), else as gt-mcts-py
    gt-ismcts              ISMCTS on the real game with ground-truth resampling, on OpenSpiel's C++
                           ISMCTSBot where it can run, else as gt-ismcts-py
    gt-mcts-py             the same search on cwm's Python planner (planners.MCTS)
    gt-ismcts-py           the same search on cwm's Python planner (planners.ISMCTS)
    cwm:PATH               CWM agent on a model file (.py) or a bundle directory (cwm.bundle.load_bundle)
    cwm-selected:DIR       CWM agent on a bundle that survived the selection in DIR (cwm.selection), one
                           picked at random per match
    llm:CLIENT             direct LLM policy; CLIENT is a cwm.llm.make_client spec (gemini, openai:MODEL, ...)
    llm+legal:CLIENT       the same, with the legal actions listed in the prompt
    ppo:DIR                a PPO policy trained inside a world model: a bundle with policy.npz (cwm train ppo), or
                           a policy directory (cwm.bundle.policy: policy.npz and encoder.py), acting in numpy;
                           its encoder runs in a hardened worker
    NAME=SPEC              any of the above, labelled NAME in results (cwm=cwm:/abs/run/bundle)

The label of an agent (its name in match keys, ``matches.jsonl``, tables and plots; what a resumed
tournament matches finished games by) is its NAME when it has one, else the spec string as typed. A
name is a letter followed by letters, digits and ``_ . + -`` (no ``:``, ``/``, ``=``, ``|``, ``#``, ``,``
or space), so a label never carries a machine's path unless one was typed, and it may not be another
kind's name (``random=cwm:x`` would mislabel a table). A ``=`` after the first ``:`` belongs to the
target (``cwm:runs/a=b/model.py`` has no name).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyspiel

from cwm import games, value_rules
from cwm.agents.base import Agent, ISMCTSAgent, MCTSAgent, RandomAgent
from cwm.agents.cwm import CWMAgent, inference_sampler
from cwm.agents.grammar import (  # noqa: F401  (the grammar's names are the specs' public API too)
    KINDS,
    NAME,
    AgentSpec,
    AgentSpecError,
    check_labels,
    colon_hint,
    parse_agent_spec,
    parse_agent_specs,
)
from cwm.agents.llm import LLMPolicyAgent
from cwm.agents.native import NativeISMCTSAgent, NativeMCTSAgent
from cwm.agents.ppo import PPOAgent, policy_at
from cwm.agents.selected import SelectedAgent, read_survivors
from cwm.agents.worker import DEFAULT_MOVE_CPU_S, WorkerAgent
from cwm.bundle import Bundle, load_bundle
from cwm.bundle.files import BundleError, read_manifest, verified_files
from cwm.bundle.game import same_game
from cwm.bundle.policy import PolicyError
from cwm.contract import ENCODER_API, resampler
from cwm.llm import make_client
from cwm.model import ActionCodec, WorldModel
from cwm.sandbox import load_source
from cwm.sandbox.budget import call_budget
from cwm.sandbox.equivalence import playout_checked
from cwm.sandbox.training import ContainedEncoder
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.gt_sampler import resampler_problem, resampler_self_test
from planners.ismcts import Sampler
from planners.mcts import ValueFn


@dataclasses.dataclass(frozen=True)
class Settings:
    """Settings shared by every agent of a tournament (written into its results).

    Attributes:
      search: the search settings of MCTS/ISMCTS agents (``SearchConfig``; paper: 1000 simulations, 10
        rollouts per leaf).
      llm_retries: rethink prompts after an illegal or unreadable LLM answer before forfeiting (default 3).
      llm_examples: example trajectories shown to the LLM policy (default 2).
      trust_models: plan on ``cwm:`` models in this process (``--trust``: today's in-process speed, every
        model call under ``search.call_time_s``) instead of in hardened planning workers; only for models
        you have read.
    """

    search: SearchConfig = SearchConfig()
    llm_retries: int = 3
    llm_examples: int = 2
    trust_models: bool = False

    def problems(self) -> list[str]:
        """What is out of range: the search config's problems, negative LLM retries or examples."""
        return self.search.problems() + [f"{what} (got {value})" for what, value, bad in [
            ("LLM retries must be >= 0", self.llm_retries, self.llm_retries < 0),
            ("LLM examples must be >= 0", self.llm_examples, self.llm_examples < 0),
        ] if bad]


def make_agent(spec: AgentSpec | str, game: str | games.GameSpec, *, settings: Settings = Settings(),
               seed: int | np.random.Generator | None = None, log_dir: Path | None = None,
               move_time_s: float | None = None) -> Agent:
    """Builds the agent a spec names, for ``game``.

    Args:
      spec: a parsed spec or a spec string.
      game: the real game.
      settings: search and LLM settings.
      seed: the agent's seed.
      log_dir: where an LLM client may write its call log (``None``: no log).
      move_time_s: the CPU seconds a ``cwm:`` agent's planning worker may use per move (``None``: the
        worker's default, ``cwm.agents.worker.DEFAULT_MOVE_CPU_S``).

    Raises:
      AgentSpecError: the spec does not fit the game (``gt-mcts`` on imperfect information, ``gt-ismcts`` on a
        game no ground-truth resampler can serve, or one where the ground-truth sampler fails its self-test
        (``planners.gt_sampler.resampler_self_test``), a ``cwm:`` model without inference on hidden information)
        or its target cannot be loaded.

    A ``cwm:`` agent is contained: its model runs in a hardened planning worker (``WorkerAgent``), unless
    ``settings.trust_models``.
    """
    spec = parse_agent_spec(spec) if isinstance(spec, str) else spec
    gspec = games.resolve(game)
    config = settings.search
    if spec.kind == "random":
        return RandomAgent(seed=seed)
    if spec.kind.startswith("gt-"):
        return _ground_truth_agent(spec.kind, gspec, config, seed)
    if spec.kind == "cwm":
        _check_inference(spec, gspec)
        if settings.trust_models:
            model, sampler, value_fn = load_cwm(spec.target, gspec.name, config.call_time_s)
            return CWMAgent(model, gspec, config, sampler=sampler, value_fn=value_fn, seed=seed)
        sources, name, twin = load_cwm_sources(spec.target, gspec.name)
        return WorkerAgent(sources, gspec, config, name=name, seed=seed,
                           move_cpu_s=move_time_s if move_time_s is not None else DEFAULT_MOVE_CPU_S, use_twin=twin)
    if spec.kind == "cwm-selected":
        def build(inner: AgentSpec, rng: np.random.Generator) -> Agent:
            return make_agent(inner, gspec, settings=settings, seed=rng, move_time_s=move_time_s)

        return SelectedAgent(spec.target, gspec, build=build, seed=seed)
    if spec.kind == "ppo":
        return ppo_agent(spec.target, gspec, trusted=settings.trust_models, seed=seed)
    client = make_client(spec.target, run_dir=log_dir)
    return LLMPolicyAgent(client, gspec, list_legal=spec.kind == "llm+legal", max_retries=settings.llm_retries,
                          num_examples=settings.llm_examples, seed=seed)


def _ground_truth_agent(kind: str, gspec: games.GameSpec, config: SearchConfig,
                        seed: int | np.random.Generator | None) -> Agent:
    """GT-MCTS or GT-ISMCTS: on OpenSpiel's C++ search for ``gt-mcts``/``gt-ismcts`` (``cwm.agents.native``,
    which stands in the Python planner where C++ cannot run), on the Python planner for the ``-py`` kinds."""
    game = games.load_game(gspec)
    if kind.startswith("gt-mcts"):
        if not gspec.perfect_information:
            raise AgentSpecError(f"{kind} needs perfect information; {gspec.name} has hidden information "
                                 f"(use gt-ismcts)")
        return NativeMCTSAgent(game, config, seed=seed) if kind == "gt-mcts" else MCTSAgent(config, seed=seed)
    problem = resampler_problem(game) or resampler_self_test(game)  # a name it cannot live up to is refused
    if problem:
        raise AgentSpecError(f"{kind} cannot play {gspec.name}: {problem}")
    return NativeISMCTSAgent(game, config, seed=seed) if kind == "gt-ismcts" else ISMCTSAgent(config, seed=seed)


def check_agent(spec: AgentSpec | str, game: str | games.GameSpec, *, settings: Settings = Settings()) -> None:
    """Checks that a spec can be built for ``game`` with ``settings``, without running LLM-written code.

    A ``cwm:`` target is only checked to be a ``.py`` file or a bundle directory whose files match their
    hashes in its manifest (read, not run), and on a hidden-information game to carry inference (a bundle whose manifest lists ``inference.py``): whether its model loads is the match's
    business (a model that does not load forfeits); a ``cwm-selected:`` target must hold a selection of
    ``game`` with a survivor. Any other spec is built once and dropped.

    Raises:
      AgentSpecError: the spec does not fit the game, its ``cwm:`` target does not exist, is a bundle whose
        files do not match its manifest, or has no inference
        for a hidden-information game, or its ``cwm-selected:`` target holds no selection of the game with a
        survivor.
      LLMConfigError: an ``llm:`` client that cannot be made (unknown provider, missing key or package).
      ValueError: settings the agent refuses (``num_simulations=0``).
    """
    spec = parse_agent_spec(spec) if isinstance(spec, str) else spec
    gspec = games.resolve(game)
    if spec.kind == "cwm-selected":
        try:
            read_survivors(spec.target, gspec.name)
        except ValueError as e:
            raise AgentSpecError(f"{spec}: {e}") from None
        return
    if spec.kind != "cwm":
        make_agent(spec, gspec, settings=settings, seed=0)
        return
    path = Path(spec.target)
    if not (path.is_dir() or (path.is_file() and path.suffix == ".py")):
        raise AgentSpecError(f"{spec}: expected a model .py file or a bundle directory, and it is neither"
                             f"{colon_hint(spec.bare)}")
    if path.is_dir():
        _check_bundle_files(spec, path)
    _check_inference(spec, gspec)


def _check_bundle_files(spec: AgentSpec, path: Path) -> None:
    """A bundle's manifest and every file's hash, read but not run: a bundle edited or damaged since its
    export is a setup error before any match, not a forfeit in every one."""
    try:
        verified_files(path, read_manifest(path))
    except BundleError as e:
        raise AgentSpecError(f"{spec}: {e}") from None


def _check_inference(spec: AgentSpec, game: games.GameSpec) -> None:
    """Refuses a ``cwm:`` agent that could only forfeit: one without inference on a hidden-information game
    (a model file never has one; a bundle has one when its manifest lists ``inference.py``)."""
    if game.perfect_information:
        return
    path = Path(spec.target)
    if path.is_dir():
        try:
            files = read_manifest(path)["files"]
        except BundleError:
            return  # not a readable bundle: loading it says why
        if isinstance(files, dict) and "inference.py" in files:
            return
        what = f"the bundle {path} has no inference.py"
    elif path.is_file():
        what = "a model file has no inference function (export a bundle with inference.py)"
    else:
        return  # nothing there: loading it says so
    raise AgentSpecError(f"{spec}: {game.name} has hidden information, so the CWM agent needs an inference "
                         f"function to draw the states it plans on, and {what}")


def ppo_agent(target: str, game: games.GameSpec, *, trusted: bool, seed: int | np.random.Generator | None) -> Agent:
    """The agent of a PPO policy in a bundle or a policy directory (``cwm.agents.ppo.policy_at``): its
    encoder in a hardened worker, or loaded here (gated) when ``trusted``.

    Raises:
      AgentSpecError: the directory has no readable policy or encoder, or the policy is for another game.
      BundleError: a bundle that fails its verification or holds no policy.
    """
    try:
        params, config, source = policy_at(target, game)
    except (PolicyError, OSError, UnicodeDecodeError) as e:
        raise AgentSpecError(f"ppo:{target}: {e}") from None
    if config.game and not same_game(game, config.game):  # compared by name: the file's text imports nothing
        raise AgentSpecError(f"ppo:{target}: the policy was trained for {config.game}, not {game.name}")
    if trusted:
        encode = load_source(source, name="ppo_encoder", api=ENCODER_API).encode
        return PPOAgent(params, config, encode, game, seed=seed)
    return PPOAgent(params, config, ContainedEncoder(source), game, seed=seed)


@functools.lru_cache(maxsize=16)
def load_cwm_sources(target: str, game: str) -> tuple[dict[str, str], str, bool | Literal["playout"]]:
    """The code of a model file or bundle directory, verified but not loaded: ``({"model.py": ...,
    "inference.py": ..., "value.py": ...}, name, use_twin)`` for a planning worker (``use_twin``: ``"playout"``
    where a bundle's twin evidence records a passing check of the twin's own playout, else ``True``). A bundle is
    verified by ``cwm.bundle.load_bundle`` (in the sandbox, with ``game``, the game the user named); a ``.py``
    file is read (the worker gates it). Cached per process.

    Raises:
      AgentSpecError: the path does not exist, is neither a ``.py`` file nor a directory, or is not UTF-8.
      BundleError: the bundle fails its verification.
    """
    path = Path(target)
    if path.is_dir():
        loaded = load_bundle(path, game=game)
        return dict(loaded.sources), f"bundle:{path.name}", twin_use(loaded, True)
    if path.is_file() and path.suffix == ".py":
        try:
            return {"model.py": path.read_text(encoding="utf-8")}, path.stem, True
        except UnicodeDecodeError as e:
            raise AgentSpecError(f"cwm:{target}: the model file is not UTF-8 ({e.reason} at byte {e.start})") from None
    raise AgentSpecError(f"cwm:{target}: expected a model .py file or a bundle directory, and it is neither")


def bundle_agent(bundle: Bundle, config: SearchConfig | None = None, *,
                 seed: int | np.random.Generator | None = None, move_cpu_s: float | None = None,
                 use_twin: bool = True, jax_rollouts: bool = False) -> Agent:
    """A CWM agent for the real game that plans on a loaded bundle's model: in a hardened worker (contained,
    one fork per match, a pipe round trip per move), or in this process for a trusted bundle.

    Args:
      bundle: a loaded, verified bundle (``cwm.bundle.load_bundle``).
      config: the search settings (default ``SearchConfig()``).
      seed: the agent's seed.
      move_cpu_s: CPU seconds per move in the worker (contained only; default ``DEFAULT_MOVE_CPU_S``).
      use_twin: plan on the bundle's verified twin where it has one (contained only: ``WorkerAgent``);
        ``False`` plans on the checked ``model.py`` with its own rollouts.
      jax_rollouts: value leaves by the bundle's JAX twin's batched rollouts where it has one (contained only,
        and with ``use_twin``). Off by default: on a CPU a jitted batch per leaf costs milliseconds (a
        tic-tac-toe move at 1,000 x 1: 3.8 CPU-s, against 26 ms with the twin's own playout); it pays where a
        leaf's rollouts are many and an accelerator runs them.
    """
    config = config or DEFAULT_SEARCH
    if not bundle.trusted:
        sources = {**bundle.sources, "jax_twin.py": bundle.jax_twin} if jax_rollouts and bundle.jax_twin else \
            bundle.sources
        return WorkerAgent(sources, bundle.spec, config, name=f"bundle:{bundle.path.name}", seed=seed,
                           move_cpu_s=DEFAULT_MOVE_CPU_S if move_cpu_s is None else move_cpu_s,
                           use_twin=twin_use(bundle, use_twin))
    model, sampler, value_fn = _trusted_parts(bundle)
    return CWMAgent(model, bundle.spec, config, sampler=sampler, value_fn=value_fn, seed=seed)


def twin_use(bundle: Bundle, use_twin: bool) -> bool | Literal["playout"]:
    """A worker's ``use_twin`` for a bundle: ``"playout"`` (its twin's own playout plays the rollouts) only where
    ``use_twin`` and the twin's evidence records a passing check of that playout, else ``use_twin``."""
    return "playout" if use_twin and playout_checked(bundle.twin_evidence) else use_twin


def bundle_move(bundle: Bundle, state: pyspiel.State, config: SearchConfig | None = None, *,
                seed: int | np.random.Generator | None = None, move_cpu_s: float | None = None) -> int:
    """The action id a bundle's CWM agent plays at a real game state (a one-move ``bundle_agent``: each call
    starts and ends a worker, about 10 ms besides the search, when contained).

    Raises:
      AgentError: the model could not plan (a contract breach, its worker timed out or crashed).
    """
    agent = bundle_agent(bundle, config, seed=seed, move_cpu_s=move_cpu_s)
    try:
        return agent.step(state)
    finally:
        agent.close()


@functools.lru_cache(maxsize=16)
def load_cwm(target: str, game: str, call_time_s: float = 2.0) -> tuple[WorldModel, Sampler | None, ValueFn | None]:
    """Loads a model file or bundle directory: the world model, its inference sampler and value function.

    In this process, for models the user trusts (``Settings.trust_models``, ``--trust``). A ``.py`` file is
    a world model only (static gate, every call under ``call_time_s``, ids from the ground truth). A directory is a bundle (``cwm.bundle.load_bundle``, loaded with ``game``, the game the user
    named, so a bundle of their own module game opens without trusting the engine it carries), whose optional
    ``inference.py`` and ``value.py`` supply the sampler and the leaf evaluator. Cached per process.

    Raises:
      AgentSpecError: the path does not exist, or is neither a ``.py`` file nor a directory.
    """
    path = Path(target)
    if path.is_dir():
        return _load_bundle(path, game, call_time_s)
    if path.is_file() and path.suffix == ".py":
        module = load_source(path.read_text(encoding="utf-8"), name=path.stem)
        # LLM-written code in-process: every call under the same time budget bundles get
        return WorldModel(module, codec=ActionCodec.from_game(games.load_game(game)), name=path.stem,
                          guard=call_budget(call_time_s)), None, None
    raise AgentSpecError(f"cwm:{target}: expected a model .py file or a bundle directory, and it is neither")


def _load_bundle(path: Path, game: str, call_time_s: float) -> tuple[WorldModel, Sampler | None, ValueFn | None]:
    return _trusted_parts(load_bundle(path, game=game, trusted=True, call_budget_s=call_time_s))


def _trusted_parts(bundle: Any) -> tuple[WorldModel, Sampler | None, ValueFn | None]:
    """A trusted bundle's model, inference sampler and value function, in this process."""
    sampler = value_fn = None
    if "inference.py" in bundle.sources:
        kind, resample = resampler(bundle.module("inference.py"))
        sampler = inference_sampler(bundle.model, resample, kind)  # type: ignore[arg-type]
    if "value.py" in bundle.sources:
        get_value = bundle.module("value.py").get_value
        guard = bundle.model.guard

        def value_fn(state: Any, player: int) -> float:
            return value_rules.number(guard(get_value, state.raw, player), "get_value")

    return bundle.model, sampler, value_fn
