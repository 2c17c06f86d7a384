"""A real-model synthesis session through the batch client: prompts out as text, replies in as text.

No provider is reachable from some machines; the batch client is how a real model answers there. Each
call of this script advances one session by as far as the answers written so far allow:

    python experiments/real_session.py GAME --work DIR --answered-by NAME

GAME is named as every ``cwm`` command names it: a registry name, or your own module
``path/to/game.py:short_name`` with ``--rules FILE`` (default ``path/to/game.md``) and ``--view json|text``
(default: detected from its observations).

1. answers in ``DIR/answers/<key>.md`` are read into the batch directory (``cwm llm answer-batch --from``);
2. what ``cwm run GAME`` asks of an LLM runs (resuming ``DIR/run``) with the batch client until a request
   has no reply: world-model synthesis, then for a hidden-information game the open-deck inference
   synthesis for the world model found;
3. if one waits, its text is written to ``DIR/prompts/<key>.md`` and the script exits with status 3:
   hand each prompt, and nothing else, to the answering model (``experiments/answering_brief.md``),
   write its reply verbatim to ``DIR/answers/<key>.md``, and run the script again;
4. once both have finished, the whole session is replayed from the replies into a fresh run that
   records it (``DIR/recording.jsonl``), replayed again from that recording alone, and the two runs are
   compared: the recording must reproduce the session offline, program for program.

``--deck closed`` runs the closed-deck session of a hidden-information game instead: one joint synthesis of
a world model and its inference function from what each player saw (``cwm synthesize GAME --target joint``).

The replies carry ``--answered-by`` as their model, and ``DIR/provenance.json`` says who answered
(``answered_by``), how the texts travelled (``relay``, one of ``cwm.llm.RELAYS``), when (``date``), how many
replies carried a prompt hash that matched their request (``replies``, ``prompts_hashed``: a relay that
writes ``DIR/answers/<key>.sha256``, the SHA-256 of the text it gave the answering model, attests each
copy; a match says the relay's copy matched the request, on the relay's word), the calls per stage and
the prompt hashes, the strategy and the budget. ``--strategy tree|conversation`` picks the refinement
strategy of every stage (default the library's); it is in the provenance and in each stage's resume key, so
a ``--work`` folder of the other strategy refuses to resume. ``--ship`` copies both into ``cwm/data/recordings/real/``
(``real/closed/`` for the closed deck; under ``real/prose/`` for a session with ``--rules prose``), where ``cwm run GAME`` finds an open-deck session and the experiment
scripts both (a real session is replayed in preference to a scripted demo). A session of ``--seed 0`` ships
as ``GAME.jsonl`` (with ``GAME.provenance.json``); one of another seed S as ``seeds/GAME.seed<S>.jsonl`` in
the same folder (``seeds/GAME.seed<S>.provenance.json`` beside it), which the experiment scripts replay for
their seed S under ``--llm auto`` (``synthesis_table.py --seeds N``, ``arena_figure.py --protocol paper``,
``inference_table.py --seeds N``): a seed draws other training games, so its prompts are its own.
``--ship-to DIR`` copies them
to ``DIR/<game>.<strategy>.jsonl`` and ``.provenance.json`` instead (``DIR/closed/`` for the closed deck),
for any game and rules file: a held-out
game's sessions (``experiments/heldout/sessions/``, replayed by ``experiments/heldout_loop.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from cwm import games
from cwm.cli import EXIT_WAITING
from cwm.llm import (
    BatchFileClient,
    Client,
    PendingBatch,
    RecordingClient,
    make_client,
)
from cwm.llm.batch_texts import export_pending, import_answers
from cwm.llm.provenance import RELAY_BY, checked_name, relay_by
from cwm.pipeline.recordings import recording_name
from cwm.synthesis import STRATEGIES, SynthesisResult, SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference
from cwm.synthesis.store import ResumeError
from cwm.text import counted
from cwm.types import CwmError

REPOSITORY = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:  # the game, its rules and its view as every cwm command takes them: a bad one is one line
        checked_name(args.answered_by, where="--answered-by", field="NAME")
        if args.view is not None:
            games.choose_view(args.game, args.view)
        game, work = games.resolve(args.game, rules=args.rules), Path(args.work)
        games.rules_text(game)
    except CwmError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    spec = game
    if args.ship and args.rules not in (None, *games.RULES_TIERS):
        print("error: --ship takes a session of a shipped tier (spec or prose), not of a rules file", file=sys.stderr)
        return 2
    if args.deck == "closed" and spec.perfect_information:
        print(f"error: {spec.name} has no hidden information: a closed-deck session needs one", file=sys.stderr)
        return 2
    if args.ship and spec.module.endswith(".py"):
        print(f"error: --ship is for registered games; ship the recording of {spec.name} with --ship-to DIR",
              file=sys.stderr)
        return 2
    results = _advance(spec, work, args)
    if isinstance(results, int):
        return results
    for stage, result in results.items():
        print(f"{stage} finished: {'solved' if result.solved else 'not solved'} after {result.llm_calls} call(s)")
    status = _record_and_verify(spec, work, args)
    if status == 0 and args.ship:
        _ship(spec.name, work, args.deck, args.rules or "spec", args.seed)
    if status == 0 and args.ship_to:
        _ship_to(spec, work, Path(args.ship_to) / ("closed" if args.deck == "closed" else ""), args.strategy)
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    parser.add_argument("--view", choices=games.VIEWS_OF_MODULES, default=None,
                        help="how the observations of your own game module are read (default: json when every "
                             "sampled observation is a JSON object, else text)")
    parser.add_argument("--work", required=True, help="the session's folder (resumed)")
    parser.add_argument("--answered-by", required=True, help="the answering model, as precisely as known")
    parser.add_argument("--deck", choices=("open", "closed"), default="open",
                        help="open (default: what cwm run asks) or closed (the joint synthesis of a hidden-information game)")
    parser.add_argument("--relay-by", choices=RELAY_BY, default="agent",
                        help="who carries each prompt to the answering model and its reply back: agent (a language-"
                             "model agent, the default) or person; the provenance's relay says it, and whether every "
                             "reply's prompt hash was checked")
    parser.add_argument("--rules", default=None, metavar="spec|prose|FILE",
                        help="the rules in the prompts: spec (default), prose (the rulebook tier) or a rules file "
                             "(for a module game, default the .md file beside it)")
    parser.add_argument("--strategy", choices=STRATEGIES, default=SynthesisSettings().strategy,
                        help=f"refinement strategy of every stage (default {SynthesisSettings().strategy}, the "
                             "library's); recorded in the provenance, and a --work folder of another strategy "
                             "refuses to resume")
    parser.add_argument("--budget", type=int, default=20, help="most LLM calls per stage (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and the search (default 0; --ship puts another seed's session under seeds/)")
    parser.add_argument("--ship", action="store_true",
                        help="once verified, copy the recording and its provenance into cwm/data/recordings/real/")
    parser.add_argument("--ship-to", default=None, metavar="DIR",
                        help="once verified, copy the recording and its provenance to DIR/<game>.<strategy>.jsonl "
                             "and .provenance.json (DIR/closed/ for the closed deck; any game and rules file: a "
                             "held-out game's sessions)")
    return parser


def _advance(game: games.GameSpec, work: Path, args: argparse.Namespace) -> dict[str, SynthesisResult] | int:
    """Reads the answers written so far and runs the session until a request has no reply (then writes the
    waiting prompts and gives EXIT_WAITING, unless an answer to a request first made on this call is already
    there: then it is read and the session goes on) or every stage has finished (its results)."""
    batch = work / "batch"
    asked: set[str] = set()  # requests already exported on this call
    while True:
        if (work / "answers").is_dir():
            answered, _ = import_answers(batch, work / "answers", model=args.answered_by)
            print(f"{answered} answer(s) read from {work / 'answers'}")
        try:
            return _session(game, BatchFileClient(batch, model=args.answered_by), work / "run", args)
        except ResumeError as e:  # --work holds a session of other settings (another game, seed or answerer)
            print(f"error: {e}", file=sys.stderr)
            return 2
        except PendingBatch:
            written = export_pending(batch, work / "prompts")
            new = [p for p in written if p.name not in asked]
            asked.update(p.name for p in written)
            if not _answered_already(new, work / "answers"):
                print(f"{len(written)} prompt(s) wait in {work / 'prompts'}; write each reply to "
                      f"{work / 'answers'}/<key>.md and run again")
                return EXIT_WAITING


def _answered_already(prompts: list[Path], answers: Path) -> bool:
    return any((answers / p.name).is_file() for p in prompts)


def _session(game: games.GameSpec, llm: Client, run_dir: Path, args: argparse.Namespace) -> dict[str, SynthesisResult]:
    """What ``cwm run GAME`` asks of an LLM: the world model, then for hidden information the open-deck
    inference function for the world model found (cwm's defaults, no held-out games: the requests do not
    depend on them, so the recording replays in ``cwm synthesize`` and ``cwm run`` with any test set); for the
    closed deck, the joint synthesis alone (``cwm synthesize GAME --target joint``)."""
    if args.deck == "closed":
        return {"joint": synthesize_inference(game, llm, SynthesisSettings.of("inference", deck="closed", strategy=args.strategy, budget=args.budget, seed=args.seed, num_test=0), run_dir=run_dir / "joint", world_model=None)}
    world_model = synthesize_world_model(game, llm, SynthesisSettings.of("world_model", strategy=args.strategy, budget=args.budget, seed=args.seed, num_test=0), run_dir=run_dir / "synthesis")
    results = {"world model": world_model}
    if not game.perfect_information and world_model.best_source:
        results["inference"] = synthesize_inference(game, llm, SynthesisSettings.of("inference", strategy=args.strategy, budget=args.budget, seed=args.seed, num_test=0), run_dir=run_dir / "inference", world_model=world_model.best_source)
    return results


def _record_and_verify(spec: games.GameSpec, work: Path, args: argparse.Namespace) -> int:
    recording = work / "recording.jsonl"
    recording.unlink(missing_ok=True)
    for folder in ("recorded", "replayed"):
        _clear(work / folder)
    answering = BatchFileClient(work / "batch", model=args.answered_by)
    first = _session(spec, RecordingClient(answering, recording), work / "recorded", args)
    again = _session(spec, make_client(f"replay:{recording}"), work / "replayed", args)
    for stage in ("synthesis", "inference", "joint"):
        if not (work / "recorded" / stage).exists():
            continue
        same = [(work / d / stage / "best_program.py").read_bytes() for d in ("recorded", "replayed")]
        if same[0] != same[1] or [r.llm_calls for r in first.values()] != [r.llm_calls for r in again.values()]:
            print(f"error: the recording does not reproduce the session's {stage}", file=sys.stderr)
            return 1
    calls = sum(r.llm_calls for r in first.values())
    replies = answering.provenance(answered_by=args.answered_by)
    provenance = {"game": recorded_game(spec.name), "deck": args.deck, "rules": next(iter(first.values())).rules, "answered_by": args.answered_by, "relay": relay_by(args.relay_by, replies.relay),
                  "strategy": args.strategy, "budget": args.budget,
                  "date": replies.date, "replies": replies.replies, "prompts_hashed": replies.prompts_hashed,
                  "llm_calls": calls,
                  "stages": {stage: {"llm_calls": r.llm_calls, "solved": r.solved} for stage, r in first.items()},
                  "solved": all(r.solved for r in first.values()), "seed": args.seed,
                  "prompt_hashes": {k: v for r in first.values() for k, v in r.prompt_hashes.items()}}
    (work / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    print(f"recorded and verified: {recording} ({counted(calls, 'call')}, replays to the same best program); "
          f"provenance: {work / 'provenance.json'}")
    return 0


def recorded_game(name: str, root: Path = REPOSITORY) -> str:
    """The game as the provenance records it: a module game inside the repository ``root`` by its path from
    there (``experiments/heldout/cairn.py:cairn``, the same on every checkout), any other name as given (a
    module elsewhere keeps its absolute path)."""
    if ".py:" not in name:
        return name
    path_text, short_name = name.rsplit(":", 1)
    path = Path(path_text)
    if not path.is_absolute():
        return name
    path, root = Path(os.path.normpath(path)), Path(os.path.normpath(root))  # "/repo/../x.py" is not inside
    if not path.is_relative_to(root):
        return name
    return f"{path.relative_to(root).as_posix()}:{short_name}"


def _ship(game: str, work: Path, deck: str, rules: str, seed: int = 0, real: Path | None = None) -> None:
    """Copies the verified session into ``real`` (default cwm's ``data/recordings/real/``): under ``prose/``
    for the rulebook tier, ``closed/`` for the closed deck, and ``seeds/GAME.seed<S>.jsonl`` for a seed
    other than 0 (``cwm.pipeline.recordings.recording_name``), its provenance beside it."""
    shipped = real or Path(__file__).resolve().parent.parent / "cwm" / "data" / "recordings" / "real"
    if rules == "prose":  # a rulebook-tier session answers other prompts: kept apart from the spec tier's
        shipped = shipped / "prose"
    if deck == "closed":
        shipped = shipped / "closed"
    target = shipped / recording_name(game, seed)  # seed 0 where it always was; another under seeds/
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(work / "recording.jsonl", target)
    shutil.copyfile(work / "provenance.json", target.with_name(target.stem + ".provenance.json"))
    replays = (f"cwm run {game} replays it offline" if deck == "open" and seed == 0 else
               f"the experiment scripts replay it for seed {seed}" if deck == "open" else
               f"the closed-deck inference table replays it for seed {seed}")
    print(f"shipped: {target} ({replays})")


def _ship_to(spec: games.GameSpec, work: Path, folder: Path, strategy: str) -> None:
    """Copies the verified session to ``folder/<game>.<strategy>.jsonl`` and ``.provenance.json`` (a module
    game by its short name)."""
    name = spec.name.rsplit(":", 1)[-1] if spec.module.endswith(".py") else spec.name
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in ("jsonl", "provenance.json"):
        source = work / ("recording.jsonl" if suffix == "jsonl" else "provenance.json")
        shutil.copyfile(source, folder / f"{name}.{strategy}.{suffix}")
    print(f"shipped: {folder / f'{name}.{strategy}.jsonl'}")


def _clear(folder: Path) -> None:
    if folder.exists():
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()


if __name__ == "__main__":
    sys.exit(main())
