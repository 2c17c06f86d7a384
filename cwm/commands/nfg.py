"""`cwm nfg generate | eval | audit`: normal-form game reasoning evals with solver-checked answers."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import threading
from pathlib import Path
from typing import Any

import prompts
from cwm import nfg, sandbox
from cwm.llm import SPEC_FORMS, make_client
from cwm.nfg import audit as nfg_audit
from cwm.nfg import registry, route, transcribe
from cwm.nfg.score import ItemResult, read_items
from cwm.nfg.tasks import FAMILIES
from cwm.synthesis.report import git_commit
from cwm.types import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nfg", help="normal-form game reasoning evals: generate, evaluate, audit")
    nsub = p.add_subparsers(dest="nfg_command", metavar="NFG_COMMAND", required=True)

    g = nsub.add_parser("generate", help="write seeded tasks (our JSONL, a superset of OpenAI evals JSONL)")
    g.add_argument("--families", default="all", help=f"'all' or a comma list of {', '.join(FAMILIES)}")
    g.add_argument("--n", type=_count, default=50, help="items per family (default 50)")
    g.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    g.add_argument("--out", help="output JSONL: our format (formal game + accepted answers)")
    g.add_argument("--evals-out", help="also write the plain OpenAI evals JSONL (input + ideal only) here")
    g.add_argument("--registry", metavar="DIR",
                   help="also write an OpenAI evals registry (registry/data, registry/evals, registry/eval_sets) "
                        "and inspect_tasks.py for inspect_ai under DIR")
    g.set_defaults(func=cmd_generate)

    e = nsub.add_parser("eval", help="run the direct and/or CWM contestant on a task file")
    e.add_argument("tasks", help="task JSONL in our format (from `cwm nfg generate`)")
    e.add_argument("--llm", required=True, help=f"LLM spec: {SPEC_FORMS}")
    e.add_argument("--contestant", choices=["direct", "cwm", "both"], default="both")
    e.add_argument("--out", required=True,
                   help="output directory (results.json, results.md, items.jsonl); re-running into it resumes, "
                        "skipping items already in its items.jsonl")
    e.add_argument("--limit", type=_count, help="only the first N tasks (0: none)")
    e.add_argument("--workers", type=int, default=4, help="concurrent LLM calls (default 4)")
    e.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    e.add_argument("--cache", help="SQLite cache file for LLM replies")
    e.add_argument("--record", help="also record every LLM call to this replay file")
    e.add_argument("--in-process", action="store_true",
                   help="run the CWM route's code in-process behind the static gate instead of the sandbox")
    e.set_defaults(func=cmd_eval)

    a = nsub.add_parser("audit", help="recompute every ideal from its formal game and list disagreements")
    a.add_argument("tasks", help="evals JSONL; records carry an 'nfg' formal game, or (with --transcribe --llm) not")
    a.add_argument("--json", action="store_true", help="print findings as JSON lines")
    a.add_argument("--transcribe", action="store_true",
                   help="also write each record's game from its text and flag a stored game that differs; with "
                        "--llm, the LLM transcribes records without a formal game (its code runs in the sandbox)")
    a.add_argument("--llm", help=f"with --transcribe: LLM spec ({SPEC_FORMS}) for "
                                 "plain records and texts not in cwm's task format")
    a.add_argument("--in-process", action="store_true",
                   help="with --transcribe: run the LLM's code in-process behind the static gate, not in the sandbox")
    a.add_argument("--workers", type=int, default=4, help="with --transcribe: concurrent LLM calls (default 4)")
    a.add_argument("--cache", help="with --transcribe: SQLite cache file for LLM replies")
    a.add_argument("--record", help="with --transcribe: also record every LLM call to this replay file")
    a.set_defaults(func=cmd_audit)


def _count(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _families(text: str) -> list[str]:
    if text == "all":
        return list(FAMILIES)
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown or not chosen:
        raise nfg.NfgFormatError(f"--families: unknown {unknown or text!r}; expected 'all' or some of {list(FAMILIES)}")
    return chosen


def cmd_generate(args: argparse.Namespace) -> int:
    if not (args.out or args.evals_out or args.registry):
        raise UsageError("nothing to write: give --out FILE, --evals-out FILE or --registry DIR")
    if args.n < 1:  # zero items would write empty files and say it succeeded
        raise UsageError(f"--n {args.n}: give at least 1 item per family")
    tasks = nfg.generate(_families(args.families), args.n, seed=args.seed)
    where = f"{len(tasks)} tasks ({args.n} per family, seed {args.seed})"
    if args.out:
        print(f"wrote {where} to {nfg.save(args.out, tasks)}")
    if args.evals_out:
        print(f"wrote the plain evals format of {where} to {nfg.save(args.evals_out, tasks, evals_only=True)}")
    if args.registry:

        paths = registry.export(tasks, args.registry, seed=args.seed)
        print(f"wrote the evals registry of {where} to {paths['evals'].parents[1]} (eval set 'nfg'; evals "
              f"{', '.join(registry.eval_name(f) for f in dict.fromkeys(t.family for t in tasks))}) "
              f"and inspect_ai tasks to {paths['inspect']}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:

    tasks = nfg.load(args.tasks)
    if args.limit is not None:
        tasks = tasks[: args.limit]
    options: dict[str, Any] = {"record": args.record} if args.record else {}
    client = make_client(args.llm, run_dir=Path(args.out) / "llm", cache=Path(args.cache) if args.cache else None,
                         **options)
    names = ["direct", "cwm"] if args.contestant == "both" else [args.contestant]
    done = _resume(Path(args.out) / "items.jsonl", tasks, names)
    with _sandbox(enabled="cwm" in names and not args.in_process) as box, _appender(Path(args.out)) as append:
        contestants = [nfg.DirectContestant(client, temperature=args.temperature) if n == "direct"
                       else nfg.CwmContestant(client, sandbox=box, in_process=args.in_process,
                                              temperature=args.temperature) for n in names]
        new = nfg.evaluate(tasks, contestants, workers=args.workers, on_result=append, skip=done)
    by_pair = {**done, **{(r.contestant, r.task_id): r for r in new}}
    results = [by_pair[(n, t.id)] for n in names for t in tasks]
    record = {
        "command": "cwm nfg eval", "tasks": str(args.tasks), "tasks_sha256": _sha256(args.tasks),
        "n_tasks": len(tasks), "llm": args.llm, "model": client.model, "contestants": names,
        "temperature": args.temperature, "sandbox": box is not None, "prompt_hashes": _prompt_hashes(tasks),
        "git_commit": _git_commit(), "ledger": _ledger(client), "resumed_items": len(done),
    }
    paths = nfg.save_results(args.out, results, record=record)
    waiting = [r for r in results if r.status == "error" and r.detail.startswith("PendingBatch")]
    if waiting:  # not a score of 0: the work is not done yet (synthesis says the same, with exit 2)
        print(f"cwm nfg eval: {len(waiting)} of {len(results)} items wait for replies in the batch directory of "
              f"--llm {args.llm}: answer them (cwm llm answer-batch DIR) and run the same command again; the "
              f"{len(results) - len(waiting)} items with replies are kept", file=sys.stderr)
        return 2
    print(paths["markdown"].read_text(encoding="utf-8"), end="")
    print(f"results: {paths['json']}, {paths['markdown']}, {paths['items']}")
    return 0


def _resume(items: Path, tasks: list[nfg.Task], names: list[str]) -> dict[tuple[str, str], ItemResult]:
    """The results an earlier run into the same directory already has for these tasks and contestants
    (errors are run again); ``items`` is rewritten to hold just those, ready for appending."""
    ids = {t.id for t in tasks}
    done = {(r.contestant, r.task_id): r for r in read_items(items)
            if r.contestant in names and r.task_id in ids and r.status != "error"}
    if items.exists():
        items.write_text("".join(json.dumps(r.to_json()) + "\n" for r in done.values()), encoding="utf-8")
        print(f"resuming: {len(done)} of {len(tasks) * len(names)} items already done in {items}", file=sys.stderr)
    return done


@contextlib.contextmanager
def _appender(out: Path):  # type: ignore[no-untyped-def]
    """``append(result)``: adds one line to ``out/items.jsonl`` as soon as a result is in (thread-safe)."""
    out.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    with (out / "items.jsonl").open("a", encoding="utf-8") as f:
        def append(result: ItemResult) -> None:
            with lock:
                f.write(json.dumps(result.to_json()) + "\n")
                f.flush()

        yield append


@contextlib.contextmanager
def _sandbox(*, enabled: bool):  # type: ignore[no-untyped-def]
    """A ``cwm.sandbox.Sandbox`` when enabled, else None (the caller asked for in-process runs)."""

    if not enabled:
        yield None
        return
    box = sandbox.Sandbox(limits=sandbox.Limits(wall_s=20.0, cpu_s=20.0))
    try:
        yield box
    finally:
        box.close()


def _prompt_hashes(tasks: list[nfg.Task]) -> dict[str, str]:
    names = {"nfg/direct_system.md", "nfg/task.md"}
    for family in {t.family for t in tasks}:
        names.update(route.prompt_names(family))
        names.add(f"nfg/questions/{family}.md")
    return {n: prompts.prompt_hash(n) for n in sorted(names)}


def _sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _git_commit() -> str:

    return git_commit()


def _ledger(client: Any) -> Any:
    ledger = client.ledger
    return ledger.snapshot() if ledger is not None else None


def cmd_audit(args: argparse.Namespace) -> int:
    if args.llm is not None and not args.transcribe:
        raise UsageError("--llm is only used with --transcribe")
    if args.transcribe:
        findings = _transcribed_audit(args)
    else:
        findings = nfg_audit.audit_file(args.tasks)
    if args.json:
        for f in findings:
            print(json.dumps(f.to_json()))
    else:
        print(nfg_audit.report(findings, transcribed=args.transcribe))
    return 1 if any(f.status in nfg_audit.FAILING for f in findings) else 0


def _transcribed_audit(args: argparse.Namespace) -> list[nfg_audit.AuditFinding]:

    if not Path(args.tasks).is_file():  # fail before any LLM is set up
        raise FileNotFoundError(2, "No such file or directory", args.tasks)
    if args.llm is None:  # the texts in cwm's task format are read without an LLM; no code runs
        return transcribe.audit_file(args.tasks, None)
    options: dict[str, Any] = {"record": args.record} if args.record else {}
    client = make_client(args.llm, cache=Path(args.cache) if args.cache else None, **options)
    with _sandbox(enabled=not args.in_process) as box:
        return transcribe.audit_file(args.tasks, client, sandbox=box, workers=args.workers)
