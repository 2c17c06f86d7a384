"""The HTML transcript viewer, loaded in headless Chromium: the page's DOM after scripts ran."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from cwm.decrypto import Attempt, Episode, Turn, render_html, write_html

HOSTILE = '<img src=x onerror="document.title=\'owned\'">'
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def episodes() -> list[Episode]:
    turns = (Turn(1, (1, 2, 3), ("mane", "keys", "nail"), (1, 2, 3), (3, 2, 1)),
             Turn(2, (4, 1, 2), ("orchard", HOSTILE, "melody"), (4, 1, 2), (4, 1, 2)),
             Turn(3, (2, 4, 3), ("chord", "cider", "anvil"), (2, 3, 4), (2, 4, 3)))
    players = {"alice": "embed", "bob": "llm:gemini", "eve": "human"}
    first = Episode("run/s0/e0", 0, 0, players, ("lion", "piano", "hammer", "apple"), turns, "intercepted",
                    (Attempt("bob", 3, "guess", 3, "", "default", "no usable answer", [1, 2, 3]),))
    second = Episode("run/s0/e1", 1, 1, players, ("cat", "drum", "saw", "pear"), turns[:1], "survived")
    return [first, second]


class Dom(HTMLParser):
    """Counts elements by class and keeps the text and the title."""

    def __init__(self) -> None:
        super().__init__()
        self.classes: dict[str, int] = {}
        self.tags: dict[str, int] = {}
        self.text: list[str] = []
        self._in_title = False
        self.title = ""

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self._in_title = tag == "title"
        for c in (dict(attrs).get("class") or "").split():
            self.classes[c] = self.classes.get(c, 0) + 1

    def handle_data(self, data):
        self.text.append(data)
        if self._in_title:
            self.title += data

    def handle_endtag(self, tag):
        self._in_title = False


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/system-packages.sh installs it)")
    return found


def test_viewer_in_headless_chromium(tmp_path):
    page = write_html(tmp_path / "view.html", episodes(), title="Decrypto test run")
    dumped = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                             page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = Dom()
    dom.feed(dumped.stdout)
    assert dom.classes.get("episode") == 2 and dom.classes.get("turn") == 4
    assert dom.classes.get("hints") == 4 and dom.classes.get("reveal") == 4
    assert dom.title == "Decrypto test run"  # the hostile hint's handler never ran
    assert "img" not in dom.tags and HOSTILE in "".join(dom.text)  # shown as text, not as markup
    text = " ".join("".join(dom.text).split())
    assert "The code was 2-4-3: interception and miscommunication" in text
    assert "End: intercepted after 3 turns (default moves: bob 1)" in text
    shot = tmp_path / "view.png"
    subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}",
                    "--window-size=1000,1400", page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.read_bytes()[:4] == b"\x89PNG"


def test_empty_viewer_says_so():
    assert "No episodes." in render_html([])
