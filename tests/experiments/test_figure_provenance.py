"""experiments/figure_report.py shows each game's bundle provenance with what its hash says of it, and the
figure's markdown names every bundle whose provenance no matching hash covers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cwm.bundle import BundleError
from cwm.bundle.files import SEAL_MATCHES, SEAL_MISMATCH, SEAL_MISSING, provenance_hash

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed: the checkout's (cwm stays the installed one)
    sys.path.append(str(ROOT))
from experiments.figure_report import provenance, provenance_notes  # noqa: E402

PROVENANCE = {"answered_by": "claude", "relay": "agent-relay-hashed", "date": "2025-01-01", "seed": 0}


def _bundle(path: Path, **fields: object) -> Path:
    path.mkdir()
    manifest = {"created_at": "2025-01-01T00:00:00Z", "export_check": {"passed": True}, "provenance": PROVENANCE,
                "provenance_sha256": provenance_hash(PROVENANCE), **fields}
    (path / "manifest.json").write_text(json.dumps({k: v for k, v in manifest.items() if v is not None}))
    return path


@pytest.mark.parametrize("fields, seal", [
    ({}, SEAL_MATCHES),
    ({"provenance_sha256": None}, SEAL_MISSING),
    ({"provenance": {**PROVENANCE, "answered_by": "gemini-2.5-pro"}}, SEAL_MISMATCH),
], ids=["hashed", "hash-deleted", "edited-hash-kept"])
def test_each_bundle_row_says_what_its_hash_covers_and_the_markdown_flags_the_rest(tmp_path, fields, seal):
    row = provenance(_bundle(tmp_path / "b", **fields))
    assert row["provenance_hash"] == seal and row["relay"] == "agent-relay-hashed"
    notes = provenance_notes({"leduc_poker": row, "tic_tac_toe": provenance(_bundle(tmp_path / "ok"))})
    if seal == SEAL_MATCHES:
        assert notes == ""
    else:
        assert f"leduc_poker ({seal})" in notes and "tic_tac_toe" not in notes


def test_a_manifest_that_is_not_an_object_is_one_bundle_error(tmp_path):
    (tmp_path / "manifest.json").write_text("[1, 2]")
    with pytest.raises(BundleError, match="manifest.json") as caught:
        provenance(tmp_path)
    assert "\n" not in str(caught.value)
