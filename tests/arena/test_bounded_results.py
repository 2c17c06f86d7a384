"""A results folder is read within bounds: ``matches.jsonl``, ``config.json``, a transcript and ``labels.json``
are size-checked before they are read (sparse files of gigabytes refused without reading them), and their
JSON is parsed with bounded integers, strings and nesting; each refusal names the file (and the line), and
nothing already played is lost."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cwm.agents import Settings
from cwm.arena import ArenaError, load_results, tournament
from cwm.arena import transcript as arena_transcript
from cwm.arena.cost import recorded_keys
from cwm.arena.identity import read_labels
from cwm.arena.plan import TournamentPlan, read_results
from cwm.cli import main
from cwm.files import RECORDS_BYTES, RUN_FILE_BYTES, InputLimitError
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=5, rollouts=1))
PLAN = TournamentPlan(matches=1, settings=FAST)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("results")
    tournament("tic_tac_toe", ["random", "gt-mcts"], PLAN, out_dir=out, executor="inline", progress=False)
    return out


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def test_a_sparse_matches_file_over_its_limit_is_refused_before_it_is_read(tmp_path):
    file = tmp_path / "matches.jsonl"
    _sparse(file, RECORDS_BYTES + 1)
    with pytest.raises(InputLimitError, match=f"record file {file}: {RECORDS_BYTES + 1:,} bytes, over its limit"):
        load_results(file)
    assert file.stat().st_size == RECORDS_BYTES + 1  # a refused file is left as it was


# A value over a bound in the first of two rows (a finished match, which the reader must not drop silently).
ROW_DAMAGE = {
    "huge-int": (lambda row: row.replace('"seed": ', '"seed": ' + "9" * 5000 + ", \"x\": ", 1),
                 "an integer of 5,000 digits"),
    "deep": (lambda row: row.replace('"reason": ""', '"reason": ' + "[" * 200 + "]" * 200, 1),
             "nested more than 100 levels deep"),
    "parser-deep": (lambda row: row.replace('"reason": ""', '"reason": ' + "[" * 100_000 + "]" * 100_000, 1),
                    "nested too deeply"),
}


@pytest.mark.parametrize("case", list(ROW_DAMAGE))
def test_a_row_over_a_bound_is_an_error_naming_the_line(played, tmp_path, case):
    rows = (played / "matches.jsonl").read_text(encoding="utf-8").splitlines()
    damage, message = ROW_DAMAGE[case]
    first = damage(rows[0])
    assert first != rows[0], "the damage did not apply: the row's format changed"
    file = tmp_path / "matches.jsonl"
    file.write_text("\n".join([first, *rows[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(ArenaError, match=None) as caught:
        load_results(file)
    assert f"{file}:1: not a match result ({message}" in str(caught.value) and "\n" not in str(caught.value)


def test_a_sparse_config_is_refused_before_the_tournament_plays(played, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    _sparse(out / "config.json", RUN_FILE_BYTES + 1)
    with pytest.raises(InputLimitError, match="run settings .*config.json: .* bytes, over its limit"):
        tournament("tic_tac_toe", ["random", "gt-mcts"], PLAN, out_dir=out, executor="inline", progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]  # nothing was played or written


def test_a_sparse_transcript_is_refused_before_it_is_read(played):
    result = next(iter(load_results(played / "matches.jsonl").values()))
    assert arena_transcript.load(played, result)["key"] == result.key
    file = played / arena_transcript.TRANSCRIPTS_DIR / arena_transcript.file_name(result.key)
    kept = file.read_bytes()
    try:
        _sparse(file, arena_transcript.FILE_CAP_BYTES + 1)
        with pytest.raises(arena_transcript.TranscriptError, match="over its limit"):
            arena_transcript.load(played, result)
    finally:
        file.write_bytes(kept)


def test_an_oversized_labels_file_shows_the_recorded_labels(played, tmp_path):
    assert set(read_labels(played).values()) == {"random", "gt-mcts"}
    (tmp_path / "labels.json").write_text(json.dumps({"fp": "x" * (2 << 20)}))
    assert read_labels(tmp_path) == {}
    _sparse(tmp_path / "labels.json", RUN_FILE_BYTES + 1)
    assert read_labels(tmp_path) == {}


def test_the_cost_estimate_reads_the_finished_keys_within_bounds(played, tmp_path):
    rows = (played / "matches.jsonl").read_text(encoding="utf-8").splitlines()
    keys = {json.loads(row)["key"] for row in rows}
    assert recorded_keys(played / "matches.jsonl") == keys
    file = tmp_path / "matches.jsonl"
    file.write_text("\n".join(["[" * 100_000, '{"key": ' + "9" * 5000 + "}", *rows]) + "\n", encoding="utf-8")
    assert recorded_keys(file) == keys  # the lines that do not read are left to the tournament to report
    _sparse(file, RECORDS_BYTES + 1)
    with pytest.raises(InputLimitError, match="over its limit"):
        recorded_keys(file)


@pytest.mark.parametrize("argv", [["replay", "{dir}"], ["replay", "{dir}/1"], ["view", "{dir}"]])
def test_a_reader_refuses_a_sparse_matches_file_in_one_line_before_reading_it(played, tmp_path, capsys, argv):
    """`cwm replay` and `cwm view` read matches.jsonl within the bound a resumed tournament reads it in."""
    folder = tmp_path / "shared"
    shutil.copytree(played, folder)
    file = folder / "matches.jsonl"
    _sparse(file, RECORDS_BYTES + 1)
    assert main([a.format(dir=folder) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"record file {file}: {RECORDS_BYTES + 1:,} bytes, over its limit of {RECORDS_BYTES:,}" in err, err
    assert file.stat().st_size == RECORDS_BYTES + 1


def test_a_reader_refuses_a_fifo_for_matches_file_without_blocking(played, tmp_path):
    folder = tmp_path / "shared"
    shutil.copytree(played, folder)
    (folder / "matches.jsonl").unlink()
    os.mkfifo(folder / "matches.jsonl")
    with pytest.raises(ArenaError, match="matches.jsonl: not a regular file"):
        read_results(folder / "matches.jsonl")
