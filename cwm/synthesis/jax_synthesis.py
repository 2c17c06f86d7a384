"""JAX-twin synthesis end to end: a JAX twin (``cwm.jax_contract``) of a bundle's checked world model, written by
an LLM from the model, the contract and the game's action-id table, accepted only on the JAX differential
equivalence check (``cwm.sandbox.jax_equivalence``: the model and the twin each in their own sandbox child),
refined with the first diverging step until it passes, and saved in the bundle as ``jax_twin.py`` with its
evidence (``jax_twin_evidence.json``). The search, the final check and the saving are the fast twin's
(``cwm.synthesis.fast.search_twin``).
"""

from __future__ import annotations

import time
from pathlib import Path

from cwm import games
from cwm.bundle import load_bundle
from cwm.llm import Client
from cwm.sandbox import Sandbox
from cwm.sandbox.equivalence import DEFAULT_EQUIVALENCE, EquivalenceSettings, Memo
from cwm.sandbox.jax_equivalence import check_jax_equivalence
from cwm.synthesis.engine import Progress
from cwm.synthesis.fast import FastResult, TwinKind, search_twin
from cwm.synthesis.jax_target import jax_checker, jax_target
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.types import UsageError


def synthesize_jax(game: str | games.GameSpec | None, llm: Client, settings: SynthesisSettings | None = None, *,
                   run_dir: str | Path, bundle: str | Path, equivalence: EquivalenceSettings = DEFAULT_EQUIVALENCE,
                   progress: Progress | None = None) -> FastResult:
    """Synthesises a JAX twin of the model of ``bundle`` and saves the accepted one there with its evidence.

    Args:
      game: the bundle's game as you name it (``None``: the manifest's); its rules and its action codec
        (``cwm.games.action_codec``: the twin's ids) are the prompts'.
      llm: the LLM client.
      settings: ``SynthesisSettings.of("jax", ...)`` (``isolate`` must stay on).
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      bundle: the bundle folder (``cwm export``). Where it holds a PPO encoder (``encoder.py``), the check
        compares ``observation_tensor`` with it.
      equivalence: the equivalence check's bound, playouts and limits.
      progress: called with the engine after each processed call.

    Returns:
      a ``FastResult`` whose ``twin`` is the accepted ``jax_twin.py`` (``None``: none passed; the bundle is
      then unchanged).

    Raises:
      UsageError: a setting out of range, or ``isolate`` off.
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
    """
    start = time.monotonic()
    settings = settings_from("jax", settings, {}, "synthesize_jax")
    if not settings.isolate:
        raise UsageError("synthesize_jax: a JAX twin runs only in the sandbox; isolate cannot be turned off")
    loaded = load_bundle(bundle, game=game)
    model, text, root = loaded.sources["model.py"], games.rules_text(loaded.spec), Path(run_dir)
    codec, encoder = games.action_codec(loaded.spec), loaded.sources.get("encoder.py")
    with Sandbox(limits=equivalence.limits) as box:
        memo: Memo = {}  # the model's playouts, played once for every candidate and the final check
        check = jax_checker(model, codec, equivalence, encoder=encoder, sandbox=box, memo=memo)
        target = jax_target(text, model, codec, num_players=loaded.spec.players, check=check,
                            encoder=encoder)
        kind = TwinKind("jax", lambda source: check_jax_equivalence(model, source, codec=codec, encoder=encoder,
                                                                    settings=equivalence, sandbox=box, memo=memo),
                        {}, "jax.json", "jax_twin_evidence.json")
        return search_twin(target, kind, (loaded, text, root), llm, settings, equivalence, start, progress)


__all__ = ["synthesize_jax"]
