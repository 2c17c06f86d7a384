"""Inputs without a cap and files that are not text: a huge rules file is refused before any prompt is sent,
and a rules file that is not UTF-8 is a one-line error naming the file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import games
from cwm.cli import main
from cwm.files import TextFileError
from cwm.llm.testing import fake_gemini  # noqa: F401  (fixture)

NOT_UTF8 = b"# Tic-tac-toe\n\nTwo players mark cells \xff\xfe of a 3x3 grid.\n"


@pytest.fixture
def live(fake_gemini, monkeypatch):  # noqa: F811
    """`--llm gemini:...` of the command line talks to the fake server (the SDK reads its base URL there)."""
    monkeypatch.setenv("GEMINI_API_KEY", "fake-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_gemini.base_url)
    return fake_gemini


def _synthesize(out: Path, rules: Path, *flags: str) -> int:
    return main(["synthesize", "tic_tac_toe", "--llm", "gemini:gemini-2.5-pro", "--rules", str(rules), "--out",
                 str(out), "--budget", "1", "--num-test", "0", "--no-sandbox", "--quiet", *flags])


def test_a_huge_rules_file_is_refused_before_anything_is_sent(live, tmp_path, capsys):
    # the 37 MB rules file of the report, scaled down: just over gemini-2.5-pro's 1,048,576-token window
    rules = tmp_path / "rules.md"
    rules.write_text("Each player in turn marks one empty cell. " * 100_000, encoding="utf-8")
    assert _synthesize(tmp_path / "run", rules) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # refused as rules no prompt could hold, before the first prompt is even built
    assert len(err) == 1 and err[0].startswith(f"cwm synthesize: error: the rules of tic_tac_toe ({rules})")
    assert "over the prompt limit of 1,048,576 tokens" in err[0]
    assert "--max-prompt-tokens N" in err[0]
    assert live.request_count == 0
    # the limit raised, the same command resumes the run and sends it
    live.script("no code in this reply")
    assert _synthesize(tmp_path / "run", rules, "--max-prompt-tokens", "2000000") == 0
    assert live.request_count == 1


def test_a_lower_limit_on_the_command_line_is_kept(live, tmp_path, capsys):
    rules = tmp_path / "rules.md"
    rules.write_text("Tic-tac-toe: three in a row wins.\n", encoding="utf-8")
    assert _synthesize(tmp_path / "run", rules, "--max-prompt-tokens", "500") == 2
    assert "over the limit of 500 (max_prompt_tokens)" in capsys.readouterr().err
    assert live.request_count == 0


def test_cwm_run_takes_the_limit_too(live, tmp_path, capsys):
    rules = tmp_path / "rules.md"
    rules.write_text("Tic-tac-toe: three in a row wins.\n", encoding="utf-8")
    argv = ["run", "tic_tac_toe", "--llm", "gemini:gemini-2.5-pro", "--rules", str(rules), "--out",
            str(tmp_path / "run"), "--budget", "1", "--num-test", "0", "--quiet", "--max-prompt-tokens", "500"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "over the limit of 500 (max_prompt_tokens)" in err[0]
    assert live.request_count == 0


@pytest.mark.parametrize("command", ["synthesize", "run"])
def test_a_rules_file_that_is_not_utf8_is_one_line_naming_file_line_and_column(live, tmp_path, capsys, command):
    rules = tmp_path / "rules.md"
    rules.write_bytes(NOT_UTF8)
    argv = [command, "tic_tac_toe", "--llm", "gemini:gemini-2.5-pro", "--rules", str(rules), "--out",
            str(tmp_path / "run"), "--budget", "1", "--num-test", "0", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"cwm {command}: error: rules file {rules}: not UTF-8 text at line 3, column 24 (byte 0xff); "
                   f"save it as UTF-8"]
    assert live.request_count == 0


def test_rules_text_of_a_file_that_is_not_utf8(tmp_path):
    rules = tmp_path / "rules.md"
    rules.write_bytes(NOT_UTF8)
    with pytest.raises(TextFileError, match=r"line 3, column 24 \(byte 0xff\)"):
        games.rules_text(games.resolve("tic_tac_toe", rules=rules))


def test_rules_text_keeps_reading_line_ends_as_before(tmp_path):
    rules = tmp_path / "rules.md"
    rules.write_bytes(b"one\r\ntwo\rthree\n")
    assert games.rules_text(games.resolve("tic_tac_toe", rules=rules)) == rules.read_text(encoding="utf-8")


def test_a_reply_with_a_lone_surrogate_is_journaled_not_a_crash(fake_gemini, tmp_path):  # noqa: F811
    from synth_helpers import synthesize

    # JSON may carry "\ud800"; written as UTF-8 it crashed the run log and the journal (and so every resume,
    # which asked the paid call again)
    fake_gemini.script_by(lambda body: "```python\nMARK = 'cut \ud800 here'\n```")
    out = tmp_path / "run"
    result = synthesize(out, fake_gemini.client(run_dir=out), budget=2)
    assert result.llm_calls == 2 and fake_gemini.request_count == 2
    journal = (out / "calls" / "000000.json").read_text(encoding="utf-8")
    assert "cut \ufffd here" in journal and "cut \ufffd here" in (out / "llm_log.jsonl").read_text(encoding="utf-8")
    assert synthesize(out, fake_gemini.client(run_dir=out), budget=2).llm_calls == 2
    assert fake_gemini.request_count == 2  # resumed from the journal: nothing asked again
