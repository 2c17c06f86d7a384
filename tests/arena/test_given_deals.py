"""Given deals (``TournamentPlan.deals``): teams played under other settings on an earlier tournament's deals are
dealt the same cards (tiny Hanabi's opening chance moves), each match records its deal, the list is in the
recorded settings and the match keys (another list: other matches, a resumed folder of another list refused),
and a wrong list is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.agents import Settings
from cwm.arena import ArenaError, tournament
from cwm.arena.plan import TournamentPlan, plan_jobs
from cwm.arena.types import MatchResult
from planners.config import SearchConfig

PLAN = TournamentPlan(matches=3, seed=4, settings=Settings(search=SearchConfig(num_simulations=4, rollouts=1)))
AGENTS = ["random", "gt-ismcts"]


def _opening(result: MatchResult) -> list[int]:
    """The chance outcomes before the first player's move: the cards dealt (tiny Hanabi deals one card each,
    each from its own chance node, before anyone moves)."""
    return list(result.actions[:2])


def _play(out: Path, plan: TournamentPlan) -> list[MatchResult]:
    return tournament("tiny_hanabi", AGENTS, plan, out_dir=out, executor="inline", progress=False)


def test_given_deals_deal_every_team_the_earlier_cards_under_other_settings(tmp_path: Path) -> None:
    dealt = _play(tmp_path / "dealt", PLAN)
    deals = tuple(next(r.deal for r in dealt if r.index == i) for i in range(PLAN.matches))
    assert len(set(deals)) == 3
    other = PLAN.replace(seed=99, settings=Settings(search=SearchConfig(num_simulations=4, rollouts=1,
                                                                        max_rollout_steps=1)))
    again = _play(tmp_path / "given", other.replace(deals=deals))
    assert {(r.index, r.deal) for r in again} == set(enumerate(deals))  # each match records the given deal
    cards = {r.index: _opening(r) for r in dealt}
    assert all(_opening(r) == cards[r.index] for r in again)  # the same cards, every team, every seat order
    unforced = _play(tmp_path / "other", other)  # the same settings without the list: other cards somewhere
    assert {r.index: _opening(r) for r in unforced} != cards
    config = json.loads((tmp_path / "given" / "config.json").read_text())
    assert config["deals"] == list(deals) and "deals" not in json.loads((tmp_path / "dealt" / "config.json")
                                                                        .read_text())


def test_the_deal_list_is_in_the_match_keys(tmp_path: Path) -> None:
    keys = {j.key for j in plan_jobs("tiny_hanabi", AGENTS, PLAN)}
    given = plan_jobs("tiny_hanabi", AGENTS, PLAN.replace(deals=(1, 2, 3)))
    assert [j.deal for j in given if j.seats == ("random", "random")] == [1, 2, 3]
    swapped = {j.key for j in plan_jobs("tiny_hanabi", AGENTS, PLAN.replace(deals=(3, 2, 1)))}
    assert not keys & {j.key for j in given} and not swapped & {j.key for j in given}
    _play(tmp_path / "a", PLAN.replace(matches=1, deals=(7,)))
    with pytest.raises(ArenaError, match="deals differ"):
        _play(tmp_path / "a", PLAN.replace(matches=1, deals=(8,)))


@pytest.mark.parametrize("deals, said", [((1, 2), "2 deal(s) given for 3 match(es)"),
                                         ((1, 2, -3), "integers in [0, 2**63)"),
                                         ((1, True, 3), "integers in [0, 2**63)"),
                                         ([1, 2, 3], "a tuple of integers")])
def test_a_wrong_deal_list_is_refused_in_one_line(tmp_path: Path, deals, said) -> None:
    with pytest.raises(ArenaError) as e:
        PLAN.replace(deals=deals)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_cwm_arena_deals_from_an_earlier_folder(tmp_path: Path, capsys) -> None:
    from cwm.arena.plan import read_results
    from cwm.cli import main

    common = ["--executor", "inline", "--no-progress", "--yes", "--sims", "4", "--rollouts", "1"]
    assert main(["arena", "tiny_hanabi", "--agents", "random", "--self-play", "--matches", "3", "--seed", "2",
                 "--out", str(tmp_path / "a"), *common]) == 0
    assert main(["arena", "tiny_hanabi", "--agents", "gt-ismcts", "--self-play", "--max-rollout-steps", "1",
                 "--deals-from", str(tmp_path / "a"), "--out", str(tmp_path / "b"), *common]) == 0
    first = {r.index: r for r in read_results(tmp_path / "a" / "matches.jsonl").values()}
    again = list(read_results(tmp_path / "b" / "matches.jsonl").values())
    assert len(again) == 3 and all(r.deal == first[r.index].deal and _opening(r) == _opening(first[r.index])
                                   for r in again)
    assert main(["arena", "leduc_poker", "--agents", "random,gt-ismcts,gt-ismcts-py", "--matches", "1",
                 "--out", str(tmp_path / "c"), *common]) == 0
    capsys.readouterr()
    assert main(["arena", "leduc_poker", "--agents", "random,gt-ismcts", "--deals-from", str(tmp_path / "c"),
                 "--out", str(tmp_path / "d"), *common]) != 0
    err = capsys.readouterr().err.strip()
    assert "match 0 was played on 3 deals" in err and len(err.splitlines()) == 1
    assert main(["arena", "tiny_hanabi", "--agents", "random", "--self-play", "--matches", "4", "--deals-from",
                 str(tmp_path / "a"), "--out", str(tmp_path / "e"), *common]) != 0
    assert "3 deal(s) given for 4 match(es)" in capsys.readouterr().err


def test_deals_are_taken_only_from_a_tournament_of_the_same_game(tmp_path: Path, capsys) -> None:
    """--deals-from reads DIR's config.json: another game's folder, or one without a readable config, is refused
    in one line (another game's deal seeds would deal other cards)."""
    from cwm.cli import main

    common = ["--executor", "inline", "--no-progress", "--yes", "--sims", "4", "--rollouts", "1"]
    assert main(["arena", "tiny_hanabi", "--agents", "random", "--self-play", "--matches", "2",
                 "--out", str(tmp_path / "a"), *common]) == 0
    capsys.readouterr()
    config = tmp_path / "a" / "config.json"
    saved = config.read_text()
    cases = [(saved, "its matches are of 'tiny_hanabi', not 'hanabi': deals are taken only from a tournament of "
                     "the same game"),
             (None, "config.json: missing; deals are taken only from a tournament folder"),
             ("{not json", "config.json: not a JSON file"),
             ('{"agents": []}', "config.json: field 'game' is missing or not a string")]
    for text, said in cases:
        if text is None:
            config.unlink()
        else:
            config.write_text(text)
        assert main(["arena", "hanabi", "--agents", "random", "--self-play", "--deals-from", str(tmp_path / "a"),
                     "--out", str(tmp_path / "b"), *common]) != 0
        err = capsys.readouterr().err.strip()
        assert said in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "b").exists()
    config.write_text(saved)  # the same game: taken
    assert main(["arena", "tiny_hanabi", "--agents", "random", "--self-play", "--deals-from", str(tmp_path / "a"),
                 "--out", str(tmp_path / "c"), *common]) == 0
