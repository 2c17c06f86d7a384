"""`cwm export` and `cwm inspect`: turn a synthesis run into a bundle, and show what a bundle holds."""

from __future__ import annotations

import argparse
from typing import Any

from cwm import bundle
from cwm.bundle import Bundle


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export the best program of a synthesis run directory as a bundle")
    p.add_argument("run_dir", help="a finished `cwm synthesize --out` directory")
    p.add_argument("--out", required=True, help="the bundle directory to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing bundle directory")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("inspect", help="verify a bundle and print its provenance and accuracy")
    p.add_argument("bundle", help="a bundle directory")
    p.add_argument("--code", action="store_true", help="also print model.py")
    p.set_defaults(func=cmd_inspect)


def cmd_export(args: argparse.Namespace) -> int:
    path = bundle.export_run(args.run_dir, args.out, overwrite=args.overwrite)
    print(f"exported {path}")
    print(describe(bundle.load_bundle(path)))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    b = bundle.load_bundle(args.bundle)
    print(describe(b))
    if args.code:
        print()
        print(b.sources["model.py"])
    return 0


def describe(bundle: Bundle) -> str:
    """A human-readable summary for ``cwm inspect``."""
    m = bundle.manifest
    prov: dict[str, Any] = m.get("provenance", {})  # type: ignore[assignment]
    lines = [
        f"bundle {bundle.path}",
        f"  game: {m['game']} (ground truth {m['ground_truth']})",
        f"  format {m['bundle_format']}, contract {m['contract_version']}, cwm {m['cwm_version']}, "
        f"created {m['created_at']}",
        f"  files: {', '.join(sorted(m['files']))}",  # type: ignore[arg-type]
        f"  load check: {bundle.check_report.summary().splitlines()[0]}",
    ]
    for key in ("llm", "strategy", "seed", "solved", "train_accuracy", "test_accuracy", "llm_calls", "cost_usd"):
        if key in prov:
            lines.append(f"  {key}: {prov[key]}")
    lines.append(f"  model.py: {len(bundle.sources['model.py'].splitlines())} lines")
    return "\n".join(lines)
