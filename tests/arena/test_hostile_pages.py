"""`cwm view` on a tournament folder whose every text field is hostile (markup, `</script>`, NaN and infinities,
line separators, control characters), opened in headless Chromium: no script of the folder runs, and every
step of every match can be shown."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cwm import cli
from cwm.agents import Settings
from cwm.arena import replay as arena_replay
from cwm.arena import tournament
from cwm.arena import transcript as arena_transcript
from cwm.arena import view as arena_view
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=5, rollouts=1))
HOSTILE = "<img src=x onerror=\"document.title='owned';document.body.dataset.owned='1'\">"
CLOSE = "</script><script>document.title='owned'</script>"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--virtual-time-budget=3000"]

# Steps through every match and every step with the page's own `show`, and writes what it saw into the page.
HARNESS = """<script>
const seen = {errors: [], checked: 0, boards: [], notes: '', title: ''};
try {
  matches.forEach((t, m) => {
    const box = document.getElementById('match-' + m), boards = [];
    for (let s = 0; s <= t.steps.length; s++) {
      show(m, s);
      seen.checked++;
      const board = box.querySelector('.board').textContent;
      if (board !== (s ? t.steps[s - 1].state : t.initial)) seen.errors.push(m + ':' + s + ' board');
      if (!box.querySelector('.where').textContent.startsWith('step ' + s + ' of ' + t.steps.length))
        seen.errors.push(m + ':' + s + ' where');
      if (m === 0 && s === 1) seen.notes = box.querySelector('.notes').textContent;
      boards.push(board);
    }
    seen.boards.push(boards);
  });
} catch (e) { seen.errors.push(String(e)); }
seen.title = document.title;
seen.imgs = document.querySelectorAll('img').length;
const out = document.createElement('pre'); out.id = 'harness'; out.textContent = JSON.stringify(seen);
document.body.appendChild(out);
</script>"""


class Dom(HTMLParser):
    """The title, the tags seen, attributes of body, and the text of ``<pre id="harness">``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = {}
        self.title = self.harness = ""
        self.body: dict[str, str | None] = {}
        self._in: str = ""

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.body = dict(attrs) if tag == "body" else self.body
        self._in = "harness" if dict(attrs).get("id") == "harness" else tag

    def handle_data(self, data):
        if self._in == "title":
            self.title += data
        elif self._in == "harness":
            self.harness += data

    def handle_endtag(self, tag):
        self._in = ""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/system-packages.sh installs it)")
    return found


def _dom(url: str, profile: Path) -> Dom:
    dumped = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                            capture_output=True, text=True, timeout=180)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = Dom()
    dom.feed(dumped.stdout)
    return dom


def _poison(folder: Path) -> None:
    """Every text a page shows, made hostile; numbers made NaN and infinite where a number may be."""
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"game": HOSTILE + CLOSE}))
    labels = json.loads((folder / "labels.json").read_text())
    (folder / "labels.json").write_text(json.dumps({fp: HOSTILE if label == "random" else label + "\u2028\x1b[2J"
                                                    for fp, label in labels.items()}))
    rows = [json.loads(line) for line in (folder / "matches.jsonl").read_text().splitlines()]
    (folder / "matches.jsonl").write_text("".join(json.dumps(r | {"duration_s": math.nan, "reason": HOSTILE}) + "\n"
                                                  for r in rows))
    for row in rows:
        path = arena_transcript.path_of(folder, row["key"])
        t = json.loads(path.read_text())
        t |= {"key": HOSTILE + CLOSE, "initial": "start\u2028\x1b[2J\x00" + CLOSE,
              "forfeit": {"seat": None, "kind": HOSTILE, "reason": CLOSE}}
        t["steps"][0] |= {"text": HOSTILE, "seconds": math.nan, "chance_p": math.inf,
                          "observations": [HOSTILE, "\u202e\x07"]}
        t["steps"][1] |= {"state": t["steps"][1]["state"] + "\u2029" + CLOSE, "seconds": -math.inf}
        t["seats"][0]["log"] = [{"attempt": 0, "move": 1, "outcome": HOSTILE, "parsed": math.nan, "usage": HOSTILE,
                                 "reply": HOSTILE + "\u2028" + CLOSE}]
        t["seats"][1]["log"] = [{HOSTILE: math.inf, "sims": math.nan}]
        path.write_text(json.dumps(t))  # NaN and Infinity written bare, as Python's json writes them


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / "t"
    tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=folder,
               executor="inline", progress=False)
    _poison(folder)
    return folder


def test_the_page_embeds_json_that_parses_and_nothing_that_closes_its_block(hostile, tmp_path, capsys):
    assert cli.main(["view", str(hostile), "--out", str(tmp_path / "view.html")]) == 0
    page = (tmp_path / "view.html").read_text()
    data = page.split('<script type="application/json" id="matches">')[1].split("</script>")[0]
    assert json.loads(data, parse_constant=lambda c: pytest.fail(f"bare {c} in the page's JSON"))
    assert "<img" not in page and "\u2028" not in page and "\u2029" not in page and "\x1b" not in page
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the page's own two blocks only


def test_no_hostile_script_runs_and_every_step_of_every_match_can_be_shown(hostile, tmp_path):
    page = arena_view.write(hostile, tmp_path / "view.html")
    linked = _dom(f"{page.as_uri()}#m=1&s=2", tmp_path / "p1")  # a link to one step, as people share them
    assert linked.title == HOSTILE + CLOSE + ": arena, 2 matches"  # as text: its handlers never ran
    assert "data-owned" not in linked.body and "img" not in linked.tags
    stepped = tmp_path / "stepped.html"
    stepped.write_text(page.read_text().replace("</body>", HARNESS + "</body>"))
    dom = _dom(stepped.as_uri(), tmp_path / "p2")
    assert dom.harness, "the harness did not run: the page's script failed before it"
    seen = json.loads(dom.harness)
    results = arena_replay.results_of(hostile)
    expected = [[t["initial"], *(s["state"] for s in t["steps"])] for t in (arena_replay.load(hostile, r)
                                                                           for r in results)]
    assert seen["errors"] == [] and seen["checked"] == sum(len(b) for b in expected) and seen["boards"] == expected
    assert "LLM attempt 0: " + HOSTILE in seen["notes"] and "\\u2028</script>" in seen["notes"]  # shown as text
    assert seen["imgs"] == 0 and seen["title"] == linked.title and "data-owned" not in dom.body
    assert "img" not in dom.tags
