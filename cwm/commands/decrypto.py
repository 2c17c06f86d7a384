"""`cwm decrypto run | sweep | play | view | tom`: the Decrypto benchmark from the command line."""

from __future__ import annotations

import argparse
import hashlib
import importlib.resources
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import prompts
from cwm import decrypto
from cwm.decrypto import prompting, report, runner, specs
from cwm.decrypto.types import ROLES, DecryptoError, Episode
from cwm.llm import make_client
from cwm.synthesis.report import git_commit


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("decrypto", help="the Decrypto language benchmark: play, evaluate, sweep, view")
    dsub = p.add_subparsers(dest="decrypto_command", metavar="DECRYPTO_COMMAND", required=True)

    r = dsub.add_parser("run", help="evaluate agents in every pairing of the roles (cross-play), resumable")
    _roles(r, nargs="+")
    r.add_argument("--matched", action="store_true",
                   help="Alice and Bob are read in step (team i = i-th Alice + i-th Bob) instead of all pairs")
    _common(r)
    r.add_argument("--probes", action="store_true", help="ask the theory-of-mind questions of LLM agents")
    r.set_defaults(func=cmd_run)

    s = dsub.add_parser("sweep", help="embedding Alice/Bob vs embedding Eve across Alice's k: one plot")
    s.add_argument("--k", default="1,4,16,64,256,1024", help="comma list of k (default 1,4,16,64,256,1024)")
    s.add_argument("--alice-options", default="smart=0,wary=1",
                   help="other options of the embed Alice (default smart=0,wary=1)")
    _common(s)
    s.set_defaults(func=cmd_sweep)

    g = dsub.add_parser("play", help="hot-seat play at this terminal: any role 'human'")
    _roles(g, nargs=None)
    g.add_argument("--seed", type=int, default=0, help="game seed: the keywords and codes (default 0)")
    g.add_argument("--out", help="append the finished game to this JSONL transcript file")
    g.set_defaults(func=cmd_play)

    v = dsub.add_parser("view", help="write the static HTML viewer of transcript files")
    v.add_argument("episodes", nargs="+", help="episode JSONL files (a run's episodes/*.jsonl)")
    v.add_argument("--out", required=True, help="the HTML file to write")
    v.set_defaults(func=cmd_view)

    t = dsub.add_parser("tom", help="theory-of-mind scores (95%% intervals) of a run made with --probes")
    t.add_argument("episodes", nargs="+", help="episode JSONL files")
    t.set_defaults(func=cmd_tom)


def _roles(p: argparse.ArgumentParser, *, nargs: str | None) -> None:
    for role in ROLES:
        p.add_argument(f"--{role}", nargs=nargs, required=True,
                       help=f"{role}'s agent: embed[:OPTIONS], llm:SPEC (llm:gemini, llm:replay:FILE) or human")
    p.add_argument("--temperature", type=float, default=0.6, help="LLM sampling temperature of play (default 0.6)")
    p.add_argument("--cache", help="SQLite cache file for LLM replies")
    p.add_argument("--max-retries", type=_nonnegative, default=2,
                   help="format retries before a default move (default 2)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--episodes", type=_positive, default=32, help="episodes per seed (default 32)")
    p.add_argument("--seeds", type=_positive, default=3, help="seeds (default 3)")
    p.add_argument("--out", required=True, help="run directory; running again into it resumes")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
    return value


def _positive(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    return _whole(text, 1)


def _nonnegative(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    return _whole(text, 0)


def _factory(args: argparse.Namespace, out: Path | None, human: Callable[[str], Any] | None = None):  # type: ignore[no-untyped-def]
    """``make(pairing)``: the three agents of a pairing, sharing one embedding and one client per spec."""

    clients: dict[str, Any] = {}

    def client(spec: str) -> Any:
        if spec not in clients:
            cache = getattr(args, "cache", None)
            clients[spec] = make_client(spec, run_dir=out / "llm" if out else None,
                                        cache=Path(cache) if cache else None)
        return clients[spec]

    def embedding(vocab: int, vectors: str) -> Any:
        kwargs = {"vocab_size": vocab} if vocab else {}
        return decrypto.load_embedding(vectors, extra_words=decrypto.keyword_list(), **kwargs)

    options = {"temperature": getattr(args, "temperature", 0.6), "max_retries": getattr(args, "max_retries", 2)}

    def make(pairing: runner.Pairing) -> tuple[Any, Any, Any]:
        return tuple(specs.build_agent(specs.parse_spec(getattr(pairing, r), r), r, embedding=embedding,  # type: ignore[return-value]
                                       llm_client=client, human=human, llm_options=options) for r in ROLES)

    return make


def _record(args: argparse.Namespace, command: str) -> dict[str, Any]:

    words = importlib.resources.files("cwm.decrypto").joinpath("data/keywords.txt").read_bytes()
    return {"command": command, "episodes": args.episodes, "seeds": args.seeds,
            "temperature": getattr(args, "temperature", None), "keywords": len(decrypto.keyword_list()),
            "keywords_sha256": hashlib.sha256(words).hexdigest()[:16], "git_commit": git_commit(),
            "prompt_hashes": {n: prompts.prompt_hash(n) for n in prompting.template_names()}}


def _evaluate(pairings: list[runner.Pairing], args: argparse.Namespace, out: Path,
              probes: bool = False) -> list[dict[str, Any]]:
    make = _factory(args, out)
    for spec in {s for p in pairings for s in (p.alice, p.bob, p.eve)}:
        if spec.strip() == "human":
            raise DecryptoError("a human player belongs in `cwm decrypto play`, not in an evaluation run")
    rows = []
    for number, pairing in enumerate(pairings, start=1):
        if not args.no_progress:
            print(f"[{number}/{len(pairings)}] {pairing.alice} + {pairing.bob} vs {pairing.eve}", file=sys.stderr)
        episodes = runner.run_pairing(pairing, make, out, episodes=args.episodes, seeds=args.seeds, probes=probes,
                                      progress=not args.no_progress)
        decrypto.write_html(out / "transcripts" / f"{pairing.slug}.html", episodes, title=pairing.slug)
        rows.append({"pairing": pairing.to_json(), "summary": decrypto.summarize(episodes),
                     "tom": decrypto.tom_report(episodes) if probes else {}})
    return rows


def cmd_run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    pairings = runner.cross_play(args.alice, args.bob, args.eve, matched=args.matched)
    for pairing in pairings:
        for role in ROLES:
            specs.parse_spec(getattr(pairing, role), role)  # refuse a bad spec before anything runs
    rows = _evaluate(pairings, args, out, probes=args.probes)
    paths = report.write_results(out, rows, _record(args, "cwm decrypto run"))
    plots = report.plot_pairings(out / "plots", rows)
    print(paths["markdown"].read_text(encoding="utf-8"), end="")
    print(f"results: {paths['json']}, {paths['csv']}, {paths['markdown']}; plots: {', '.join(map(str, plots))}; "
          f"transcripts: {out / 'episodes'} (JSONL), {out / 'transcripts'} (HTML)")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    out = Path(args.out)
    try:
        ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    except ValueError:
        raise DecryptoError(f"--k: expected a comma list of whole numbers, got {args.k!r}") from None
    extra = f",{args.alice_options}" if args.alice_options else ""
    pairings = [runner.Pairing(f"embed:k={k}{extra}", "embed", "embed") for k in ks]
    for pairing in pairings:
        specs.parse_spec(pairing.alice, "alice")
    rows = _evaluate(pairings, args, out)
    record = _record(args, "cwm decrypto sweep") | {"k": ks, "alice_options": args.alice_options}
    paths = report.write_results(out, rows, record)
    plot = report.plot_sweep(out / "plots" / "k_sweep.png", ks, [r["summary"] for r in rows])
    print(paths["markdown"].read_text(encoding="utf-8"), end="")
    print(f"results: {paths['json']}, {paths['csv']}, {paths['markdown']}; plot: {plot}")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    terminal = decrypto.Terminal()
    make = _factory(args, Path(args.out).parent if args.out else None,
                    human=lambda role: decrypto.HumanAgent(role, terminal))
    alice, bob, eve = make(runner.Pairing(args.alice, args.bob, args.eve))
    settings = decrypto.EpisodeSettings(agent_seed=args.seed, episode_id=f"play/s{args.seed}")
    episode = decrypto.play_episode(alice, bob, eve, game_seed=args.seed, settings=settings, on_turn=terminal.announce)
    terminal.clear()
    terminal.write(f"Game over: {episode.end} after {len(episode.turns)} turns. "
                   f"The keywords were {', '.join(episode.keywords)}.")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with Path(args.out).open("a", encoding="utf-8") as f:
            f.write(json.dumps(episode.to_json()) + "\n")
        terminal.write(f"transcript appended to {args.out}")
    return 0


def _load(paths: list[str]) -> list[Episode]:
    episodes = [e for p in paths for e in runner.read_episodes(Path(p))]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise DecryptoError(f"no such episode file: {missing[0]}")
    return episodes


def cmd_view(args: argparse.Namespace) -> int:
    episodes = _load(args.episodes)
    path = decrypto.write_html(Path(args.out), episodes)
    print(f"wrote {len(episodes)} episodes to {path}")
    return 0


def cmd_tom(args: argparse.Namespace) -> int:
    episodes = _load(args.episodes)
    scores = decrypto.tom_report(episodes)
    if not scores:
        raise DecryptoError("these episodes hold no probe answers: run `cwm decrypto run --probes` with LLM agents")
    print(json.dumps(scores, indent=2))
    return 0
