"""`cwm export` and `cwm inspect`: turn a synthesis run into a bundle, and show what a bundle holds."""

from __future__ import annotations

import argparse
from typing import Any

from cwm import bundle
from cwm.bundle import Bundle, exported_target
from cwm.bundle.files import SEAL_MISSING, provenance_seal
from cwm.synthesis.report import target_words
from cwm.text import clean

_GAME_HELP = ("the bundle's game as you name it: a registry name, an OpenSpiel game string, or your own "
              "path/to/module.py:short_name (imported as your code; needed for a bundle of a module game "
              "unless --trust-game-module)")
_TRUST_HELP = ("import the game engine a bundle of a module game carries (game.py, ordinary Python that runs "
               "unsandboxed): only for a bundle from a source you trust")


# what a bundle's accuracies measure, and at which stage (as `cwm.synthesis.report.target_words` names them)
WORLD_MODEL, JOINT = target_words("world_model")[1], target_words("joint")[1]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export the best program of a synthesis run directory as a bundle")
    p.add_argument("run_dir", help="a finished `cwm synthesize --out` directory")
    p.add_argument("--out", required=True, help="the bundle directory to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing bundle directory")
    p.add_argument("--inference", help="an open-deck inference run (`cwm synthesize --target inference`) for "
                                       "this world model: its best program becomes the bundle's inference.py")
    p.add_argument("--game", help=_GAME_HELP + "; default: the game the run recorded")
    p.add_argument("--trust-game-module", action="store_true",
                   help=_TRUST_HELP + "; verifies the new bundle with the engine it carries")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("inspect", help="verify a bundle and print its provenance and accuracy")
    p.add_argument("bundle", help="a bundle directory")
    p.add_argument("--code", action="store_true", help="also print model.py")
    p.add_argument("--game", help=_GAME_HELP)
    p.add_argument("--trust-game-module", action="store_true", help=_TRUST_HELP)
    p.set_defaults(func=cmd_inspect)


def cmd_export(args: argparse.Namespace) -> int:
    path = bundle.export_run(args.run_dir, args.out, game=args.game, overwrite=args.overwrite,
                             inference_run=args.inference)
    print(f"exported {path}")
    # verified as a receiver loads it: with the game this export used, or the engine it carries if so told
    game = args.game or (None if args.trust_game_module else bundle.run_game(args.run_dir))
    print(describe(bundle.load_bundle(path, game=game, trust_game_module=args.trust_game_module)))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    b = bundle.load_bundle(args.bundle, game=args.game, trust_game_module=args.trust_game_module)
    print(describe(b))
    if args.code:  # a stranger's code: its escape sequences are shown, not sent to the terminal
        print()
        print(clean(b.sources["model.py"], limit=None, multiline=True))
    return 0


def twin_lines(bundle: Bundle) -> list[str]:
    """What ``cwm inspect`` says of a bundle's twin and its equivalence evidence (verified at load)."""
    evidence: Any = bundle.twin_evidence
    if evidence is None:
        return []
    return [f"  twin.py: {len(bundle.sources['twin.py'].splitlines())} lines; planning workers use it in place of "
            f"model.py (its evidence names the sha256 of both files)",
            f"  twin evidence: {str(evidence.get('verdict'))[:40]}: {str(evidence.get('reason'))[:400]}",
            f"  twin evidence does not prove: {str(evidence.get('does_not_prove'))[:400]}"]


def jax_twin_lines(bundle: Bundle) -> list[str]:
    """What ``cwm inspect`` says of a bundle's JAX twin and its equivalence evidence (verified at load)."""
    evidence: Any = bundle.jax_twin_evidence
    if evidence is None or bundle.jax_twin is None:
        return []
    return [f"  jax_twin.py: {len(bundle.jax_twin.splitlines())} lines; a JAX twin (cwm.jax_contract), checked "
            f"against model.py along the stored games at load",
            f"  jax twin evidence: {str(evidence.get('verdict'))[:40]}: {str(evidence.get('reason'))[:400]}",
            f"  jax twin observation tensors: {str(evidence.get('observation_tensor'))[:200]}",
            f"  jax twin evidence does not prove: {str(evidence.get('does_not_prove'))[:600]}"]


def describe(bundle: Bundle) -> str:
    """A human-readable summary for ``cwm inspect``, each line cleaned (``cwm.text.clean``)."""
    m = bundle.manifest
    prov: dict[str, Any] = m["provenance"]  # type: ignore[assignment]
    lines = [
        f"bundle {bundle.path}",
        f"  game: {m['game']} (ground truth {m['ground_truth']})",
        f"  format {m['bundle_format']}, contract {m['contract_version']}, cwm {m['cwm_version']}, "
        f"created {m['created_at']}",
        f"  files: {', '.join(sorted(m['files']))}",  # type: ignore[arg-type]
        f"  load check: {bundle.check_report.summary(quantity=WORLD_MODEL).splitlines()[0]}",
    ]
    # a closed-deck (joint) synthesis, one module as model.py and inference.py: its rates are inference
    # accuracies of that module (the display asks the same function)
    joint = exported_target(bundle) == "joint"
    for key in ("llm", "answered_by", "relay", "date", "strategy", "seed", "solved", "train_accuracy",
                "test_accuracy", "llm_calls", "cost_usd"):
        if key in prov:
            measured = (" (inference accuracy of the joint module)" if joint else
                        " (transition accuracy of the world model)") if key.endswith("_accuracy") else ""
            lines.append(f"  {key}: {prov[key]}{measured}")
    if provenance_seal(m) == SEAL_MISSING:
        lines.append("  provenance: not covered by a hash (no provenance_sha256: written by an older cwm, or "
                     "deleted); nothing vouches for the fields above")
    inference: Any = prov if joint else prov.get("inference")
    if isinstance(inference, dict):
        lines.append(f"  inference (at synthesis): train {inference.get('train_accuracy')}, test "
                     f"{inference.get('test_accuracy')}, LLM calls: {inference.get('llm_calls')}"
                     f"{' (the joint run above)' if joint else ''}")
    if bundle.inference_report is not None:
        quantity = JOINT if joint else "inference accuracy (inference)"
        lines.append(f"  inference load check: {bundle.inference_report.summary(quantity=quantity).splitlines()[0]}")
    value: Any = prov.get("value")
    if isinstance(value, dict):
        lines.append(f"  value (tournament): winner {value.get('winner') or 'rollouts (no value.py kept)'}, "
                     f"LLM calls: {value.get('llm_calls')}")
    if bundle.value_report is not None:
        lines.append(f"  value load check: {bundle.value_report.summary().splitlines()[0]}")
    if bundle.policy is not None:
        net, record = bundle.policy.config, bundle.policy.record
        lines.append(f"  ppo policy: {net.obs_size} inputs, {net.hidden} units{' with a GRU' if net.recurrent else ''}, "
                     f"{net.num_actions} actions; seed {record.get('seed')}, mean return {record.get('best_score')} "
                     f"against random in the model")
    lines.append(f"  model.py: {len(bundle.sources['model.py'].splitlines())} lines")
    lines += twin_lines(bundle) + jax_twin_lines(bundle)
    # the manifest's fields are the bundle author's text (nothing checks them): shown, never obeyed
    return "\n".join(clean(line, limit=None) for line in lines)
