"""A loaded bundle's rich display (Bundle._repr_html_): its accuracy with the quantity named, its
provenance and code, and every manifest field an author could forge shown as text, never as markup."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from cwm import bundle
from cwm.bundle.files import provenance_hash

HOSTILE = "<script>document.title='owned'</script>"


class Tags(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_a_bundle_shows_its_accuracy_named_provenance_and_code(copy_of, tmp_path):
    path = copy_of(tmp_path / "b", provenance={"llm": "a fixture", "answered_by": "nobody", "seed": 3,
                                               "train_accuracy": 0.875, "test_accuracy": 1.0, "llm_calls": 2})
    b = bundle.load_bundle(path)
    page = b._repr_html_()
    text = "".join(Tags(page).text)
    assert "bundle for tic_tac_toe (ground truth tic_tac_toe)" in text
    assert re.search(r"<td>transition accuracy \(world model\)</td><td>at synthesis</td><td>0\.875</td>"
                     r"<td>1\.000</td>", page)
    assert b.check_report.summary().splitlines()[0] in text
    for name, value in (("llm", "a fixture"), ("answered_by", "nobody"), ("seed", "3"), ("llm_calls", "2"),
                        ("provenance hash", "matches its hash")):
        assert f'<th style="text-align:left">{name}</th><td>{value}</td>' in page
    code = b.sources["model.py"]
    assert re.search(rf"<details><summary>model\.py \({len(code.splitlines())} lines\)</summary><pre>", page)
    assert code.splitlines()[0] in text and Tags(page).tags.count("details") == len(b.sources)


def test_forged_manifest_fields_render_as_text(copy_of, tmp_path):
    path = copy_of(tmp_path / "b", provenance={"llm": "x", "seed": 0})
    manifest = json.loads((path / "manifest.json").read_text())
    forged = {**manifest["provenance"], "llm": HOSTILE, "strategy": HOSTILE, "train_accuracy": HOSTILE}
    manifest |= {"provenance": forged, "provenance_sha256": provenance_hash(forged), "created_at": HOSTILE,
                 "cwm_version": HOSTILE}
    (path / "manifest.json").write_text(json.dumps(manifest))
    page = bundle.load_bundle(path)._repr_html_()
    tags = Tags(page)
    assert "script" not in tags.tags
    text = "".join(tags.text)
    assert text.count(HOSTILE) == 5  # llm, strategy, the accuracy's cell, created_at, cwm_version
