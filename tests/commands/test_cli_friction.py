"""What a new user hit at the command line: each case failed before it was fixed."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cwm import cli, games
from cwm.llm import LLMConfigError, make_client, openai_compat

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize(("argv", "usage"), [
    (["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--out", "x", "--bogus"], "usage: cwm arena "),
    (["llm", "ping", "--bogus"], "usage: cwm llm ping "),
    (["--bogus"], "usage: cwm "),
])
def test_an_unknown_flag_shows_the_subcommands_usage(argv, usage, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith(usage) and "unrecognized arguments: --bogus" in err


def test_a_reader_that_stops_reading_is_not_an_error():
    p = subprocess.Popen([sys.executable, "-m", "cwm.cli", "games", "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # like `| head` that has already quit
    err = p.stderr.read().decode()
    assert p.wait() == 141 and "Broken pipe" not in err and "Traceback" not in err


def test_the_games_table_keeps_its_columns_aligned(capsys):
    assert cli.main(["games"]) == 0
    header, _, *rows = capsys.readouterr().out.splitlines()
    column = header.index(" pl ") + 1
    assert len(rows) == len(games.registered())
    assert all(row[column:column + 2].strip().isdigit() for row in rows), rows


def test_gemini_with_an_empty_model_says_the_model_is_missing():
    with pytest.raises(LLMConfigError, match="the model is missing after ':'"):
        make_client("gemini:")


def test_the_extras_hint_is_the_readmes(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(LLMConfigError) as e:
        openai_compat._import_openai()
    assert "pip install '.[openai]'" in str(e.value) and "pip install '.[openai]'" in README.read_text()


def test_collect_does_not_create_folders_at_the_top_of_the_file_system(tmp_path, capsys):
    missing = Path("/") / f"cwm-missing-{uuid.uuid4().hex[:8]}"
    assert cli.main(["collect", "tic_tac_toe", "--n", "1", "--out", str(missing / "x.jsonl")]) == 2
    assert not missing.exists() and "does not exist" in capsys.readouterr().err
    assert cli.main(["collect", "tic_tac_toe", "--n", "1", "--out", str(tmp_path / "new" / "x.jsonl")]) == 0
    assert f"created folder(s) {tmp_path / 'new'}" in capsys.readouterr().out


def test_the_readme_names_only_real_games():
    text = README.read_text()
    assert "army5x5a" not in text and "`gen_chess`" in text and games.resolve("gen_chess").name == "gen_chess"


def test_a_wrong_short_name_lists_what_the_module_registers():
    module = Path(__file__).resolve().parents[1] / "data" / "foundation" / "tiny_nim.py"
    for _ in range(2):  # the second time the module is already imported
        with pytest.raises(games.UnknownGameError, match=r"registers tiny_nim, not 'wrong_name'"):
            games.resolve(f"{module}:wrong_name")
    assert games.resolve(f"{module}:tiny_nim").players == 2


def test_a_warning_during_a_progress_bar_prints_on_a_line_of_its_own(monkeypatch, capsys):
    import logging

    from tqdm import tqdm

    import cwm.commands.games as games_command

    def busy(args):
        bar = tqdm(total=3, desc="matches", file=sys.stderr)
        bar.update(1)
        logging.getLogger("cwm.sandbox").warning("bubblewrap (bwrap) is unavailable")
        bar.update(2)
        bar.close()
        return 0

    monkeypatch.setattr(games_command, "cmd_games", busy)
    assert cli.main(["games"]) == 0
    err = capsys.readouterr().err
    before, found, _ = err.partition("bubblewrap (bwrap) is unavailable\n")
    assert found and before.endswith("\r")  # the bar's line was cleared first, the bar drawn again after


def test_workers_started_after_the_bwrap_warning_do_not_repeat_it(monkeypatch, caplog):
    import logging

    from cwm.sandbox import box

    monkeypatch.setattr(box, "bwrap_available", lambda: False)
    monkeypatch.setattr(box.Sandbox, "_warned", False)
    monkeypatch.setenv(box.NO_BWRAP_WARNED, "")  # not yet warned; restored (unset) after the test
    with caplog.at_level(logging.WARNING, logger="cwm.sandbox"):
        box.warn_if_without_bwrap()
        assert box.os.environ[box.NO_BWRAP_WARNED] == "1"
        monkeypatch.setattr(box.Sandbox, "_warned", False)  # a worker process: its own class, the same environment
        box.warn_if_without_bwrap()
    assert len([r for r in caplog.records if "bubblewrap" in r.getMessage()]) == 1


def test_the_docs_describe_the_library_not_its_development():
    docs = [README, *sorted((README.parent / "docs").glob("*.md"))]
    for doc in docs:
        text = doc.read_text().lower()
        assert not any(p in text for p in ("the issue asks", "the issue measured", "missed target")), doc.name


def test_cwm_check_oracle_checks_the_checks_on_a_users_game(tmp_path, capsys):
    module = Path(__file__).resolve().parents[1] / "data" / "foundation" / "tiny_nim.py"
    game = f"{module}:tiny_nim"
    trajs = tmp_path / "t.jsonl"
    assert cli.main(["collect", game, "--n", "3", "--out", str(trajs)]) == 0
    capsys.readouterr()
    assert cli.main(["check", "oracle", "--game", game, "--trajectories", str(trajs)]) == 0
    out = capsys.readouterr().out
    assert "checks passed (100.0%)" in out and "transition accuracy (world model) 1.000" in out
    assert cli.main(["check", "oracle", "--game", "tic_tac_toe", "--trajectories", str(trajs)]) == 2  # another game's


@pytest.mark.parametrize("command", ["synthesize", "run"])
def test_a_game_without_rules_is_named_before_an_llm_is_configured(command, monkeypatch, tmp_path, capsys):
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    out = tmp_path / "out"
    assert cli.main([command, "mnk(m=4,n=4,k=3)", "--llm", "gemini", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "has no rules text" in err and "API key" not in err and not out.exists()


def test_the_synthesis_bar_says_the_held_out_games_come_next():
    from types import SimpleNamespace

    from cwm.synthesis.progress import HELD_OUT_NEXT, ProgressBar

    bar = ProgressBar(500)
    try:
        searching = SimpleNamespace(best=None, llm=None, processed=2, replayed=0, solved=False, budget=500)
        bar.update_from(searching)
        assert bar._bar.desc == "synthesis"
        bar.update_from(SimpleNamespace(**{**vars(searching), "processed": 3, "solved": True}))
        assert bar._bar.desc == HELD_OUT_NEXT and bar._bar.n == 3
    finally:
        bar.close()


def test_the_synthesis_bar_ends_when_the_run_solves_with_no_time_left_to_wait():
    from types import SimpleNamespace

    from cwm.synthesis.progress import ProgressBar

    bar = ProgressBar(500)
    try:
        searching = SimpleNamespace(best=None, llm=None, processed=1, replayed=0, solved=False, budget=500)
        bar.update_from(searching)
        assert bar._bar.total == 500  # while searching: out of the budget, with an estimate of the time left
        bar.update_from(SimpleNamespace(**{**vars(searching), "solved": True}))
        shown = bar._bar.format_dict
        assert shown["total"] == shown["n"] == 1  # solved at its first call: the bar is full
        assert "100%" in str(bar._bar) and "1/1" in str(bar._bar)
    finally:
        bar.close()
