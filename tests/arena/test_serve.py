"""`cwm serve` in headless Chromium (Python playwright driving the system's /usr/bin/chromium): whole games of
tic-tac-toe and Leduc poker played through the page against a seeded agent and saved like `cwm play`'s, a
replay stepped with the arrow keys and drawn as SVG, a hostile results folder shown as text, the page at
desktop and phone width (screenshots; nothing wider than the viewport), and the server's refusals: paths
outside its routes, another Host, a POST without the page's header, a non-loopback address without a flag."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from cwm import cli
from cwm.agents import Settings
from cwm.arena import replay as arena_replay
from cwm.arena import serve as arena_serve
from cwm.arena import tournament
from cwm.arena import transcript as arena_transcript
from cwm.arena import view as arena_view
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=5, rollouts=1))
HOSTILE = "<img src=x onerror=\"document.title='owned';document.body.dataset.owned='1'\">"
CLOSE = "</script><script>document.title='owned'</script>"
WAIT_MS = 300_000  # a generous backstop for a shared, loaded machine: no verdict depends on it


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/system-packages.sh installs it)")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def _serve(settings: arena_serve.ServeSettings) -> Iterator[str]:
    server = arena_serve.make_server(settings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield arena_serve.url_of(server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def ttt_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serve") / "ttt"
    tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=folder,
               executor="inline", progress=False)
    return folder


def _page(browser, url: str, width: int = 1200):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("#matchlist tr[data-row], #leaderboard:has-text('no match yet')")
    return page, errors


def _play_through(page, game: str, agent: str, seat: int) -> tuple[list[str], str]:
    """Starts a game on the page and plays it to the end: an illegal move first, then each turn's first
    legal button. Returns the replies to the illegal move and the final status line."""
    page.fill("#pgame", game)
    page.fill("#pagent", agent)
    page.select_option("#pseat", str(seat))
    page.click("#pstart")
    page.wait_for_function("() => ['your move', 'game over', 'cannot'].some(w => "
                           "document.getElementById('pstatus').textContent.startsWith(w))")
    page.fill("#pmove", "no-such-move")
    page.press("#pmove", "Enter")
    page.wait_for_function("() => document.getElementById('preply').textContent.includes('not a legal move')")
    replies = [page.inner_text("#preply")]
    for _ in range(40):
        status = page.inner_text("#pstatus")
        if status.startswith("game over") or status.startswith("cannot"):
            break
        assert page.eval_on_selector_all("#pdrawn svg", "e => e.length") == 1, status  # the position, drawn
        prompts = page.get_attribute("#pstatus", "data-prompts")
        page.locator("#legal button").first.click()  # then waits for the next prompt or the end
        page.wait_for_function("(n) => { const s = document.getElementById('pstatus');"
                               " return s.textContent.startsWith('game over') || s.dataset.prompts !== n; }",
                               arg=prompts)
    return replies, page.inner_text("#pstatus")


@pytest.mark.parametrize(("game", "seat"), [("tic_tac_toe", 0), ("leduc_poker", 1)])
def test_a_whole_game_played_in_the_browser_is_saved_like_cwm_plays(browser, tmp_path, game, seat):
    out = tmp_path / "games"
    for url in _serve(arena_serve.ServeSettings(game=game, port=0, seed=3, play_out=out)):
        page, errors = _page(browser, url)
        replies, status = _play_through(page, game, "random", seat)
        assert "'no-such-move' is not a legal move here" in replies[0]
        assert status.startswith("game over: "), status
        results = arena_replay.results_of(out)
        assert len(results) == 1 and results[0].seats[seat] == "human" and results[0].seats[1 - seat] == "random"
        assert results[0].forfeit_seat is None and f"saved as {results[0].key}" in status
        transcript = arena_replay.load(out, results[0])
        mine, other = results[0].returns[seat], results[0].returns[1 - seat]
        assert status.startswith("game over: " + ("you won" if mine > other else "you lost" if mine < other
                                                  else "a draw"))
        assert transcript["seats"][1 - seat]["label"] == "random" and len(transcript["steps"]) >= 2
        # the finished game is listed, and its replay is drawn from the first step to the last
        page.wait_for_selector("#matchlist tr[data-row='0']").click()
        page.wait_for_selector("#viewer:not([hidden])")
        for _ in transcript["steps"]:
            page.keyboard.press("ArrowRight")
        assert page.inner_text("#where").startswith(f"step {len(transcript['steps'])} of {len(transcript['steps'])}")
        assert page.eval_on_selector_all("#vdrawn svg .card, #vdrawn svg [class^=piece]", "e => e.length") > 0
        if game == "leduc_poker":  # each seat's observation drawn too: its own card face up
            assert page.eval_on_selector_all("#vobs svg", "e => e.length") == 2
            assert "[Private:" in page.eval_on_selector("#vobs", "e => e.textContent")  # the text kept beside
        assert errors == []
        page.close()


def test_the_agent_moves_in_its_own_turn_and_the_page_says_so(browser, tmp_path):
    """With the agent in seat 0 the page opens on the agent's move, then the person's: the game waits for the
    person (no move is made for them) and states whose turn it is."""
    for url in _serve(arena_serve.ServeSettings(game="tic_tac_toe", port=0, play_out=tmp_path / "g")):
        page, _ = _page(browser, url)
        page.select_option("#pseat", "1")
        page.click("#pstart")
        page.wait_for_function("() => document.getElementById('pstatus').textContent.startsWith('your move (seat 1)')")
        drawn = page.eval_on_selector_all("#pdrawn svg [class^=piece]", "e => e.map(x => x.getAttribute('class'))")
        assert drawn == ["piece-x"]  # the agent's one move is on the board, nothing of the person's
        assert len(page.locator("#legal button").all()) == 8
        page.close()


def test_a_replay_steps_with_the_arrow_keys_and_the_filter_hides_other_matches(browser, ttt_folder):
    results = arena_replay.results_of(ttt_folder)
    for url in _serve(arena_serve.ServeSettings(path=ttt_folder, port=0)):
        page, errors = _page(browser, url)
        assert page.locator("#matchlist tr[data-row]").count() == len(results) == 4
        page.fill("#filter", "gt-mcts vs random")
        assert page.locator("#matchlist tr[data-row]").count() == 2
        page.fill("#filter", "")
        page.click("#matchlist tr[data-row='2']")
        page.wait_for_selector("#viewer:not([hidden])")
        steps = arena_replay.load(ttt_folder, results[2])["steps"]
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        assert page.inner_text("#where") == f"step 1 of {len(steps)}: seat 0 ({results[2].seats[0]}) plays " \
                                            f"{steps[0]['text']}"
        assert page.eval_on_selector("#vboard", "e => e.textContent") == steps[0]["state"]  # the text, kept
        marks = page.eval_on_selector_all("#vdrawn svg [class^=piece]", "e => e.length")
        assert marks == 1 and errors == []
        page.close()


def _poison(folder: Path) -> None:
    rows = [json.loads(line) for line in (folder / "matches.jsonl").read_text().splitlines()]
    (folder / "matches.jsonl").write_text("".join(json.dumps(r | {"reason": HOSTILE}) + "\n" for r in rows))
    labels = json.loads((folder / "labels.json").read_text())
    (folder / "labels.json").write_text(json.dumps({fp: HOSTILE if label == "random" else CLOSE
                                                    for fp, label in labels.items()}))
    for row in rows:
        path = arena_transcript.path_of(folder, row["key"])
        t = json.loads(path.read_text())
        t["steps"][0] |= {"text": HOSTILE, "state": CLOSE + HOSTILE}
        t["seats"][0]["log"] = [{"attempt": 0, "move": 1, "outcome": HOSTILE, "parsed": 1, "reply": CLOSE}]
        path.write_text(json.dumps(t))


def test_a_hostile_folder_is_shown_as_text_and_runs_no_script(browser, tmp_path):
    folder = tmp_path / "hostile"
    tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=folder,
               executor="inline", progress=False)
    _poison(folder)
    for url in _serve(arena_serve.ServeSettings(path=folder, port=0)):
        page, errors = _page(browser, url)
        assert HOSTILE in page.inner_text("#leaderboard") and HOSTILE in page.inner_text("#matchlist")
        page.click("#matchlist tr[data-row='0']")
        page.wait_for_selector("#viewer:not([hidden])")
        page.keyboard.press("ArrowRight")
        assert page.eval_on_selector("#vboard", "e => e.textContent") == CLOSE + HOSTILE
        assert page.eval_on_selector_all("#vdrawn svg", "e => e.length") == 0  # not a board: shown as text
        assert HOSTILE in page.inner_text("#where") and CLOSE in page.inner_text("#vnotes")
        assert page.title() == "cwm serve" and page.eval_on_selector("body", "b => b.dataset.owned") is None
        assert page.locator("img").count() == 0 and errors == []
        page.close()


@pytest.mark.parametrize("width", [1280, 420])
def test_screenshots_at_desktop_and_phone_width_fit_the_viewport(browser, ttt_folder, tmp_path, width):
    for url in _serve(arena_serve.ServeSettings(path=ttt_folder, port=0)):
        page, errors = _page(browser, url, width)
        page.click("#matchlist tr[data-row='0']")
        page.wait_for_selector("#viewer:not([hidden])")
        page.keyboard.press("ArrowRight")
        shot = tmp_path / f"serve-{width}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 5000
        widths = page.evaluate("""() => ({viewport: window.innerWidth, page: document.documentElement.scrollWidth,
            svg: document.querySelector('#vdrawn svg').getBoundingClientRect().right,
            widest: Math.max(...[...document.querySelectorAll('body *')].filter(e => !e.closest('.scroll'))
              .map(e => e.getBoundingClientRect().right))})""")
        assert widths["viewport"] == width and widths["page"] <= width, widths
        assert 0 < widths["svg"] <= width and widths["widest"] <= width, widths
        assert errors == []
        page.close()


def test_the_static_view_page_draws_boards_with_the_same_renderer(browser, ttt_folder, tmp_path):
    page_file = arena_view.write(ttt_folder, tmp_path / "view.html")
    page = browser.new_page(viewport={"width": 420, "height": 900})
    page.goto(page_file.as_uri())
    assert page.eval_on_selector_all(".match .drawn svg", "e => e.length") == 4  # each match's start, drawn
    page.click("#match-1 .next")
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#match-1 .where").startswith("step 2 of")
    page.fill("#filter", "no such agent")
    assert page.eval_on_selector_all(".match", "e => e.filter(x => !x.hidden).length") == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    page.close()


def _get(url: str, path: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, bytes]:
    host, port = url.split("//")[1].rstrip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.putrequest(method, path, skip_host=bool(headers and "Host" in headers))
    for k, v in (headers or {}).items():
        conn.putheader(k, v)
    conn.putheader("Content-Length", "2")
    conn.endheaders(b"{}")
    response = conn.getresponse()
    return response.status, response.read()


def test_the_server_serves_its_routes_only(ttt_folder):
    (ttt_folder.parent / "secret.txt").write_text("SECRET beside the folder")
    for url in _serve(arena_serve.ServeSettings(path=ttt_folder, port=0)):
        for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/config.json", "/transcripts/", "/..%2fsecret.txt",
                     "//etc/passwd", "/api/../../secret.txt"):
            status, body = _get(url, path)
            assert status == 404 and b"SECRET" not in body and b"tic_tac_toe" not in body, path
        assert _get(url, "/api/match?n=../../secret.txt")[0] == 404
        assert _get(url, "/api/match?n=99")[0] == 404
        status, body = _get(url, "/api/match?n=1")
        assert status == 200 and json.loads(body)["game"] == "tic_tac_toe"
        assert _get(url, "/", {"Host": "evil.example:80"})[0] == 421  # DNS rebinding: another name
        status, body = _get(url, "/api/play/start", method="POST")  # no X-CWM header: a form on another site
        assert status == 403 and b"X-CWM" in body
        evil = ttt_folder.parent / "evil.py"
        evil.write_text("open(__file__ + '.ran', 'w').close()\n")
        request = json.dumps({"game": f"{evil}:evil", "agent": "random", "seat": 0}).encode()
        host, port = url.split("//")[1].rstrip("/").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("POST", "/api/play/start", body=request, headers={"X-CWM": "1"})
        response = conn.getresponse()
        assert response.status == 400 and b"only when the command line names it" in response.read()
        assert not (ttt_folder.parent / "evil.py.ran").exists()  # the page cannot make the server import a module


def test_a_non_loopback_address_is_refused_without_the_flag(capsys):
    with pytest.raises(arena_serve.ServeError, match="--allow-remote"):
        arena_serve.check_host("0.0.0.0", False)
    arena_serve.check_host("0.0.0.0", True)
    arena_serve.check_host("::1", False)
    assert cli.main(["serve", "--play", "tic_tac_toe", "--host", "192.0.2.7", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "192.0.2.7 is not a loopback address" in err and len(err.strip().splitlines()) == 1


def test_serve_names_what_it_cannot_serve(tmp_path, capsys):
    assert cli.main(["serve", str(tmp_path / "nowhere"), "--port", "0"]) == 2
    assert "nowhere: not a directory" in capsys.readouterr().err
    assert cli.main(["serve"]) == 2
    assert "needs a results folder or bundle" in capsys.readouterr().err


def test_a_slow_agents_move_shows_progress_and_resigning_ends_the_game(browser, tmp_path, monkeypatch):
    """The page answers while the agent thinks (the server polls the game's thread, never waits on it) and says
    who is thinking; `resign` ends the game as a forfeit of the person's seat, saved like any match. The
    agent here is random, held at its move until the page has shown that it is thinking (so the test does
    not depend on how long a real search takes)."""
    from cwm.arena import run as arena_run

    release, built = threading.Event(), arena_run.make_agent

    class Held:
        def __init__(self, agent):
            self.agent = agent

        def step(self, state):
            assert release.wait(WAIT_MS / 1000), "the test never released the agent"
            return self.agent.step(state)

        def __getattr__(self, name):
            return getattr(self.agent, name)

    monkeypatch.setattr(arena_run, "make_agent", lambda *a, **k: Held(built(*a, **k)))
    out = tmp_path / "g"
    for url in _serve(arena_serve.ServeSettings(game="connect_four", agent="random", port=0, play_out=out)):
        page, errors = _page(browser, url)
        page.click("#pstart")
        page.wait_for_function("() => document.getElementById('pstatus').textContent.startsWith('your move')")
        page.locator("#legal button").first.click()
        page.wait_for_function("() => / is thinking \\(\\d+(\\.\\d)? s\\)$/.test("
                               "document.getElementById('pstatus').textContent)")
        assert page.inner_text("#pstatus").startswith("random is thinking (")
        assert page.locator("#legal button").count() == 0  # no move is offered while the agent moves
        release.set()
        page.wait_for_function("() => document.getElementById('pstatus').textContent.startsWith('your move')")
        page.click("#pquit")
        page.wait_for_function("() => document.getElementById('pstatus').textContent.startsWith('game over')")
        assert page.inner_text("#pstatus").startswith("game over: you lost (")
        (result,) = arena_replay.results_of(out)
        assert result.forfeit_seat == 0 and "resigned" in result.reason and result.moves == 2 and errors == []
        page.close()


def test_a_bundle_is_served_as_data_with_its_agent_in_the_play_form(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "manifest.json").write_text(json.dumps({"game": "tic_tac_toe", "note": HOSTILE + CLOSE}))
    site = arena_serve.Site(arena_serve.ServeSettings(path=bundle, port=0, play_out=tmp_path / "games"))
    summary = site.summary()
    assert summary["kind"] == "bundle" and summary["manifest"]["note"] == HOSTILE + CLOSE  # data, escaped by JSON
    assert summary["play"] == {"game": "tic_tac_toe", "agent": f"cwm:{bundle}", "seat": 0}
    assert summary["matches"] == [] and not (bundle / "matches.jsonl").exists()
    # a bundle's recorded game module is shown, and named in the play form, but never imported by the server
    (bundle / "manifest.json").write_text(json.dumps({"game": f"{tmp_path}/evil.py:evil"}))
    (tmp_path / "evil.py").write_text("open(__file__ + '.ran', 'w').close()\n")
    site = arena_serve.Site(arena_serve.ServeSettings(path=bundle, port=0))
    assert site.summary()["play"]["game"] == f"{tmp_path}/evil.py:evil" and site.folder() == Path("runs/play/evil")
    with pytest.raises(ValueError, match="only when the command line names it"):
        site.start(f"{tmp_path}/evil.py:evil", "random", 0)
    assert not (tmp_path / "evil.py.ran").exists()
    (bundle / "manifest.json").write_text("[1, 2")
    with pytest.raises(arena_serve.ServeError, match="manifest.json: not a readable manifest"):
        arena_serve.Site(arena_serve.ServeSettings(path=bundle, port=0))


def test_the_page_follows_a_tournament_that_is_still_playing(browser, ttt_folder, tmp_path):
    """Matches appended to a folder while the page is open appear without a reload, and while another
    process holds the folder's writer lock (a tournament playing) the page says so."""
    folder = tmp_path / "live"
    shutil.copytree(ttt_folder, folder)
    rows = (folder / "matches.jsonl").read_text().splitlines(keepends=True)
    (folder / "matches.jsonl").write_text("".join(rows[:1]))
    holder = subprocess.Popen([sys.executable, "-c", "import sys\nfrom cwm.arena.lock import writer_lock\n"
                               f"with writer_lock({str(folder)!r}):\n    print('locked', flush=True)\n"
                               "    sys.stdin.readline()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        for url in _serve(arena_serve.ServeSettings(path=folder, port=0)):
            page, errors = _page(browser, url)
            assert page.locator("#matchlist tr[data-row]").count() == 1
            page.wait_for_function("() => document.getElementById('progress').textContent.includes('playing into')")
            with (folder / "matches.jsonl").open("a") as f:
                f.write("".join(rows[1:]))
            page.wait_for_function("() => document.querySelectorAll('#matchlist tr[data-row]').length === 4")
            assert page.inner_text("#title").endswith(": 4 matches")
            holder.communicate("\n", timeout=60)
            page.wait_for_function("() => document.getElementById('progress').textContent === ''")
            assert errors == []
            page.close()
    finally:
        if holder.poll() is None:
            holder.kill()


def _positions() -> list[tuple[str, str]]:
    """Texts the renderer must draw: states (and seats' observations) of every drawn game, from seeded random
    play, several per game (start, middle, end)."""
    import numpy as np

    from cwm import games
    from cwm.arena import boards

    rng, found = np.random.default_rng(7), []
    for name in boards.DRAWN:
        game = games.load_game(name)
        state, seen = game.new_initial_state(), []
        while not state.is_terminal() and len(seen) < 400:
            seen.append(str(state))
            if game.get_type().provides_observation_string and not state.is_chance_node():
                seen.append(state.observation_string(state.current_player()))
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(actions, p=probs)))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        seen.append(str(state))
        found += [(name, text) for text in seen[:: max(1, len(seen) // 12)] + [seen[-1]]]
    return found


def _expected(name: str, text: str) -> int:
    """How many pieces or cards the drawing of ``text`` must hold, counted from the text here."""
    import re

    if name in ("tic_tac_toe", "gen_tic_tac_toe", "connect_four"):
        return text.count("x") + text.count("o")
    if name == "backgammon":
        lines = text.split("\n")
        top = lines.index("+------|------+")
        return sum(row.count("x") + row.count("o") for row in lines[top + 1:top + 12])
    if name == "leduc_poker":
        return 3 if text.startswith("Round") else 2
    if name == "gin_rummy":
        boxes = re.findall(r"Player\d:.*\n\+-+\+\n((?:\|.*\|\n){4})", text)
        pile = re.search(r"Discard pile: (.*)", text)
        return sum(len(re.findall(r"[A2-9TJQK][scdh]", b)) for b in boxes) + \
            (len(re.findall(r"[A2-9TJQK][scdh]", pile.group(1))) if pile else 0)
    if name == "hanabi":  # every hand's cards, the five fireworks and the discards
        discards = re.search(r"Discards:(.*)", text)
        return len(re.findall(r"^(?:XX|[RYGWB][1-5]) \|\| ", text, re.M)) + 5 + len(re.findall(r"[RYGWB][1-5]", discards.group(1)))
    data = json.loads(text)
    if name == "quadranto":  # a state's squares, or a seat's own square
        return sum(1 for sq in data["squares"] if isinstance(sq, list)) if "squares" in data else 1
    return sum(len(v) if not v or not isinstance(v[0], list) else sum(map(len, v))
               for v in data.values() if isinstance(v, list) and all(isinstance(c, (str, list)) for c in v))


def test_every_drawn_game_is_drawn_with_every_piece_and_card_its_text_holds(browser):
    from cwm.arena import boards

    positions = _positions() + [("tic_tac_toe", "x.o\n.x"), ("chess", "rnbqkbnr"), ("leduc_poker", "no cards")]
    page = browser.new_page()
    page.set_content(f"<body><script>{boards.SCRIPT}</script></body>")
    drawn = page.evaluate("""(positions) => positions.map(([game, text]) => { const d = cwmBoard(game, text);
        if (!d) return null; document.body.appendChild(d);
        return d.querySelectorAll('.piece-x, .piece-o, .piece-0, .piece-1, .card').length; })""",
                          [list(p) for p in positions])
    assert drawn[-3:] == [None, None, None]  # not the shape the drawing reads, or no drawing: shown as text
    for (name, text), count in zip(positions[:-3], drawn[:-3]):
        assert count == _expected(name, text), (name, text)
    assert {name for name, _ in positions[:-3]} == set(boards.DRAWN)
    page.close()
