"""`cwm run` reads its run directory's files back within bounds: the synthesis settings its record is made from
and the bundle sources its on-policy check reads are size-checked before they are read, and a file over its
bound is one error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import games
from cwm.bundle.files import FILE_LIMITS
from cwm.files import RUN_FILE_BYTES, InputLimitError
from cwm.pipeline import report as pipeline_report
from cwm.pipeline import stages


def _sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:  # a hole the file system does not store: reading it would allocate it all
        f.truncate(size)
    return path


def test_synthesis_settings_over_their_bound_are_refused_before_the_record_is_written(tmp_path):
    settings = _sparse(tmp_path / "synthesis" / "config.json", RUN_FILE_BYTES + 1)
    with pytest.raises(InputLimitError) as caught:
        pipeline_report.write(tmp_path, {}, games.resolve("tic_tac_toe"))
    assert str(caught.value) == (f"synthesis settings {settings}: {RUN_FILE_BYTES + 1:,} bytes, over its limit of "
                                 f"{RUN_FILE_BYTES:,} bytes")
    assert not (tmp_path / "record.json").exists()


def test_a_bundle_source_over_its_bound_is_refused_before_the_on_policy_check(tmp_path):
    model = _sparse(tmp_path / "bundle" / "model.py", FILE_LIMITS["model.py"] + 1)
    with pytest.raises(InputLimitError, match=f"bundle file {model}: {FILE_LIMITS['model.py'] + 1:,} bytes, over"):
        stages._on_policy(games.resolve("tic_tac_toe"), model.parent, [], tmp_path / "on_policy.json")
    assert not (tmp_path / "on_policy.json").exists()
