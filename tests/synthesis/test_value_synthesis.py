"""Value synthesis end to end with scripted replies: one prompt asks for several candidates, the failing one is
refined, the passing ones play the tournament, the flipped one is rejected, and the bundle keeps the winner
with the table; reruns resume, and the bundle checks its value at load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.bundle import export_bundle, load_bundle
from cwm.bundle.value import save_value
from cwm.cli import main
from cwm.commands.bundle import describe
from cwm.llm import ScriptedClient
from cwm.selection import TournamentSettings, synthesize_value
from cwm.synthesis import SynthesisSettings
from cwm.types import UsageError

from .conftest import FAST, FLIPPED, GOOD, INITIAL_REPLY, NEUTRAL, REFINE_REPLY, TTT


def _run(bundle: Path, run_dir: Path, llm: ScriptedClient, **kw):
    settings = SynthesisSettings.of("value", **{"candidates": 3, "budget": 2, **kw})
    tournament = TournamentSettings(games_per_pairing=2, search=FAST, executor="local:2", progress=False)
    return synthesize_value("tic_tac_toe", llm, settings, run_dir=run_dir, bundle=bundle, tournament=tournament)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, ttt_games):
    root = tmp_path_factory.mktemp("value-run")
    bundle = export_bundle(root / "bundle", game="tic_tac_toe", model_source=TTT, train=ttt_games)
    llm = ScriptedClient([INITIAL_REPLY, REFINE_REPLY])
    return _run(bundle, root / "run", llm), llm, root / "run"


def test_the_flipped_value_is_rejected_and_the_bundle_keeps_the_winner_and_table(finished) -> None:
    result, llm, run = finished
    # call 0 asked for three candidates at once; the NaN one was refined (call 1), never a passing one
    assert len(llm.calls) == 2 and "Write 3 different value functions" in llm.calls[0].messages[0].text
    assert 'return float("nan")' in llm.calls[1].messages[0].text and "value_number" in llm.calls[1].messages[0].text
    assert [result.synthesis.nodes[i].source for i in result.played] == [GOOD, FLIPPED, NEUTRAL]
    tournament = result.tournament
    assert tournament is not None and tournament.winner != "value-2"
    means = {s.label: s.mean for s in tournament.standings}
    assert means["value-2"] < means["rollouts"]
    bundle = Path(result.bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert json.loads((bundle / "value_tournament.json").read_text()) == json.loads(json.dumps(tournament.to_json()))
    assert "value_tournament.json" in manifest["files"] and manifest["provenance"]["value"]["winner"] == tournament.winner
    if result.winner is None:
        assert not (bundle / "value.py").exists() and "value.py" not in manifest["files"]
    else:
        assert (bundle / "value.py").read_text() == result.winner != FLIPPED
    loaded = load_bundle(bundle)
    assert (loaded.value_report is None) == (result.winner is None)
    assert loaded.value_report is None or loaded.value_report.all_passed
    shown = describe(loaded)
    assert f"value (tournament): winner {tournament.winner or 'rollouts'}" in shown
    assert ("value load check:" in shown) == (result.winner is not None)


def test_every_prompt_reply_program_and_report_is_saved(finished) -> None:
    result, _, run = finished
    assert sorted(p.name for p in (run / "calls").glob("*.prompt.md")) == ["000000.prompt.md", "000001.prompt.md"]
    assert len(list((run / "calls").glob("0*.json"))) == 2
    for node in result.synthesis.nodes:
        assert (run / "nodes" / f"{node.id:06d}" / "program.py").read_text() == node.source
        assert (run / "nodes" / f"{node.id:06d}" / "report.json").is_file()
    for name in ("result.json", "summary.md", "value.json", "tournament/games.jsonl", "tournament/tournament.md"):
        assert (run / name).is_file(), name


def test_a_rerun_resumes_without_calls_or_games(finished) -> None:
    result, _, run = finished
    games = (run / "tournament" / "games.jsonl").read_bytes()
    silent = ScriptedClient([])
    again = _run(Path(result.bundle), run, silent)
    assert silent.calls == [] and (run / "tournament" / "games.jsonl").read_bytes() == games
    assert again.tournament == result.tournament and again.played == result.played


def test_no_passing_candidate_plays_nothing_and_leaves_the_bundle_alone(ttt_bundle, tmp_path) -> None:
    before = {p.name: p.read_bytes() for p in ttt_bundle.iterdir()}
    nan = "```python\ndef get_value(state, player_id):\n    return float('nan')\n```\n"
    result = _run(ttt_bundle, tmp_path / "run", ScriptedClient([nan]), budget=1)
    assert result.tournament is None and result.played == () and result.winner is None
    assert {p.name: p.read_bytes() for p in ttt_bundle.iterdir()} == before


def test_when_rollouts_win_an_older_value_goes_and_the_table_stays(ttt_bundle) -> None:
    save_value(ttt_bundle, GOOD, {"winner": "value-1"}, {"llm": "hand-written"})
    assert load_bundle(ttt_bundle).value_report.all_passed
    save_value(ttt_bundle, None, {"winner": None}, {"llm": "hand-written"})
    manifest = json.loads((ttt_bundle / "manifest.json").read_text())
    assert not (ttt_bundle / "value.py").exists() and "value.py" not in manifest["files"]
    assert json.loads((ttt_bundle / "value_tournament.json").read_text()) == {"winner": None}
    assert load_bundle(ttt_bundle).value_report is None


def test_a_bundle_checks_its_value_at_load(ttt_bundle) -> None:
    save_value(ttt_bundle, "def get_value(state, player_id):\n    return 5.0\n", {}, {})
    report = load_bundle(ttt_bundle).value_report
    assert report is not None and not report.all_passed
    assert report.by_type["value_range"].passed == 0


def test_bad_settings_are_refused_before_the_run_folder_exists(ttt_bundle, tmp_path) -> None:
    with pytest.raises(UsageError, match="candidates must be an integer >= 1"):
        _run(ttt_bundle, tmp_path / "run", ScriptedClient([]), candidates=0)
    assert not (tmp_path / "run").exists()


def test_the_cli_writes_the_value_into_the_bundle(ttt_bundle, tmp_path, monkeypatch, capsys) -> None:
    import cwm.commands.synthesize

    monkeypatch.setattr(cwm.commands.synthesize, "make_client",
                        lambda *a, **k: ScriptedClient([INITIAL_REPLY, REFINE_REPLY]))
    out = tmp_path / "run"
    argv = ["synthesize", "tic_tac_toe", "--target", "value", "--from", str(ttt_bundle), "--out", str(out),
            "--budget", "2", "--candidates", "3", "--games-per-pairing", "1", "--simulations", "50",
            "--executor", "inline", "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "3 candidate(s) passed their checks after 2 LLM calls" in printed and "tournament:" in printed
    assert (ttt_bundle / "value_tournament.json").is_file() and (out / "tournament" / "tournament.md").is_file()


@pytest.mark.parametrize("flags,words", [
    (["--target", "value"], "--target value needs --from BUNDLE"),
    (["--from", "somewhere"], "--from is the bundle a value function is written for"),
    (["--target", "value", "--from", "b", "--candidates", "0"], "--candidates must be >= 1, got 0"),
])
def test_the_cli_refuses_a_value_target_without_its_bundle(tmp_path, capsys, flags, words) -> None:
    assert main(["synthesize", "tic_tac_toe", "--out", str(tmp_path / "run"), "--llm", "replay:none", *flags]) == 2
    assert words in capsys.readouterr().err
