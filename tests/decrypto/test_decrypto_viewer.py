"""The HTML transcript viewer, loaded in headless Chromium: the page's DOM after scripts ran."""

from __future__ import annotations

import json
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


CLOSE = "</script><script>document.title='owned'</script>"


def _hostile_line() -> dict:
    """An episode whose every free text is hostile markup (valid by type, so it loads)."""
    data = episodes()[0].to_json()
    data |= {"episode_id": HOSTILE + CLOSE, "players": {r: HOSTILE + "\u2028\x1b[2J" for r in ("alice", "bob", "eve")},
             "keywords": [HOSTILE, CLOSE, "a\x00", "\u202eb"]}
    data["turns"][0]["hints"] = [HOSTILE, CLOSE, "\u2029"]
    data["attempts"][0]["reply"] = HOSTILE
    return data


def test_a_hostile_episode_file_and_hostile_keys_show_as_text_in_chromium(tmp_path, capsys):
    from cwm import cli
    from cwm.decrypto import read_episodes

    file = tmp_path / "episodes.jsonl"
    file.write_text(json.dumps(_hostile_line()) + "\n")
    assert cli.main(["decrypto", "view", str(file), "--out", str(tmp_path / "cli.html")]) == 0
    assert "<img" not in (tmp_path / "cli.html").read_text() and "<script" not in (tmp_path / "cli.html").read_text()
    # built in memory, an episode is not checked by type: role keys and codes are escaped all the same
    keyed = Episode("mem", 0, 0, {HOSTILE: "embed", "bob": CLOSE, "eve": "x"}, ("a", "b", "c", "d"),
                    (Turn(1, (HOSTILE, 2, 3), ("h", "i", "j"), (CLOSE,), ("<b>", 1, 2)),), "survived")
    page = write_html(tmp_path / "view.html", [*read_episodes(file), keyed], title="hostile")
    dumped = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                             "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
                            capture_output=True, text=True, timeout=180)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = Dom()
    dom.feed(dumped.stdout)
    assert dom.title == "hostile" and "img" not in dom.tags and "script" not in dom.tags
    assert dom.tags["b"] == 2 * 4 + 4  # the page's own: each episode's four keywords, each turn's code
    assert dom.classes.get("episode") == 2 and dom.classes.get("turn") == 4 and dom.classes.get("reveal") == 4
    text = "".join(dom.text)
    assert text.count(HOSTILE) >= 6 and CLOSE in text and f"Bob guesses {CLOSE}" in text
    assert f"{HOSTILE}: embed" in text and f"The code was {HOSTILE}-2-3" in text and "Eve guesses <b>-1-2" in text
    assert "\x1b" not in dumped.stdout and "\u2028" not in dumped.stdout and "\\x1b[2J" in text  # made visible


@pytest.mark.parametrize("change,field", [
    (lambda d: d.update(players={"<img src=x>": "embed", "bob": "b", "eve": "e"}), "'players'"),
    (lambda d: d["turns"][0].update(bob_guess=["<img src=x>", 2, 3]), "'turns[0].bob_guess'"),
    (lambda d: d["turns"][1].update(code=[1, 2, 3, 4]), "'turns[1].code'"),
    (lambda d: d["turns"][0].update(number="1"), "'turns[0].number'"),
    (lambda d: d["turns"][2].update(hints=["a", 5, "c"]), "'turns[2].hints'"),
    (lambda d: d.update(end="<b>won</b>"), "'end'"),
    (lambda d: d.update(game_seed=True), "'game_seed'"),
    (lambda d: d["attempts"][0].update(reply=["x"]), "'attempts[0].reply'"),
    (lambda d: d["attempts"][0].update(extra=1), "'attempts[0].extra'"),
])
def test_an_episode_file_of_another_type_is_refused_naming_the_file_line_and_field(tmp_path, capsys, change, field):
    from cwm import cli

    data = episodes()[0].to_json()
    change(data)
    file = tmp_path / "episodes.jsonl"
    file.write_text(json.dumps(episodes()[1].to_json()) + "\n" + json.dumps(data) + "\n")
    assert cli.main(["decrypto", "view", str(file), "--out", str(tmp_path / "view.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"episodes.jsonl:2: not a Decrypto episode (field {field} must be" in err
    assert not (tmp_path / "view.html").exists()
