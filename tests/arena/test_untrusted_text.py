"""Forfeit reasons carry what an agent wrote: a lone surrogate, ANSI escapes and NULs in an error message go
through a tournament, its reports and its resumes without crashing and without reaching a file raw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.agents import Settings
from cwm.arena import ArenaError, MatchResult, load_results, tournament
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

POISONED = Path(__file__).resolve().parents[1] / "data" / "planners" / "broken" / "poisoned_message.py"
FAST = Settings(search=SearchConfig(num_simulations=10, rollouts=1))


def _raw_free(text: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF or c in "\x00\x1b\r\u202e" for c in text)


def _play(out: Path, executor: str = "inline") -> list[MatchResult]:
    return tournament("tic_tac_toe", ["random", f"poisoned=cwm:{POISONED}"], TournamentPlan(matches=1, settings=FAST), out_dir=out, executor=executor, progress=False)


@pytest.mark.parametrize("executor", ["inline", "local:2"])
def test_a_poisoned_forfeit_reason_is_reported_cleaned(tmp_path, executor):
    results = _play(tmp_path, executor)
    forfeits = [r for r in results if r.forfeit_seat is not None]
    assert forfeits and all(r.seats[r.forfeit_seat] == "poisoned" for r in forfeits)
    for r in forfeits:
        assert "\\x1b[2J" in r.reason and "\\x00" in r.reason and "\ufffd" in r.reason and _raw_free(r.reason)
    for name in ("results.json", "results.csv", "results.md", "matches.jsonl"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert _raw_free(text) and "\\ud800" not in text, name
    assert any("\\\\x1b[2J" in line for line in (tmp_path / "matches.jsonl").read_text().splitlines())


def test_an_old_poisoned_matches_file_resumes(tmp_path):
    # matches.jsonl written before reasons were cleaned: json.dumps escapes a surrogate, so the line was
    # writable, but every report of it (and so every resume) crashed
    results = _play(tmp_path / "clean")
    path = tmp_path / "old" / "matches.jsonl"
    path.parent.mkdir()
    poison = "ValueError: \ud800\x1b[2J\x00\rFORGED"
    lines = [json.dumps(r.to_json() | ({"reason": poison} if r.forfeit_seat is not None else {})) for r in results]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    resumed = _play(tmp_path / "old")
    assert [r.key for r in resumed] == [r.key for r in results]
    assert {r.reason for r in resumed if r.forfeit_seat is not None} == {"ValueError: \ufffd\\x1b[2J\\x00\\rFORGED"}
    assert _raw_free((tmp_path / "old" / "results.csv").read_text(encoding="utf-8"))


def test_a_result_built_with_poisoned_logs_is_cleaned():
    r = MatchResult("a|b#0", ("a", "b"), 1, (1.0, -1.0), 1, "exception\x1b", "x\x00", 3, 0.1,
                    ([{"reply": "line one\nline \x1b[31mtwo\ud800"}], []))
    assert r.reason == "x\\x00" and r.forfeit_kind == "exception\\x1b"
    assert r.logs[0] == [{"reply": "line one\nline \\x1b[31mtwo\ufffd"}]
    assert MatchResult.from_json(json.loads(json.dumps(r.to_json()))) == r


# ---------------------------------------------------------------------------------------------------
# matches.jsonl lines that are not match results


def _file(tmp_path: Path) -> tuple[Path, list[str]]:
    _play(tmp_path)
    path = tmp_path / "matches.jsonl"
    return path, path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("bad, why", [
    ('{"key": "x", "seats": ["a"', r"not a match result \(not JSON: "),
    ('{"seats": ["a", "b"], "seed": 1, "returns": [0, 0]}', r"needs the field\(s\) key"),
    ('{"key": "x", "seats": "ab", "seed": 1, "returns": [0, 0]}', "'seats' of a match result must be a list"),
    ('{"key": "x", "seats": ["a", "b"], "seed": 1, "returns": ["win", 0]}', "not a match result"),
    ('[1, 2, 3]', "is a JSON object, not list"),
])
def test_a_malformed_middle_line_names_the_file_and_line(tmp_path, bad, why):
    path, lines = _file(tmp_path)
    path.write_text("\n".join([lines[0], bad, *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(ArenaError, match=why) as caught:
        _play(tmp_path)
    assert str(caught.value).startswith(f"{path}:2: ") and "\n" not in str(caught.value)
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(lines) + 1  # nothing was dropped


def test_a_non_utf8_line_names_the_file_and_line(tmp_path):
    path, lines = _file(tmp_path)
    path.write_bytes(("\n".join(lines[:1]) + "\n").encode() + b'{"key": "\xff\xfe"}\n'
                     + ("\n".join(lines[1:]) + "\n").encode())
    with pytest.raises(ArenaError, match=r":2: not a match result \(not UTF-8 text: byte 0xff at column 10\)"):
        load_results(path)


def test_a_torn_last_line_is_dropped_with_a_warning(tmp_path, caplog):
    path, lines = _file(tmp_path)
    path.write_text("\n".join(lines) + "\n" + lines[0][:30], encoding="utf-8")
    assert len(load_results(path)) == len(lines)
    assert f"{path}:{len(lines) + 1}: the last line is cut short" in caplog.text
    assert path.read_text(encoding="utf-8") == "\n".join(lines) + "\n"


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path, caplog):
    path, lines = _file(tmp_path)
    path.write_text("\n".join(lines), encoding="utf-8")
    assert len(load_results(path)) == len(lines) and not caplog.text
    assert path.read_text(encoding="utf-8") == "\n".join(lines) + "\n"


def test_a_malformed_last_line_is_dropped_even_with_its_newline(tmp_path, caplog):
    path, lines = _file(tmp_path)
    path.write_text("\n".join(lines) + "\n{oops}\n", encoding="utf-8")
    assert len(load_results(path)) == len(lines)
    assert f"{path}:{len(lines) + 1}: the last line is cut short" in caplog.text
    assert path.read_text(encoding="utf-8") == "\n".join(lines) + "\n"
