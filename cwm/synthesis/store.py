"""The run directory of a synthesis run: every prompt, reply, program and report, written as it happens.

Layout (``run_dir/``)::

    config.json              what was asked (game, strategy, seed, budget, model, prompt hashes, ...)
    train.jsonl, test.jsonl  the trajectories used
    calls/000003.prompt.md   a prompt, written before the call is sent
    sending/000003.json      a call being sent: written (and synced to disk) before the request goes out,
                             removed once its reply is journaled; one a stopped session left is a call
                             possibly paid (counted so in the next session's ledger, and sent again)
    calls/000003.json        the journal entry: request + response, written when the call returns
    nodes/000005/program.py  a candidate program, and report.json (its check report), node.json
    checks/<sha>.json        check reports cached by program hash (a resumed run does not re-check)
    tree.json                every node so far (rewritten after each node)
    sessions/<n>.json        each session's LLM ledger (for the cost over interrupted runs; it counts the
                             calls a stopped session left in flight as possibly paid)
    result.json, summary.md, accuracy.png    at the end

Every file is written atomically (temporary file + rename), so an interrupted run never leaves a
half-written file. The journal is keyed by the deterministic call index: a resumed run replays it
instead of calling the LLM again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cwm.files import TextFileError, atomic_write, changed_settings, read_text
from cwm.types import JSON, CheckReport, CwmError


class ResumeError(CwmError, ValueError):
    """A run directory that holds a different run (other settings, or a journal that does not match)."""


def write_json(path: Path, data: JSON) -> None:
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def read_json(path: Path) -> Any:
    """The JSON value in ``path``, a file of the run directory.

    Raises:
      ResumeError: the file is not UTF-8 JSON (names the file, line and column; it was changed by hand, or
        the disk lost it).
    """
    try:
        return json.loads(read_text(path, what="run file"))
    except TextFileError as e:
        raise ResumeError(str(e)) from e
    except json.JSONDecodeError as e:
        raise ResumeError(f"{path}: not JSON ({e.msg} at line {e.lineno}, column {e.colno}); delete the file to "
                          f"redo what it records") from e


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RunStore:
    """Reads and writes one run directory.

    Args:
      run_dir: the directory (created if needed).
      config: the settings that define the run; a directory holding another run's config is refused.
      check_key: fingerprint of what candidates are checked against (cached reports are keyed by it).

    Raises:
      ResumeError: ``run_dir`` holds a run with different settings.
    """

    def __init__(self, run_dir: str | Path, *, config: dict[str, JSON], check_key: str):
        self.root = Path(run_dir)
        self.check_key = check_key
        self.resumed = (self.root / "config.json").is_file()
        changed = changed_settings(self.root / "config.json", config, ignore={"budget"})  # a resume may add budget
        if changed:
            raise ResumeError(f"{self.root} holds another run: settings {changed} differ "
                              f"(use a new --out directory, or the same settings to resume)")
        write_json(self.root / "config.json", config)
        self.session = len(list((self.root / "sessions").glob("*.json"))) if self.resumed else 0

    # -- LLM calls ----------------------------------------------------------------------------------
    def _call_path(self, index: int, suffix: str) -> Path:
        return self.root / "calls" / f"{index:06d}{suffix}"

    def write_prompt(self, index: int, text: str) -> None:
        atomic_write(self._call_path(index, ".prompt.md"), text)

    def journaled(self, index: int, request_key: str) -> dict[str, Any] | None:
        """The journal entry of call ``index`` if it was completed, else ``None``.

        Raises:
          ResumeError: the entry was made for a different request (the run is not the same run).
        """
        path = self._call_path(index, ".json")
        if not path.is_file():
            return None
        entry = read_json(path)
        if not isinstance(entry, dict) or "request_key" not in entry or not isinstance(entry.get("response"), dict):
            raise ResumeError(f"{path}: not a journal entry (it needs \"request_key\" and \"response\"); delete "
                              f"the file to ask that call again")
        if entry["request_key"] != request_key:
            raise ResumeError(f"{path}: the journal's call {index} was a different request; this directory "
                              f"holds another run (or the prompts changed since)")
        return entry

    def journal(self, index: int, entry: dict[str, JSON]) -> None:
        write_json(self._call_path(index, ".json"), entry)

    def _sending_path(self, index: int) -> Path:
        return self.root / "sending" / f"{index:06d}.json"

    def sending(self, index: int, entry: dict[str, JSON]) -> None:
        """Marks call ``index`` as being sent, durably (synced to disk), before its request goes out."""
        atomic_write(self._sending_path(index), json.dumps(entry) + "\n", sync=True)

    def sent(self, index: int) -> None:
        """Call ``index`` ended (its reply is journaled, or it failed and the ledger counted the failure)."""
        self._sending_path(index).unlink(missing_ok=True)

    def stopped_calls(self) -> list[dict[str, Any]]:
        """The calls an earlier session sent and never journaled, oldest first: it stopped while they were in
        flight, so they may have been paid. Markers of calls that were journaled after all are removed.

        Raises:
          ResumeError: a marker file is damaged (names it).
        """
        stopped = []
        for path in sorted((self.root / "sending").glob("*.json")):
            entry = read_json(path)
            if not isinstance(entry, dict) or not isinstance(entry.get("index"), int):
                raise ResumeError(f"{path}: not a marker of a call being sent (it needs \"index\")")
            if self._call_path(entry["index"], ".json").is_file():
                path.unlink()
            else:
                stopped.append(entry)
        return stopped

    # -- candidates ---------------------------------------------------------------------------------
    def cached_report(self, source: str) -> CheckReport | None:
        path = self.root / "checks" / f"{sha(self.check_key + source)[:24]}.json"
        if not path.is_file():
            return None
        data = read_json(path)
        try:
            return CheckReport.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ResumeError(f"{path}: not a check report ({type(e).__name__}: {e}); delete the file to check "
                              f"that program again") from e

    def cache_report(self, source: str, report: CheckReport) -> None:
        write_json(self.root / "checks" / f"{sha(self.check_key + source)[:24]}.json", report.to_json())

    def write_node(self, node_json: dict[str, JSON], report: CheckReport, *, reply_note: str = "") -> None:
        folder = self.root / "nodes" / f"{node_json['id']:06d}"
        atomic_write(folder / "program.py", str(node_json["source"]))
        write_json(folder / "report.json", report.to_json())
        write_json(folder / "node.json", {**{k: v for k, v in node_json.items() if k != "source"},
                                          "note": reply_note})

    def write_tree(self, nodes: list[dict[str, JSON]]) -> None:
        write_json(self.root / "tree.json", {"nodes": nodes})

    # -- sessions and results -----------------------------------------------------------------------
    def write_ledger(self, snapshot: dict[str, JSON]) -> None:
        write_json(self.root / "sessions" / f"{self.session:03d}.json", snapshot)

    def total(self, key: str) -> float:
        """``key`` of every session's ledger, summed (``"cost_usd"``, ``"possibly_paid_calls"``, ...)."""
        return sum(float(read_json(path).get(key, 0.0)) for path in sorted((self.root / "sessions").glob("*.json")))

    def total_cost(self) -> float:
        """What every session's LLM calls cost, those possibly paid included."""
        return self.total("cost_usd")

    def write_text(self, name: str, text: str) -> None:
        atomic_write(self.root / name, text)

    def write_json(self, name: str, data: JSON) -> None:
        write_json(self.root / name, data)


__all__ = ["ResumeError", "RunStore", "atomic_write", "read_json", "sha", "write_json"]
