"""A bundle's provenance: who answered flows into its manifest from the synthesis run, and the manifest's
``provenance_sha256`` covers it, so an edit that leaves the hash alone fails the bundle's check; one that
recomputes or deletes the hash does not, and is shown as such."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cwm import bundle
from cwm.bundle.files import SEAL_MATCHES, SEAL_MISMATCH, SEAL_MISSING, provenance_hash, provenance_seal
from cwm.bundle.update import update_bundle
from cwm.cli import EXIT_WAITING, main
from cwm.commands.bundle import describe
from cwm.llm import ScriptedClient, answer_pending

REPLY = Path(__file__).resolve().parents[1] / "data" / "synthesis" / "tic_tac_toe" / "03_refine_correct.md"


def _manifest(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text())


def test_who_answered_flows_from_the_batch_replies_into_the_run_and_the_bundle(tmp_path, capsys):
    batch, run = tmp_path / "batch", tmp_path / "run"
    argv = ["synthesize", "tic_tac_toe", "--llm", f"batch:{batch}", "--num-test", "0", "--budget", "2",
            "--out", str(run), "--quiet"]
    assert main(argv) == EXIT_WAITING  # the request waits in the batch directory
    answered = answer_pending(batch, ScriptedClient([REPLY.read_text(encoding="utf-8")], model="test-answerer"))
    assert answered == 1
    assert main(argv) == 0, capsys.readouterr().err
    recorded = json.loads((run / "provenance.json").read_text())
    assert {k: recorded[k] for k in ("answered_by", "relay", "replies", "prompts_hashed")} == \
        {"answered_by": "test-answerer", "relay": "relay-hashed", "replies": 1, "prompts_hashed": 1}
    assert json.loads((run / "result.json").read_text())["model"] == "batch"  # the request key's model, not who answered
    path = bundle.export_run(run, tmp_path / "b")
    manifest = _manifest(path)
    assert manifest["provenance"]["answered_by"] == "test-answerer"
    assert manifest["provenance"]["relay"] == "relay-hashed"
    assert manifest["provenance_sha256"] == provenance_hash(manifest["provenance"])
    assert "answered_by: test-answerer" in describe(bundle.load_bundle(path))


def test_an_edited_provenance_fails_the_bundle_check_in_one_line(exported, set_manifest):
    provenance = _manifest(exported)["provenance"]
    set_manifest(exported, provenance={**provenance, "llm": "gemini-2.5-pro"})  # key order and layout kept apart
    with pytest.raises(bundle.BundleError) as info:
        bundle.load_bundle(exported)
    message = str(info.value)
    assert "\n" not in message and "manifest.json" in message and "provenance_sha256" in message


def test_the_hash_ignores_layout_but_not_content(exported, set_manifest):
    provenance = _manifest(exported)["provenance"]
    reordered = dict(reversed(list(provenance.items())))
    set_manifest(exported, provenance=reordered)  # written compact, keys reversed: the same provenance
    assert bundle.load_bundle(exported).manifest["provenance"] == provenance
    set_manifest(exported, provenance={**provenance, "seed": 1})
    with pytest.raises(bundle.BundleError, match="does not match its hash"):
        bundle.load_bundle(exported)


def test_a_bundle_written_before_provenance_was_hashed_loads_and_says_so(exported):
    manifest = _manifest(exported)
    del manifest["provenance_sha256"]
    (exported / "manifest.json").write_text(json.dumps(manifest))
    loaded = bundle.load_bundle(exported)
    assert "provenance: not covered by a hash" in describe(loaded)
    assert provenance_seal(loaded.manifest) == SEAL_MISSING


def test_the_hash_catches_naive_edits_not_a_forger_who_recomputes_it(exported, set_manifest):
    """What the seal can say: an exported bundle's provenance matches; an edit that leaves the hash alone is a
    mismatch; an edit with the hash recomputed loads and matches (the hash sits in the same manifest), which is
    why docs/bundles.md says it detects edits, not forgery."""
    provenance = _manifest(exported)["provenance"]
    assert provenance_seal(bundle.load_bundle(exported).manifest) == SEAL_MATCHES
    claimed = {**provenance, "llm": "gemini-2.5-pro"}
    set_manifest(exported, provenance=claimed)
    assert provenance_seal(_manifest(exported)) == SEAL_MISMATCH
    set_manifest(exported, provenance_sha256=provenance_hash(claimed))
    assert bundle.load_bundle(exported).manifest["provenance"]["llm"] == "gemini-2.5-pro"
    assert provenance_seal(_manifest(exported)) == SEAL_MATCHES


@pytest.mark.parametrize("changes", [{"provenance_sha256": "0" * 63}, {"provenance_sha256": ["a list"]},
                                     {"provenance": ["not", "an", "object"]}],
                         ids=["short-digest", "digest-not-a-string", "provenance-not-an-object"])
def test_the_seal_of_a_malformed_manifest_is_a_mismatch_never_an_error(exported, set_manifest, changes):
    set_manifest(exported, **changes)
    assert provenance_seal(_manifest(exported)) == SEAL_MISMATCH


@pytest.mark.parametrize("field, value, why", [
    ("answered_by", "claude\x1b]0;owned\x07", "control character"),
    ("answered_by", "y" * 5000, "1 to 120 characters"),
    ("relay", "copied carefully, trust me", "must be one of"),
    ("date", "the day before yesterday", "YYYY-MM-DD"),
    ("provenance_sha256", "not a digest", "not a SHA-256 hex digest"),
], ids=["escape-sequence", "long-name", "prose-relay", "word-date", "bad-digest"])
def test_hostile_provenance_fields_fail_the_bundle_check_in_one_line(exported, set_manifest, field, value, why):
    """A forger who rewrites the hash too still cannot slip a malformed field past the check."""
    provenance = _manifest(exported)["provenance"]
    if field == "provenance_sha256":
        set_manifest(exported, provenance_sha256=value)
    else:
        forged = {**provenance, field: value}
        set_manifest(exported, provenance=forged, provenance_sha256=provenance_hash(forged))
    with pytest.raises(bundle.BundleError) as info:
        bundle.load_bundle(exported)
    message = str(info.value)
    assert why in message and "\n" not in message and "manifest.json" in message and len(message) < 400


def test_an_update_keeps_the_provenance_hash_current(exported):
    update_bundle(exported, {}, provenance_key="note", provenance={"by": "a test"})
    manifest = _manifest(exported)
    assert manifest["provenance"]["note"] == {"by": "a test"}
    assert manifest["provenance_sha256"] == hashlib.sha256(
        json.dumps(manifest["provenance"], sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    bundle.load_bundle(exported)
