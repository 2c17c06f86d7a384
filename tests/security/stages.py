"""The pipeline stages one sleeper goes through, each run the way a user runs it, and what the suite asserts
around every one of them (``Pipeline.contained``): no marker file, no secret in the output or the run
directory, no connection to the listener, the stage's time bound, and (for tournaments) every match
recorded with a forfeit that names its kind and reason, and a resume that replays nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm import bundle, pipeline
from cwm.arena.types import FORFEIT_KINDS
from cwm.bundle import BundleError
from cwm.games import trajectories
from cwm.llm.base import Request
from cwm.types import CwmError

from .harness import (
    CLI_START_S,
    MOVE_LIMIT,
    SEARCH_ARGS,
    Cli,
    Listener,
    Ran,
    command_bound,
    cpu_seconds,
    leaked_files,
    leaked_into,
    markers,
    match_bound,
    read_matches,
)
from .programs import REFERENCE, Program

GAME = "tic_tac_toe"
TRAIN = trajectories.collect(GAME, 5, seed=0)  # what `cwm run` synthesizes from (seeds 0..4)
FIXTURE_MODEL = "hand-written-test-fixture"


class Pipeline:
    """One sleeper's run directory and the commands that take it through the pipeline.

    Args:
      program: the sleeper.
      root: an empty folder of its own (the run directory of every stage is below it).
      cli: how `cwm` is run.
      listener: the 127.0.0.1 listener no stage may reach.
      bundles: where the sleepers' bundles are kept for the session.
    """

    def __init__(self, program: Program, root: Path, cli: Cli, listener: Listener, bundles: Path):
        self.program, self.root, self.cli, self.listener = program, root, cli, listener
        self.bundles = bundles
        self.model = root / "model.py"
        self.model.write_text(program.source, encoding="utf-8")
        self.train = trajectories.save(root / "train.jsonl", TRAIN)
        self.before = markers()

    # -- what every stage must leave true -----------------------------------------------------------
    def contained(self, ran: Ran, bound_s: float) -> Ran:
        """Asserts the suite's promises about one command and returns it."""
        new = markers(self.root) - self.before
        assert not new, f"{ran.args[0]}: the sleeper wrote outside its sandbox: {sorted(new)}"
        assert not self.listener.peers, f"{ran.args[0]}: the listener on 127.0.0.1 was reached: {self.listener.peers}"
        assert not leaked_into(ran.out + ran.err), f"{ran.args[0]}: a secret reached the output: {ran.err[-2000:]}"
        assert not leaked_files(self.root), f"{ran.args[0]}: a secret reached a file: {leaked_files(self.root)}"
        assert ran.seconds <= bound_s, (f"{ran.args[0]} used {ran.seconds:.1f} s of CPU, over its bound of "
                                        f"{bound_s:.0f} s")
        assert "Traceback" not in ran.err, f"{ran.args[0]} crashed:\n{ran.err[-3000:]}"
        return ran

    def cwm(self, args: list[str], bound_s: float) -> Ran:
        """Runs `cwm ARGS` in the run directory; asserts ``contained`` (with ``bound_s``)."""
        # The bound is on CPU time; the wall clock only ends a command that hangs, far past any load's delay.
        return self.contained(self.cli(args, cwd=self.root, timeout_s=10 * bound_s + 300), bound_s)

    def call(self, name: str, fn: Callable[[], Any], bound_s: float = CLI_START_S) -> Any:
        """Calls a library function in this process; asserts ``contained``. Returns its value, or the
        ``CwmError`` it raised (every other exception propagates)."""
        start = cpu_seconds()
        try:
            value: Any = fn()
        except CwmError as e:
            value = e
        self.contained(Ran((name,), 0, "", str(value), cpu_seconds() - start), bound_s)
        return value

    # -- inputs -------------------------------------------------------------------------------------
    def bundle(self) -> Path:
        """The sleeper's bundle (made once per session, under ``bundles``): exported (``export_bundle``), or,
        for one the gate refuses, forged around it as an attacker would share it (the reference model's
        bundle with model.py replaced and re-hashed)."""
        path = self.bundles / self.program.name
        if (path / "manifest.json").is_file():
            return path
        if self.program.expect("export")[0] == "ok":
            return bundle.export_bundle(path, game=GAME, model_source=self.program.source, train=TRAIN,
                                        extra_sources=self.program.extra, provenance={"llm": FIXTURE_MODEL})
        return forge_bundle(path, {"model.py": self.program.source, **self.program.extra})

    def synthesis_run(self) -> Path:
        """A finished synthesis run directory whose best program is the sleeper (for `cwm export`)."""
        run = self.root / "synthesis"
        run.mkdir(exist_ok=True)
        trajectories.save(run / "train.jsonl", TRAIN)
        result = {"game": GAME, "best_source": self.program.source, "model": FIXTURE_MODEL, "solved": True,
                  "train_accuracy": 1.0, "llm_calls": 1}
        (run / "result.json").write_text(json.dumps(result), encoding="utf-8")
        return run

    def recording(self) -> Path:
        """A recorded session whose one reply is the sleeper: the first request of the recording shipped
        with cwm, answered by this hand-written test fixture instead (labelled so in its model id, its reply
        and its provenance)."""
        shipped = pipeline.recording_for(GAME)
        assert shipped is not None
        entry = json.loads(shipped.read_text(encoding="utf-8").splitlines()[0])
        entry["model"] = entry["response"]["model"] = FIXTURE_MODEL
        entry["key"] = Request.from_json(entry["request"]).key(FIXTURE_MODEL)
        entry["provenance"] = (f"HAND-WRITTEN TEST FIXTURE: the sleeper tests/data/sleepers/{self.program.name}.py "
                               f"in place of the recorded reply (tests/security/stages.py)")
        entry["response"]["texts"] = [f"{entry['provenance']}\n\n```python\n{self.program.source}\n```\n"]
        path = self.root / "recording.jsonl"
        path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
        return path

    # -- loading ------------------------------------------------------------------------------------
    def load_and_inspect(self, accept: Callable[[bundle.Bundle], bool], shown: str) -> None:
        """``load_bundle`` and `cwm inspect` of the sleeper's bundle, as its header's ``load`` line says: the
        loaded bundle ``accept``-able and `cwm inspect` showing ``shown``, or both refusing with its text."""
        path = self.bundle()
        outcome, text = self.program.expect("load")
        got = self.call("load_bundle", lambda: bundle.load_bundle(path))
        ran = self.cwm(["inspect", str(path)], CLI_START_S)
        if outcome == "ok":
            assert isinstance(got, bundle.Bundle) and accept(got), got
            assert ran.rc == 0 and shown in ran.out, ran
        else:
            assert isinstance(got, BundleError) and text in str(got), got
            one_line_error(ran, text)

    # -- tournaments --------------------------------------------------------------------------------
    def arena(self, executor: str) -> list[dict]:
        """`cwm arena` of the sleeper's bundle against a random agent, one match per seat order, on
        ``executor``, and its resume (``tournament``)."""
        out = self.root / "arena"
        args = ["arena", GAME, "--agents", f"random,sleeper=cwm:{self.bundle()}", "--matches", "1", *SEARCH_ARGS,
                "--executor", executor, "--out", str(out), "--no-progress"]
        return self.tournament(args, out, "sleeper", 2)

    def tournament(self, args: list[str], out: Path, seat_label: str, matches: int) -> list[dict]:
        """Runs a tournament command, then the same command again; asserts that both ended cleanly, that the
        sleeper's matches went as its header says, and that the resume replayed nothing."""
        first = self.cwm(args, command_bound(matches))
        assert first.rc == 0, f"the tournament died: {first.err[-3000:]}"
        rows = read_matches(out / "matches.jsonl")
        self.assert_matches(rows, seat_label, matches)
        text = (out / "matches.jsonl").read_bytes()
        again = self.cwm(args, CLI_START_S)
        assert again.rc == 0, f"the resume died: {again.err[-3000:]}"
        assert (out / "matches.jsonl").read_bytes() == text, "the resume replayed or rewrote matches"
        return rows

    def assert_matches(self, rows: list[dict], seat_label: str, matches: int) -> None:
        assert len(rows) == matches and len({r["key"] for r in rows}) == matches, rows
        kind, text = self.program.expect("arena")
        for row in rows:
            seat = row["seats"].index(seat_label)
            assert row["duration_s"] <= match_bound(row["moves"]), row
            if kind == "plays":
                assert row["forfeit_seat"] is None, row
                continue
            assert row["forfeit_kind"] in FORFEIT_KINDS and row["reason"], row
            assert (row["forfeit_seat"], row["forfeit_kind"]) == (seat, kind), row
            assert text in row["reason"], row["reason"]
            if "budget of" in text:  # the limit enforced is the one the command gave, not a default
                assert f"budget of {MOVE_LIMIT:g} s" in row["reason"], row["reason"]


def forge_bundle(path: Path, files: dict[str, str]) -> Path:
    """A bundle of the reference model (with a harmless value.py where ``files`` has one) whose code files are
    then replaced by ``files`` and listed with their new hashes (the stored check report still says
    235/235): what an attacker could hand a colleague."""
    placeholder = {"value.py": "def get_value(state, player_id):\n    return 0.0\n"}
    bundle.export_bundle(path, game=GAME, model_source=REFERENCE, train=TRAIN, provenance={"llm": FIXTURE_MODEL},
                         extra_sources={name: placeholder[name] for name in files if name != "model.py"})
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    for name, text in files.items():
        data = text.encode("utf-8")
        (path / name).write_bytes(data)
        manifest["files"][name] = hashlib.sha256(data).hexdigest()
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return path


def one_line_error(ran: Ran, text: str) -> None:
    """A command that refused its input: status 2, one line naming why (with ``text``), no traceback."""
    assert ran.rc == 2, (ran.rc, ran.out[-2000:], ran.err[-2000:])
    lines = [line for line in ran.err.splitlines() if line.startswith("cwm ")]
    assert len(lines) == 1 and text in lines[0], ran.err[-3000:]
