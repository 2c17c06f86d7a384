"""A bundle read as untrusted input: nothing unlisted, every code file checked in the sandbox, and malformed
input (forged with matching hashes) named in one line."""

from __future__ import annotations

import json
import shutil

import pytest

import cwm.bundle.load
import cwm.sandbox
from cwm import bundle
from cwm.cli import main
from cwm.games import trajectories

GOOD = {
    "inference.py": "def resample_history(events, player_id, seed):\n    return []\n",
    "value.py": "def get_value(state, player_id):\n    return 0.0\n",
    "encoder.py": "def encode(observation, player_id):\n    return [float(player_id)]\n",
}
FLAWS = {  # (how the file is spoiled, the verdict kind the sandbox gives)
    "gate": (lambda source: "import os\n" + source, "static: line 1: import of 'os' is not allowed"),
    "missing": (lambda source: "def unrelated():\n    return 1\n", "load: cwm_model: missing contract function"),
    "raises": (lambda source: source + "raise RuntimeError('at import')\n", "load: cwm_model: running the module"),
}
CASES = [(name, flaw) for name in GOOD for flaw in FLAWS]


@pytest.mark.parametrize("entry", ["notes.txt", "__pycache__/", ".hidden", "inference.py"])
def test_an_entry_the_manifest_does_not_list_is_refused(exported, entry):
    target = exported / entry.rstrip("/")
    if entry.endswith("/"):
        target.mkdir()
    else:
        target.write_text(GOOD["inference.py"])
    with pytest.raises(bundle.BundleError, match=rf"{entry.rstrip('/')} is in the bundle but not listed"):
        bundle.load_bundle(exported)


@pytest.mark.parametrize("name", ["../model.py", "sub\\model.py", ".."])
def test_a_listed_name_must_be_a_plain_file_name(exported, set_manifest, name):
    files = json.loads((exported / "manifest.json").read_text())["files"]
    set_manifest(exported, files={**files, name: files["model.py"]})
    with pytest.raises(bundle.BundleError, match=f"file name {name!r} is not a plain file name".replace("\\", "\\\\")):
        bundle.load_bundle(exported)


def test_a_listed_file_that_is_a_link_is_refused(exported, tmp_path):
    real = shutil.copyfile(exported / "trajectories.jsonl", tmp_path / "elsewhere.jsonl")
    (exported / "trajectories.jsonl").unlink()
    (exported / "trajectories.jsonl").symlink_to(real)  # same bytes, same hash: only the link gives it away
    with pytest.raises(bundle.BundleError, match="trajectories.jsonl is a symbolic link"):
        bundle.load_bundle(exported)


@pytest.mark.parametrize("name, flaw", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_every_code_file_is_checked_in_the_sandbox_at_load(exported, rehashed, name, flaw):
    spoil, verdict = FLAWS[flaw]
    rehashed(exported, name, spoil(GOOD[name]).encode())
    with pytest.raises(bundle.BundleError, match=f"{name} failed its sandbox check: {verdict}") as e:
        bundle.load_bundle(exported)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", list(GOOD))
def test_every_code_file_is_checked_in_the_sandbox_at_export(tmp_path, train, ttt_source, name):
    out = tmp_path / "b"
    with pytest.raises(bundle.BundleError, match=f"export: {name} failed its sandbox check: static"):
        bundle.export_bundle(out, game="tic_tac_toe", model_source=ttt_source, train=train,
                             extra_sources={**GOOD, name: "import socket\n" + GOOD[name]})
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a .partial directory


def test_all_code_files_export_and_load_checked_in_one_sandbox(tmp_path, train, ttt_source, monkeypatch):
    path = bundle.export_bundle(tmp_path / "b", game="tic_tac_toe", model_source=ttt_source, train=train,
                                extra_sources=GOOD)
    started = []

    class Counted(cwm.sandbox.Sandbox):
        def __init__(self, **kwargs):
            started.append(self)
            super().__init__(**kwargs)

    monkeypatch.setattr(cwm.bundle.load, "Sandbox", Counted)
    b = bundle.load_bundle(path, trusted=True)
    assert len(started) == 1
    assert set(b.sources) == {"model.py", *GOOD}
    assert b.module("encoder.py").encode({"board": []}, 1) == [1.0]


def _report(**fields: object) -> bytes:
    report = {"by_type": {"legal_actions": {"passed": 3, "total": 3}}, "transitions_passed": 3,
              "transitions_total": 3, "failures": [], "error": ""}
    return json.dumps({**report, **fields}).encode()


def _other_game() -> bytes:
    return "".join(json.dumps(trajectories.to_json(t)) + "\n"
                   for t in trajectories.collect("connect_four", 1, seed=0)).encode()


DEEP = b"[" * 100_000
MALFORMED = {  # damage(bundle_dir, set_manifest, rehashed), what the one-line error says
    "model-not-utf8": (lambda p, m, r: r(p, "model.py", b"\xff\xfe" + (p / "model.py").read_bytes()),
                       "model.py is not UTF-8 text (invalid start byte at byte 0)"),
    "value-not-utf8": (lambda p, m, r: r(p, "value.py", GOOD["value.py"].encode("utf-16")),
                       "value.py is not UTF-8 text"),
    "manifest-not-utf8": (lambda p, m, r: (p / "manifest.json").write_bytes(b'{"game": "\xe9"}'),
                          "manifest.json is not UTF-8 text"),
    "manifest-deep": (lambda p, m, r: (p / "manifest.json").write_bytes(DEEP), "manifest.json is not valid JSON"),
    "report-not-json": (lambda p, m, r: r(p, "check_report.json", b"{nope"), "check_report.json is not valid JSON"),
    "report-deep": (lambda p, m, r: r(p, "check_report.json", DEEP), "check_report.json is not valid JSON (nested"),
    "report-a-list": (lambda p, m, r: r(p, "check_report.json", b"[]"),
                      "check_report.json is not a JSON object (it holds a list)"),
    "report-by-type-str": (lambda p, m, r: r(p, "check_report.json", _report(by_type="all")),
                           "check_report.json: field 'by_type' must map"),
    "report-count-str": (lambda p, m, r: r(p, "check_report.json",
                                           _report(by_type={"legal_actions": {"passed": "3", "total": 3}})),
                         "check_report.json: field 'by_type' must map"),
    "report-count-bool": (lambda p, m, r: r(p, "check_report.json",
                                            _report(by_type={"legal_actions": {"passed": True, "total": 1}})),
                          "check_report.json: field 'by_type' must map"),
    "report-no-total": (lambda p, m, r: r(p, "check_report.json", _report(transitions_total=None)),
                        "check_report.json: field 'transitions_total' is missing or not an int"),
    "report-failures-dict": (lambda p, m, r: r(p, "check_report.json", _report(failures={})),
                             "check_report.json: field 'failures' must be a list"),
    "trajectories-garbage": (lambda p, m, r: r(p, "trajectories.jsonl", b"garbage\n"),
                             "trajectories.jsonl:1: not valid JSON"),
    "trajectories-deep": (lambda p, m, r: r(p, "trajectories.jsonl", DEEP + b"\n"),
                          "trajectories.jsonl: not valid JSON (a line is nested too deeply)"),
    "trajectories-other-game": (lambda p, m, r: r(p, "trajectories.jsonl", _other_game()),
                                "trajectories.jsonl: holds games ['connect_four'], not 'tic_tac_toe'"),
    "format-bool": (lambda p, m, r: m(p, bundle_format=True), "bundle format True is not supported"),
    "game-int": (lambda p, m, r: m(p, game=5), "field 'game' is missing or not a str"),
    "ground-truth-missing": (lambda p, m, r: m(p, ground_truth=None), "field 'ground_truth' is missing or not a str"),
    "cwm-version-missing": (lambda p, m, r: m(p, cwm_version=None), "field 'cwm_version' is missing or not a str"),
    "provenance-list": (lambda p, m, r: m(p, provenance=["llm"]), "field 'provenance' is missing or not a dict"),
    "export-check-list": (lambda p, m, r: m(p, export_check=[]), "field 'export_check' is missing or not a dict"),
    "hash-int": (lambda p, m, r: m(p, files={**json.loads((p / "manifest.json").read_text())["files"],
                                             "model.py": 7}), "the hash of model.py is not a SHA-256 hex digest"),
    "game-module-list": (lambda p, m, r: m(p, game_module=["game.py"]), "field 'game_module' must be"),
    "game-module-short-int": (lambda p, m, r: m(p, game_module={"file": "game.py", "short_name": 3}),
                              "field 'game_module' must be"),
    "game-module-extra-key": (lambda p, m, r: m(p, game_module={"file": "game.py", "short_name": "tic_tac_toe",
                                                                "import": "os"}), "field 'game_module' must be"),
    "game-module-other-game": (lambda p, m, r: m(p, game_module={"file": "game.py", "short_name": "tiny_nim"}),
                               "fields 'game', 'ground_truth' and 'game_module' name different games"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_input_is_one_line_naming_the_file(tmp_path, copy_of, set_manifest, rehashed, capsys, case):
    path = copy_of(tmp_path / "b", {"value.py": GOOD["value.py"]})
    damage, message = MALFORMED[case]
    damage(path, set_manifest, rehashed)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
