"""The evaluation runner: plans, cross-play, resuming after an interruption, torn and bad files, reports."""

from __future__ import annotations

import csv
import json

import pytest

from cwm.decrypto import (
    EmbedAlice,
    EmbedBob,
    EmbedEve,
    Pairing,
    cross_play,
    read_episodes,
    report,
    run_pairing,
    summarize,
)
from cwm.decrypto.runner import plan
from cwm.decrypto.testing import toy_embedding
from cwm.decrypto.types import DecryptoError

EMB = toy_embedding(noise=1.0)


def toy_agents(pairing):
    return EmbedAlice(EMB, k=8, smart=False), EmbedBob(EMB), EmbedEve(EMB)


def test_plan_repeats_games_across_seeds():
    rows = plan(3, 2)
    assert [r[0] for r in rows] == ["s0/e0", "s0/e1", "s0/e2", "s1/e0", "s1/e1", "s1/e2"]
    assert [r[1] for r in rows] == [0, 1, 2, 0, 1, 2] and len({r[2] for r in rows}) == 6


def test_cross_play_fixed_roles_and_matched_teams():
    full = cross_play(["a1", "a2"], ["b1", "b2"], ["e1", "e2", "e3"])
    assert len(full) == 12 and Pairing("a2", "b1", "e3") in full
    matched = cross_play(["x", "y"], ["x", "y"], ["e"], matched=True)
    assert matched == [Pairing("x", "x", "e"), Pairing("y", "y", "e")]
    with pytest.raises(DecryptoError, match="as many"):
        cross_play(["x"], ["x", "y"], ["e"], matched=True)
    assert Pairing("embed:k=4", "llm:openai:m/x", "human").slug == "embed-k=4__llm-openai-m-x__human"


class Stop(Exception):
    pass


def test_an_interrupted_run_resumes_without_repeats(tmp_path):
    pairing = Pairing("embed:k=8", "embed", "embed")
    whole = run_pairing(pairing, toy_agents, tmp_path / "whole", episodes=4, seeds=2, progress=False)
    played = []

    def stop_after_three(episode):
        played.append(episode.episode_id)
        if len(played) == 3:
            raise Stop

    with pytest.raises(Stop):
        run_pairing(pairing, toy_agents, tmp_path / "cut", episodes=4, seeds=2, progress=False,
                    on_episode=stop_after_three)
    path = tmp_path / "cut" / "episodes" / f"{pairing.slug}.jsonl"
    with path.open("a") as f:
        f.write('{"episode_id": "torn')  # a run killed in the middle of a line
    again = []
    resumed = run_pairing(pairing, toy_agents, tmp_path / "cut", episodes=4, seeds=2, progress=False,
                          on_episode=lambda e: again.append(e.episode_id))
    assert len(again) == 5 and not set(again) & set(played)
    assert [e.to_json() for e in resumed] == [e.to_json() for e in whole]
    assert len(read_episodes(path)) == 8


def test_a_bad_line_in_the_middle_is_named(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"episode_id": 1}\n{"also": "bad"}\n')
    with pytest.raises(DecryptoError, match=r"episodes.jsonl:1: not a Decrypto episode"):
        read_episodes(path)


def test_reports_hold_every_metric_with_intervals(tmp_path):
    rows = []
    for eve_k in (None, "greedy"):
        pairing = Pairing("embed:k=8", "embed", f"embed:assignment={eve_k}" if eve_k else "embed")
        episodes = run_pairing(pairing, toy_agents, tmp_path, episodes=6, seeds=1, progress=False)
        rows.append({"pairing": pairing.to_json(), "summary": summarize(episodes)})
    summary = rows[0]["summary"]
    ends = [summary["end"][c]["successes"] for c in ("intercepted", "miscommunicated", "both", "survived")]
    assert sum(ends) == summary["episodes"] == 6
    assert summary["end"]["survived"]["low"] <= summary["alice_bob_win"]["rate"] <= summary["end"]["survived"]["high"]
    paths = report.write_results(tmp_path, rows, {"episodes": 6, "seeds": 1})
    data = json.loads(paths["json"].read_text())
    assert data["record"]["episodes"] == 6 and len(data["pairings"]) == 2
    with paths["csv"].open() as f:
        table = list(csv.DictReader(f))
    assert {"survived", "survived_low", "survived_high", "turns", "format_failures_alice"} <= set(table[0])
    md = paths["markdown"].read_text()
    assert "Cross-play" in md and "embed:assignment=greedy" in md
    plots = report.plot_pairings(tmp_path / "plots", rows)
    sweep = report.plot_sweep(tmp_path / "plots" / "k.png", [1, 8], [r["summary"] for r in rows])
    assert all(p.stat().st_size > 5000 and p.read_bytes()[:4] == b"\x89PNG" for p in [*plots, sweep])


def test_long_specs_make_short_distinct_file_names():
    long_a, long_b = "llm:replay:/" + "d" * 200 + "/a.jsonl", "llm:replay:/" + "d" * 200 + "/b.jsonl"
    a, b = Pairing(long_a, long_a, long_a).slug, Pairing(long_b, long_b, long_b).slug
    assert a != b and len(a) <= 3 * 40 + 4
