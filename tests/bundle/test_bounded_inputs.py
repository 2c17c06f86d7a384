"""Bounded before read: every file of a bundle is size-checked before a byte of it is read or hashed (a sparse
file of gigabytes included), a policy.npz is checked from its zip directory and its arrays' headers before
anything is inflated, and every JSON value is parsed within bounds (integers, strings, nesting); each refusal
is one line naming the file, from `cwm inspect` as from ``load_bundle``."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cwm import bundle
from cwm.bundle.files import FILE_LIMITS
from cwm.bundle.policy import (
    MAX_ARRAY_BYTES,
    PolicyConfig,
    PolicyError,
    init_params,
    policy_bytes,
    read_policy,
    save_policy,
)
from cwm.cli import main
from cwm.files import (
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    MAX_STRING_CHARS,
    RUN_FILE_BYTES,
    InputLimitError,
    loads_bounded,
    read_bounded,
    read_text,
)
from cwm.games import trajectories
from cwm.ppo.bundle import updates_done
from cwm.ppo.train import CHECKPOINT, CHECKPOINT_BYTES, CHECKPOINT_MEMBERS, CheckpointError, read_checkpoint
from cwm.types import TrajectoryFormatError

DATA = Path(__file__).resolve().parents[1] / "data"
ENCODER = (DATA / "reference" / "tic_tac_toe_encoder.py").read_text(encoding="utf-8")
TTT = PolicyConfig(obs_size=27, num_actions=9, hidden=16, game="tic_tac_toe")
REPO = Path(__file__).resolve().parents[2]
BOMB_BYTES = 1 << 30  # what the bomb's member inflates to


def _one_line_refusal(path: Path, capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Runs `cwm inspect` on ``path``, which must exit 2 with one line holding every needle and no traceback."""
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


# ---------------------------------------------------------------------------------------------------------------
# Sizes, from the file system, before reading


@pytest.mark.parametrize("name", ["manifest.json", "model.py", "check_report.json", "trajectories.jsonl"])
def test_a_sparse_file_over_its_limit_is_refused_before_it_is_read(tmp_path, copy_of, capsys, name):
    path = copy_of(tmp_path / "b")
    with open(path / name, "r+b") as f:  # extended without writing: a hole the file system does not store
        f.truncate(FILE_LIMITS[name] + 1)
    assert (path / name).stat().st_blocks * 512 < FILE_LIMITS[name] // 4, "the test file should be sparse"
    _one_line_refusal(path, capsys, name, f"{FILE_LIMITS[name] + 1:,} bytes, over its limit of {FILE_LIMITS[name]:,}")


# The child's own peak memory in KiB: VmHWM, the high-water mark of its address space since exec. Not
# ru_maxrss, which on Linux carries over the parent's peak across fork and exec, so a child of a large pytest
# process (the whole suite) reports that process's size, whatever the child itself did.
PEAK_KIB = "[line for line in open('/proc/self/status') if line.startswith('VmHWM:')][0].split()[1]"


def test_a_sparse_3_gib_trajectory_file_is_refused_without_reading_or_hashing_it(tmp_path, copy_of):
    """The issue's attack, in a process of its own whose peak memory is measured: the file is never read."""
    path = copy_of(tmp_path / "b")
    with open(path / "trajectories.jsonl", "r+b") as f:
        f.truncate(3 << 30)
    script = ("import sys\nfrom cwm.cli import main\ncode = main(['inspect', sys.argv[1]])\n"
              f"print(code, {PEAK_KIB})")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=600)
    code, peak_kib = map(int, done.stdout.split())
    assert code == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "trajectories.jsonl: 3,221,225,472 bytes, over its limit" in done.stderr
    assert peak_kib < 512 << 10, f"peak memory {peak_kib} KiB: the file was read"


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputLimitError, match="not a regular file"):
        read_bounded(fifo, 100, what="run file")


def test_read_bounded_reads_a_file_at_its_limit(tmp_path):
    file = tmp_path / "f"
    file.write_bytes(b"x" * 10)
    assert read_bounded(file, 10, what="file") == b"x" * 10
    with pytest.raises(InputLimitError, match=r"file .*f: 10 bytes, over its limit of 9 bytes"):
        read_bounded(file, 9, what="file")


# ---------------------------------------------------------------------------------------------------------------
# Numbers, strings and nesting, bounded by the parser


HUGE = "9" * 5000
# Damage to the first line of a bundle's trajectories.jsonl (its JSON text, written compactly): each variant puts
# a value over one bound in another place; what the one-line error says.
TRAJECTORY_LINE: dict[str, tuple[Callable[[str], str], str]] = {
    "huge-seed": (lambda s: s.replace('"seed":0', f'"seed":{HUGE}', 1), "an integer of 5,000 digits"),
    "huge-negative-reward": (lambda s: s.replace('"rewards":[', f'"rewards":[-{HUGE},', 1),
                             "an integer of 5,000 digits"),
    "huge-in-state": (lambda s: s.replace('"state":{', f'"state":{{"x":{HUGE},', 1), "an integer of 5,000 digits"),
    "infinite-return": (lambda s: s.replace('"returns":[', '"returns":[1e999,', 1), "1e999 is not finite"),
    "nan-return": (lambda s: s.replace('"returns":[', '"returns":[NaN,', 1), "NaN is not a JSON number"),
    "long-string": (lambda s: s.replace('"policy":"random"', '"policy":"' + "a" * (MAX_STRING_CHARS + 1) + '"', 1),
                    f"a string of {MAX_STRING_CHARS + 1:,} characters"),
    "long-key": (lambda s: s.replace('"state":{', '"state":{"' + "k" * (MAX_STRING_CHARS + 1) + '":1,', 1),
                 "a key of more than"),
    "deep": (lambda s: s.replace('"policy":"random"', '"policy":' + "[" * 150 + "]" * 150, 1),
             f"nested more than {MAX_JSON_DEPTH} levels deep"),
}


@pytest.mark.parametrize("case", list(TRAJECTORY_LINE))
def test_a_value_over_a_bound_in_the_trajectories_is_one_line_naming_the_line(tmp_path, copy_of, rehashed, capsys,
                                                                               case):
    path = copy_of(tmp_path / "b")
    lines = (path / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    damage, message = TRAJECTORY_LINE[case]
    first = damage(lines[0])
    assert first != lines[0], "the damage did not apply: the file's format changed"
    rehashed(path, "trajectories.jsonl", "\n".join([first, *lines[1:]]).encode() + b"\n")
    _one_line_refusal(path, capsys, "trajectories.jsonl:1: ", message)


@pytest.mark.parametrize("name, edit", [
    ("manifest.json", lambda s: s.replace('"bundle_format"', f'"n": {HUGE}, "bundle_format"', 1)),
    ("check_report.json", lambda s: s.replace("{", f'{{"n": {HUGE}, ', 1)),
], ids=["manifest", "report"])
def test_a_huge_integer_in_a_bundles_json_is_one_line_naming_the_file(tmp_path, copy_of, rehashed, capsys, name,
                                                                      edit):
    path = copy_of(tmp_path / "b")
    text = edit((path / name).read_text(encoding="utf-8"))
    assert HUGE in text
    if name == "manifest.json":
        (path / name).write_text(text, encoding="utf-8")
    else:
        rehashed(path, name, text.encode())
    _one_line_refusal(path, capsys, name, "an integer of 5,000 digits")


def test_loads_bounded_keeps_what_is_within_its_bounds():
    text = json.dumps({"a": [1, -2, 2.5, "x" * 1000, None, True], "b": {"c": [[[]]]}, "n": int("7" * MAX_INT_DIGITS)})
    assert loads_bounded(text, where="f") == json.loads(text)
    nested = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_bounded(nested, where="f") == json.loads(nested)
    assert np.isnan(loads_bounded("NaN", where="f", allow_nan=True))


def test_a_trajectory_file_read_alone_is_bounded_too(tmp_path):
    file = tmp_path / "t.jsonl"
    with open(file, "wb") as f:
        f.truncate(trajectories.MAX_FILE_BYTES + 1)
    with pytest.raises(TrajectoryFormatError, match="over its limit"):
        trajectories.load(file)
    file.write_text(json.dumps({"schema": 1}).replace("1", HUGE) + "\n")
    with pytest.raises(TrajectoryFormatError, match=r"t.jsonl:1: an integer of 5,000 digits"):
        trajectories.load(file)


# ---------------------------------------------------------------------------------------------------------------
# A policy.npz, checked from its directory before anything is inflated


@pytest.fixture()
def with_policy(exported: Path) -> Path:
    save_policy(exported, init_params(TTT, seed=3), TTT, encoder_source=ENCODER, record={"seed": 3},
                provenance={"seeds": [3]})
    return exported


def _header(shape: tuple[int, ...]) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return out.getvalue()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """A real policy.npz (the config and every array) whose ``w1.npy`` is a valid array of BOMB_BYTES of zeros,
    deflated to a few MB."""
    good = zipfile.ZipFile(io.BytesIO(policy_bytes(init_params(TTT, seed=0), TTT)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for member in good.infolist():
            if member.filename != "w1.npy":
                z.writestr(member.filename, good.read(member))
        with z.open("w1.npy", "w", force_zip64=True) as f:
            f.write(_header((BOMB_BYTES // 4,)))
            zeros = bytes(1 << 20)
            for _ in range(BOMB_BYTES >> 20):
                f.write(zeros)
    return out.getvalue()


def _forged_size(data: bytes, name: str, size: int) -> bytes:
    """``data`` with the central directory's uncompressed size of member ``name`` set to ``size`` (nothing big
    is written: only the directory lies)."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        length = struct.unpack_from("<H", out, at + 28)[0]
        if out[at + 46:at + 46 + length].decode() == name:
            struct.pack_into("<I", out, at + 24, size)
            return bytes(out)
        at = out.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"no member {name}")


def _with_member(data: bytes, name: str, body: bytes) -> bytes:
    good = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for member in good.infolist():
            z.writestr(member.filename, body if member.filename == name else good.read(member))
        if name not in good.namelist():
            z.writestr(name, body)
    return out.getvalue()


def test_a_policy_bomb_is_refused_from_its_directory_without_inflating_it(bomb, tmp_path):
    assert len(bomb) < 8 << 20 and BOMB_BYTES > MAX_ARRAY_BYTES
    file = tmp_path / "policy.npz"
    file.write_bytes(bomb)
    script = ("import sys\nfrom pathlib import Path\nfrom cwm.bundle.policy import PolicyError, read_policy\n"
              "try:\n    read_policy(Path(sys.argv[1]).read_bytes(), where=sys.argv[1])\nexcept PolicyError as e:\n"
              f"    print(e, file=sys.stderr)\nprint({PEAK_KIB})")
    done = subprocess.run([sys.executable, "-c", script, str(file)], capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=600)
    assert f"member 'w1.npy' inflates to {BOMB_BYTES + len(_header((1,))):,} bytes" in done.stderr, done.stderr
    assert int(done.stdout) < 512 << 10, f"peak memory {done.stdout.strip()} KiB: the member was inflated"


def test_a_bomb_in_a_bundle_is_one_line_naming_it(with_policy, rehashed, bomb, capsys):
    rehashed(with_policy, "policy.npz", bomb)
    _one_line_refusal(with_policy, capsys, "policy.npz: member 'w1.npy' inflates to")


@pytest.mark.parametrize("forge, message", [
    (lambda d: _forged_size(d, "w1.npy", 3 << 30), "member 'w1.npy' inflates to 3,221,225,472 bytes"),
    (lambda d: _with_member(d, "w1.npy", _header((1 << 28,)) + bytes(100)), "declares an array of shape (268435456,)"),
    (lambda d: _with_member(d, "evil.npy", _header((1,)) + bytes(4)), "the archive lists"),
    (lambda d: _with_member(d, "../w1.npy", _header((1,)) + bytes(4)), "the archive lists"),
    (lambda d: _with_member(d, "config.npy", np_bytes(json.dumps({"config": {"obs_size": 27}}).replace("27", HUGE))),
     "an integer of 5,000 digits"),
    (lambda d: b"not a zip archive", "not a readable policy file"),
], ids=["forged-directory-3gib", "header-lies", "unknown-member", "path-member", "config-huge-int", "not-a-zip"])
def test_a_forged_archive_is_refused_before_loading(forge, message):
    data = forge(policy_bytes(init_params(TTT, seed=0), TTT))
    with pytest.raises(PolicyError, match=None) as caught:
        read_policy(data, where="bundle: policy.npz")
    assert message in str(caught.value) and "\n" not in str(caught.value), caught.value
    assert str(caught.value).startswith("bundle: policy.npz: ")


def np_bytes(text: str) -> bytes:
    out = io.BytesIO()
    np.save(out, np.array(text))
    return out.getvalue()


def test_a_policy_within_its_bounds_still_loads(with_policy):
    loaded = bundle.load_bundle(with_policy)
    assert loaded.policy is not None and loaded.policy.config == TTT
    for name, value in init_params(TTT, seed=3).items():
        np.testing.assert_array_equal(loaded.policy.params[name], value)


# ---------------------------------------------------------------------------------------------------------------
# A run directory's other files


def _checkpoint(tmp_path: Path, data: bytes) -> Path:
    folder = tmp_path / "seed-0"
    folder.mkdir(exist_ok=True)
    (folder / CHECKPOINT).write_bytes(data)
    return folder / CHECKPOINT


def _npz(**arrays: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


META = np.array(json.dumps({"update": 3}))


def test_a_training_checkpoint_that_would_inflate_past_its_limit_is_refused_from_its_directory(tmp_path):
    good = _npz(meta=META, **{"p/w1": np.zeros(4, np.float32)})
    _checkpoint(tmp_path, good)
    assert updates_done(tmp_path, 0) == 3
    forged = _forged_size(_forged_size(good, "p/w1.npy", 0xFFFF_FFFF), "meta.npy", 0xFFFF_FFFF)
    _checkpoint(tmp_path, forged)
    assert CHECKPOINT_BYTES < 2 * 0xFFFF_FFFF
    with pytest.raises(InputLimitError, match=r"checkpoint .*checkpoint.npz: member '.*' inflates to 4,294,967,295 "
                                              r"bytes \(8,589,934,590 in all\)"):
        updates_done(tmp_path, 0)


@pytest.mark.parametrize("forge, message", [
    (lambda: _with_member(_npz(meta=META), "p/w1.npy", _header((1 << 28,)) + bytes(100)),
     "member 'p/w1.npy' declares an array of shape (268435456,)"),
    (lambda: _npz(meta=META, evil=np.zeros(1)), "the archive lists ['evil.npy', 'meta.npy']; a checkpoint holds only"),
    (lambda: _npz(meta=META, **{"p/../../x": np.zeros(1)}), "a checkpoint holds only meta, p/<array>"),
    (lambda: _npz(meta=META, **{f"o/{i}": np.zeros(1) for i in range(CHECKPOINT_MEMBERS)}),
     f"lists {CHECKPOINT_MEMBERS + 1:,} members, more than a checkpoint holds ({CHECKPOINT_MEMBERS:,})"),
    (lambda: _forged_size(_npz(meta=META, **{"o/0": np.zeros(1)}), "o/0.npy", MAX_ARRAY_BYTES + 1),
     f"member 'o/0.npy' inflates to {MAX_ARRAY_BYTES + 1:,} bytes"),
    (lambda: b"not a zip archive", "not a readable checkpoint"),
], ids=["lying-header", "unknown-member", "path-member", "too-many-members", "member-too-big", "not-a-zip"])
def test_a_forged_checkpoint_is_refused_in_one_line_naming_it_before_any_array_is_loaded(tmp_path, forge, message):
    file = _checkpoint(tmp_path, forge())
    with pytest.raises(InputLimitError) as caught:
        updates_done(tmp_path, 0)
    assert str(caught.value).startswith(f"checkpoint {file}: ") and "\n" not in str(caught.value), caught.value
    assert message in str(caught.value), caught.value


@pytest.mark.parametrize("meta", ["[1, 2]", '{"update": "3"}', "{}"], ids=["a-list", "a-string-count", "no-count"])
def test_a_checkpoint_whose_meta_is_malformed_is_one_error_naming_it(tmp_path, meta):
    file = _checkpoint(tmp_path, _npz(meta=np.array(meta)))
    with pytest.raises(CheckpointError, match=f"checkpoint {file}: not a readable checkpoint"):
        updates_done(tmp_path, 0)


def test_a_fifo_in_place_of_a_checkpoint_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / CHECKPOINT)
    with pytest.raises(InputLimitError, match=f"checkpoint {tmp_path / CHECKPOINT}: not a regular file"):
        read_checkpoint(tmp_path / CHECKPOINT)


def test_a_checkpoint_within_its_bounds_reads_back_its_arrays(tmp_path):
    arrays = {"p/w1": np.arange(6, dtype=np.float32).reshape(2, 3), "b/w1": np.ones(3, np.float32),
              **{f"o/{i}": np.full(2, i, np.float32) for i in range(40)}}
    file = _checkpoint(tmp_path, _npz(meta=np.array(json.dumps({"update": 7, "curve": [0.5]})), **arrays))
    meta, found = read_checkpoint(file)
    assert meta == {"update": 7, "curve": [0.5]} and sorted(found) == sorted(arrays)
    for name, value in arrays.items():
        np.testing.assert_array_equal(found[name], value)
    assert read_checkpoint(file, arrays=False) == (meta, {})


def test_read_bounded_checks_the_file_it_opened_not_the_path_it_checked_before(tmp_path, monkeypatch):
    """A FIFO swapped in for a regular file after a check of the path would block a reader that opened the path
    afterwards: the check is made on the open file, so the read neither blocks nor passes."""
    file = tmp_path / "result.json"
    file.write_text("{}")
    real_stat, real_open = os.stat, os.open

    swapped: list[bool] = []

    def swap() -> None:  # the attacker's move, once: a FIFO where the regular file was
        if not swapped:
            swapped.append(True)
            file.unlink()
            os.mkfifo(file)

    def stat_then_swap(path, *args, **kwargs):  # a check of the path sees the regular file, then it is swapped
        found = real_stat(path, *args, **kwargs)
        if Path(path) == file:
            swap()
        return found

    def swap_then_open(path, *args, **kwargs):  # or it is swapped just before the open
        if Path(path) == file:
            swap()
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_then_swap)
    monkeypatch.setattr(os, "open", swap_then_open)
    outcome: list[BaseException | bytes] = []
    reader = threading.Thread(target=lambda: outcome.append(_caught(lambda: read_bounded(file, 100, what="run file"))),
                              daemon=True)
    reader.start()
    reader.join(60)  # a generous backstop: the read either returns at once or blocks for ever
    if reader.is_alive():  # unblock the reader (a writer end opened and closed), then fail
        os.close(real_open(file, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("read_bounded blocked on a FIFO put in place of the file")
    assert swapped and isinstance(outcome[0], InputLimitError) and "not a regular file" in str(outcome[0]), outcome


def _caught(call: Callable[[], bytes]) -> BaseException | bytes:
    try:
        return call()
    except BaseException as e:  # handed to the test's thread
        return e


def test_a_bundle_file_that_is_a_link_is_refused_on_the_open_file(tmp_path):
    target = tmp_path / "secret"
    target.write_text("key")
    (tmp_path / "model.py").symlink_to(target)
    with pytest.raises(InputLimitError, match="model.py: a symbolic link"):
        read_bounded(tmp_path / "model.py", 100, what="bundle file", follow=False)
    assert read_bounded(tmp_path / "model.py", 100, what="rules file") == b"key"


def test_a_run_file_read_as_text_is_bounded(tmp_path):
    file = tmp_path / "result.json"
    with open(file, "wb") as f:
        f.truncate(RUN_FILE_BYTES + 1)
    with pytest.raises(InputLimitError, match=f"run file {file}: {RUN_FILE_BYTES + 1:,} bytes, over its limit"):
        read_text(file, what="run file")


def test_an_arena_refuses_a_bundle_with_a_huge_manifest_in_one_line_before_reading_it(tmp_path, copy_of, capsys):
    path = copy_of(tmp_path / "b")
    with open(path / "manifest.json", "r+b") as f:
        f.truncate(3 << 30)
    code = main(["arena", "tic_tac_toe", "--agents", f"random,cwm:{path}", "--matches", "1",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"manifest.json: {3 << 30:,} bytes, over its limit of {FILE_LIMITS['manifest.json']:,}" in err
