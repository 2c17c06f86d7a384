"""The HTML viewer shows Hanabi: a tournament's page draws every step's hands, fireworks, tokens and discard
pile from the ground truth's text, each seat's observation with its own hand face down under its hints, and
shows team scores instead of a leaderboard."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from cwm.agents import Settings
from cwm.arena import boards, tournament
from cwm.arena import view as arena_view
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig
from tests.arena.test_serve import _chromium


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def hanabi_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hanabi") / "arena"
    plan = TournamentPlan(matches=1, settings=Settings(search=SearchConfig(num_simulations=4, rollouts=1)))
    tournament("hanabi", ["random"], plan, out_dir=out, executor="inline", progress=False)
    return out


def test_the_page_draws_a_hanabi_transcript_step_by_step(browser, hanabi_folder: Path, tmp_path: Path) -> None:
    page_file = arena_view.write(hanabi_folder, tmp_path / "view.html")
    html = page_file.read_text()
    assert "<h2>Team scores</h2>" in html and "Leaderboard" not in html and "about 15 of 25" in html
    page = browser.new_page()
    page.goto(page_file.as_uri())
    steps = int(page.eval_on_selector("#match-0 input[type=range]", "e => +e.max"))
    assert steps > 20  # 20 deals and the moves after them
    for s in range(1, steps + 1):
        page.evaluate(f"show(0, {s})")
        text = page.inner_text("#match-0 .board")
        drawn = page.eval_on_selector("#match-0 .drawn", "d => d.querySelectorAll('.card').length")
        cards = len(re.findall(r"^[RYGWB][1-5] \|\| ", text, re.M))  # the state shows every hand's cards
        discards = len(re.findall(r"[RYGWB][1-5]", text.split("Discards:")[1]))
        assert drawn == cards + 5 + discards, (s, text)
        tokens = page.eval_on_selector("#match-0 .drawn", "d => [...d.querySelectorAll('.token')].filter("
                                       "c => c.getAttribute('fill') !== 'none').length")
        lives, infos = (int(re.search(rf"{k} tokens: (\d+)", text).group(1)) for k in ("Life", "Info"))
        assert tokens == lives + infos
    page.close()


def test_a_seats_observation_is_drawn_with_its_own_hand_face_down(browser) -> None:
    import numpy as np

    from cwm import games

    state, rng = games.load_game("hanabi").new_initial_state(), np.random.default_rng(3)
    while state.is_chance_node() or len(state.history()) < 26:  # the deal, then six moves, hints when they can
        legal = state.legal_actions()
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else [a for a in legal if a >= 10] or legal
        state.apply_action(int(rng.choice(actions)))
    assert not state.is_terminal()
    page = browser.new_page()
    page.set_content(f"<body><script>{boards.SCRIPT}</script></body>")
    told = []
    for seat in (0, 1):
        text = state.observation_string(seat)
        found = page.evaluate("""(text) => { const d = cwmBoard('hanabi', text); document.body.appendChild(d);
            const cards = [...d.querySelectorAll('.card')];
            return [cards.filter(c => c.textContent.startsWith('?')).map(c => c.textContent),
                    [...d.querySelectorAll('text')].map(t => t.textContent)]; }""", text)
        unseen, words = found
        hints = [line.split(" || ")[1].split("|")[0] for line in text.split("-----")[0].splitlines() if " || " in line]
        # the seat's own cards: face down, each under what hints told of it (nothing shown for nothing told)
        assert unseen == ["?" + ("" if h == "XX" else h) for h in hints]
        labels = [w for w in words if w.endswith(("your hand", "seat +1"))]
        assert len(labels) == 2 and sum(w.startswith("\u25b6") for w in labels) == 1  # the seat to act marked
        told += [h for h in hints if h != "XX"]
    assert told  # some hint was given, and it is drawn under its card
    page.close()
