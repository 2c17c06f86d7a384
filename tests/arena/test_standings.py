"""cwm.arena.Standings: a tournament's leaderboard, results and paired comparisons as one object, the same
from the returned matches and from the folder read back; its HTML display shows those tables, and the
labels and reasons of a hostile results folder as text."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from cwm.agents import Settings
from cwm.arena import Standings, compare, tournament
from cwm.arena import ratings as arena_ratings
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

HOSTILE = "<img src=x onerror=\"document.title='owned'\">"


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("arena") / "t"
    plan = TournamentPlan(matches=4, settings=Settings(search=SearchConfig(num_simulations=20, rollouts=1)), seed=0)
    results = tournament("tic_tac_toe", ["mcts=gt-mcts", "random"], plan, out_dir=out, executor="inline", progress=False)
    return out, results


def test_standings_read_back_equal_the_returned_ones(played):
    out, results = played
    mine, read = Standings.of("tic_tac_toe", results), Standings.read(out)
    assert read.game == "tic_tac_toe" and sorted(r.key for r in read.results) == sorted(r.key for r in results)
    assert read._repr_html_() == mine._repr_html_() and read.markdown() == mine.markdown()


def test_the_display_shows_the_leaderboard_results_and_comparisons(html_tags, played):
    _, results = played
    standings = Standings.of("tic_tac_toe", results)
    page = standings._repr_html_()
    text = " ".join(html_tags(page).text)
    assert f"tic_tac_toe: arena, {len(results)} matches" in text
    head, body = arena_ratings.cells(standings.leaderboard)
    assert [row[1] for row in body] == [a for a in re.findall(r"<tr><td>\d</td><td>([a-z]+)</td>", page)]
    for row in body:  # every leaderboard cell, in the order of the ranking
        assert "<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" in page
    pooled = {(r["agent"], r["opponent"]): r for r in standings.rows if r["seat"] == "all"}
    mcts = pooled[("mcts", "random")]
    assert f"<td>mcts</td><td>random</td><td>{mcts['matches']}</td><td>{mcts['win_rate']:.2f} " in page
    (compared,) = standings.comparisons
    assert compared["pairs"] == 4 and compare.verdict(compared) == compared["verdict"]
    assert f"<td>{compared['verdict']}</td>" in page


def test_a_hostile_results_folder_renders_as_text(html_tags, played, tmp_path):
    out, _ = played
    folder = shutil.copytree(out, tmp_path / "copy")
    rows = [json.loads(line) for line in (folder / "matches.jsonl").read_text().splitlines()]
    for row in rows:
        row["seats"] = [HOSTILE if s == "random" else s for s in row["seats"]]
    rows[0] |= {"forfeit_seat": rows[0]["seats"].index(HOSTILE), "forfeit_kind": "exception",
                "reason": "</td></table><script>document.title='owned'</script>"}
    (folder / "matches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "labels.json").write_text(json.dumps({"gt-mcts": "mcts", "random": HOSTILE}))  # labels shown now
    page = Standings.read(folder)._repr_html_()
    tags = html_tags(page)
    assert not {"img", "script"} & set(tags.tags)
    text = "".join(tags.text)
    assert HOSTILE in text and "<script>document.title='owned'</script>" in text  # the forfeit's reason, as text


def test_a_forfeit_by_the_agent_listed_second_is_shown(played, tmp_path):
    out, _ = played
    folder = shutil.copytree(out, tmp_path / "copy")
    rows = [json.loads(line) for line in (folder / "matches.jsonl").read_text().splitlines()]
    rows[0] |= {"forfeit_seat": rows[0]["seats"].index("random"), "forfeit_kind": "illegal",
                "reason": "random tried square 9"}
    (folder / "matches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    standings = Standings.read(folder)
    first = [r["agent"] for r in standings.rows if r["seat"] == "all"][0]
    assert first == "mcts"  # the pairing is listed from mcts's side: random is the second agent
    page = standings._repr_html_()
    assert "<tr><td>random</td><td>mcts</td><td>random tried square 9</td></tr>" in page
