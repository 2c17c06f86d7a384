"""`cwm decrypto ...` end to end: the offline embedding run, the k sweep, LLM roles from recorded replies,
the viewer and the ToM report, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cwm.commands.decrypto
from cwm import cli
from cwm.decrypto.testing import RuleClient
from cwm.llm import RecordingClient

OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_PROXY": "*",
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}  # any download would fail


def cwm_cmd(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cwm.cli", *args], capture_output=True, text=True, env=OFFLINE,
                          timeout=timeout)


@pytest.mark.slow
def test_embedding_run_offline_survives_ninety_percent(tmp_path):
    out = tmp_path / "run"
    done = cwm_cmd("decrypto", "run", "--alice", "embed", "--bob", "embed", "--eve", "embed", "--episodes", "32",
                   "--seeds", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[1/1] embed + embed vs embed" in done.stderr and "96/96" in done.stderr  # progress
    data = json.loads((out / "results.json").read_text())
    summary = data["pairings"][0]["summary"]
    assert summary["episodes"] == 96 and summary["alice_bob_win"]["rate"] >= 0.9, summary["end"]
    assert len((out / "episodes" / "embed__embed__embed.jsonl").read_text().splitlines()) == 96
    for name in ("results.csv", "results.md", "plots/win_turns.png", "plots/end_conditions.png",
                 "transcripts/embed__embed__embed.html"):
        assert (out / name).stat().st_size > 0, name
    assert "| embed | embed | embed |" in done.stdout
    again = cwm_cmd("decrypto", "run", "--alice", "embed", "--bob", "embed", "--eve", "embed", "--episodes", "32",
                    "--seeds", "3", "--out", str(out), "--no-progress")
    assert again.returncode == 0 and json.loads((out / "results.json").read_text())["pairings"] == data["pairings"]


@pytest.mark.slow
def test_k_sweep_shows_the_trade_off(tmp_path):
    done = cwm_cmd("decrypto", "sweep", "--k", "1,1024", "--episodes", "24", "--seeds", "1", "--out",
                   str(tmp_path), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    small, large = (r["summary"]["end"] for r in json.loads((tmp_path / "results.json").read_text())["pairings"])
    assert small["intercepted"]["rate"] > large["intercepted"]["rate"] + 0.5
    assert large["miscommunicated"]["rate"] > small["miscommunicated"]["rate"] + 0.5
    assert (tmp_path / "plots" / "k_sweep.png").stat().st_size > 10000


def test_llm_roles_and_probes_from_recorded_replies(tmp_path, monkeypatch, capsys):
    replies = tmp_path / "replies.jsonl"
    live = RuleClient()
    monkeypatch.setattr(cwm.commands.decrypto, "make_client", lambda spec, **kw: RecordingClient(live, replies))
    args = ["decrypto", "run", "--episodes", "2", "--seeds", "1", "--probes", "--no-progress"]
    assert cli.main([*args, "--alice", "llm:rule", "--bob", "llm:rule", "--eve", "llm:rule",
                     "--out", str(tmp_path / "live")]) == 0
    monkeypatch.undo()
    spec = f"llm:replay:{replies}"
    assert cli.main([*args, "--alice", spec, "--bob", spec, "--eve", spec, "--out", str(tmp_path / "replay")]) == 0
    live_rows = json.loads((tmp_path / "live" / "results.json").read_text())["pairings"]
    replay_rows = json.loads((tmp_path / "replay" / "results.json").read_text())["pairings"]
    assert replay_rows[0]["summary"] == live_rows[0]["summary"]
    assert replay_rows[0]["tom"][spec]["perspective"]["accuracy"]["n"] > 0
    capsys.readouterr()
    [episodes] = (tmp_path / "replay" / "episodes").glob("*.jsonl")
    assert cli.main(["decrypto", "tom", str(episodes)]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores[spec]["keywords"]["representational_change"]["strong"]["rate"] == 1.0
    assert cli.main(["decrypto", "view", str(episodes), "--out", str(tmp_path / "v.html")]) == 0
    assert (tmp_path / "v.html").read_text().count('class="episode"') == 2


BAD = [
    (["--alice", "embed:q=1"], "'q=1' is not an option of the alice baseline"),
    (["--alice", "embed:k=zero"], "k must be a whole number"),
    (["--eve", "robot"], "expected 'embed[:OPTIONS]', 'llm:SPEC' or 'human'"),
    (["--bob", "human"], "belongs in `cwm decrypto play`"),
]


@pytest.mark.parametrize("change,message", BAD, ids=[m for _, m in BAD])
def test_bad_specs_are_one_line_errors(tmp_path, capsys, change, message):
    roles = {"--alice": "embed", "--bob": "embed", "--eve": "embed"}
    roles[change[0]] = change[1]
    argv = ["decrypto", "run", *[x for kv in roles.items() for x in kv], "--out", str(tmp_path), "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not (tmp_path / "results.json").exists()


def test_view_of_a_missing_file_is_a_one_line_error(tmp_path, capsys):
    assert cli.main(["decrypto", "view", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "v.html")]) == 2
    assert "no such episode file" in capsys.readouterr().err


@pytest.mark.slow
def test_self_play_and_cross_play_matrix_with_a_second_vector_set(tmp_path):
    # A second vector set with no meaning at all: every word a random vector. Alice and Bob who share it still
    # coordinate (hints near the keyword in their shared space); across the two sets they cannot.
    from cwm.decrypto import keyword_list, load_glove

    words = list(dict.fromkeys([*load_glove(extra_words=keyword_list()).hint_words[:3000], *keyword_list()]))
    rng = np.random.default_rng(0)
    vectors = tmp_path / "random.txt"
    vectors.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=50))}\n" for w in words))
    other = f"embed:vectors={vectors}"
    out = tmp_path / "run"
    done = cwm_cmd("decrypto", "run", "--alice", "embed", other, "--bob", "embed", other, "--eve", "embed",
                   "--episodes", "8", "--seeds", "1", "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "## Alice x Bob survival against Eve embed" in done.stdout
    win = {(r["pairing"]["alice"], r["pairing"]["bob"]): r["summary"]["alice_bob_win"]["rate"]
           for r in json.loads((out / "results.json").read_text())["pairings"]}
    assert min(win[("embed", "embed")], win[(other, other)]) >= 0.75  # self-play
    assert max(win[("embed", other)], win[(other, "embed")]) <= 0.25  # cross-play
    assert "cwm's wary variant, not the paper's" in done.stdout
