"""A loaded bundle's rich display (Bundle._repr_html_): its accuracy with the quantity named, its
provenance and code, and every manifest field an author could forge shown as text, never as markup."""

from __future__ import annotations

import json
import re

from cwm import bundle
from cwm.bundle.files import provenance_hash
from cwm.commands.bundle import describe

HOSTILE = "<script>document.title='owned'</script>"


def test_a_bundle_shows_its_accuracy_named_provenance_and_code(html_tags, copy_of, tmp_path):
    path = copy_of(tmp_path / "b", provenance={"llm": "a fixture", "answered_by": "nobody", "seed": 3,
                                               "train_accuracy": 0.875, "test_accuracy": 1.0, "llm_calls": 2})
    b = bundle.load_bundle(path)
    page = b._repr_html_()
    text = "".join(html_tags(page).text)
    assert "bundle for tic_tac_toe (ground truth tic_tac_toe)" in text
    assert re.search(r"<td>transition accuracy \(world model\)</td><td>at synthesis</td><td>0\.875</td>"
                     r"<td>1\.000</td>", page)
    assert b.check_report.summary().splitlines()[0] in text
    for name, value in (("llm", "a fixture"), ("answered_by", "nobody"), ("seed", "3"), ("llm_calls", "2"),
                        ("provenance hash", "matches its hash")):
        assert f'<th style="text-align:left">{name}</th><td>{value}</td>' in page
    code = b.sources["model.py"]
    assert re.search(rf"<details><summary>model\.py \({len(code.splitlines())} lines\)</summary><pre>", page)
    assert code.splitlines()[0] in text and html_tags(page).tags.count("details") == len(b.sources)


def test_forged_manifest_fields_render_as_text(html_tags, copy_of, tmp_path):
    path = copy_of(tmp_path / "b", provenance={"llm": "x", "seed": 0})
    manifest = json.loads((path / "manifest.json").read_text())
    forged = {**manifest["provenance"], "llm": HOSTILE, "strategy": HOSTILE, "train_accuracy": HOSTILE}
    manifest |= {"provenance": forged, "provenance_sha256": provenance_hash(forged), "created_at": HOSTILE,
                 "cwm_version": HOSTILE}
    (path / "manifest.json").write_text(json.dumps(manifest))
    page = bundle.load_bundle(path)._repr_html_()
    tags = html_tags(page)
    assert "script" not in tags.tags
    text = "".join(tags.text)
    assert text.count(HOSTILE) == 5  # llm, strategy, the accuracy's cell, created_at, cwm_version


# an inference function for any game (it checks nothing): what a user might drop into a bundle by hand
INFERENCE = "def resample_history(events, player_id, seed):\n    return []\n"


def test_an_inference_file_added_by_hand_does_not_make_a_joint_bundle(copy_of, tmp_path):
    path = copy_of(tmp_path / "b", extra_sources={"inference.py": INFERENCE},
                   provenance={"llm": "x", "train_accuracy": 0.5, "test_accuracy": 0.5})
    b = bundle.load_bundle(path)
    assert "<td>transition accuracy (world model)</td>" in b._repr_html_()
    assert "train_accuracy: 0.5 (transition accuracy of the world model)" in describe(b)  # cwm inspect agrees
    assert bundle.exported_target(b) == "world_model"


def test_the_recorded_target_decides_what_the_accuracies_measured(copy_of, tmp_path):
    path = copy_of(tmp_path / "b", extra_sources={"inference.py": INFERENCE},
                   provenance={"llm": "x", "target": "joint", "train_accuracy": 0.5, "test_accuracy": 0.5})
    b = bundle.load_bundle(path)
    assert "<td>inference accuracy (joint: world model and inference, closed deck)</td>" in b._repr_html_()
    assert "train_accuracy: 0.5 (inference accuracy of the joint module)" in describe(b)
    assert bundle.exported_target(b) == "joint"


def test_a_manifest_field_of_a_megabyte_is_shown_cut(copy_of, tmp_path):
    path = copy_of(tmp_path / "b", provenance={"llm": "x"})
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["created_at"] = "x" * 900_000
    (path / "manifest.json").write_text(json.dumps(manifest))
    page = bundle.load_bundle(path)._repr_html_()
    paragraph = re.search(r"<p>([^<]*)</p>", page)
    assert paragraph and len(paragraph.group(1)) <= 2000 and "more characters cut]" in paragraph.group(1)
