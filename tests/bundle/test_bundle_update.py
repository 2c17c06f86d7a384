"""Updating a bundle is atomic: stopped at any step (a crash, a failed write), watched at any step by a reader,
or raced by a second update, the bundle loads as exactly the old bundle or exactly the new one, and the next
update succeeds and clears what an interrupted one left.

Every call ``cwm.bundle.update`` makes into the file system (through ``os``, ``shutil``, ``fcntl`` and its
folder exchange) is numbered by a stand-in for those modules; a test makes call number k fail, or runs a
reader or another update just before it, for every k until the update runs to its end.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import fcntl
import itertools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from cwm import bundle
from cwm.bundle import update
from cwm.bundle.policy import PolicyConfig, init_params, save_policy
from cwm.bundle.update import save_encoder
from cwm.bundle.value import save_value

DATA = Path(__file__).resolve().parents[1] / "data"
ENCODER = (DATA / "reference" / "tic_tac_toe_encoder.py").read_text(encoding="utf-8")
VALUE = "def get_value(state, player_id):\n    return 0.0\n"
TTT = PolicyConfig(obs_size=27, num_actions=9, hidden=16, game="tic_tac_toe")
# each real writer: the extra files of the bundle it updates, and the update
WRITERS: dict[str, tuple[dict[str, str], Callable[[Path], object]]] = {
    "encoder": ({}, lambda b: save_encoder(b, ENCODER, {"llm": "scripted", "seed": 1})),
    "value": ({}, lambda b: save_value(b, VALUE, {"winner": "value-1"}, {"llm": "scripted"})),
    "value-dropped": ({"value.py": VALUE}, lambda b: save_value(b, None, {"winner": None}, {"llm": "scripted"})),
    "policy": ({}, lambda b: save_policy(b, init_params(TTT, seed=3), TTT, encoder_source=ENCODER,
                                         record={"seed": 3}, provenance={"seeds": [3]})),
}
LEFTOVER = re.compile(r"\.b\.cwm-(update-[0-9a-f]{16}|old)")


class Interrupted(OSError):
    """The injected fault: the update's process died at this call, or the call failed."""


@dataclasses.dataclass
class Script:
    """What happens at the update's file-system calls, numbered from 1 in ``calls``.

    From call ``fail_at`` on every call fails when ``crash`` (the process died there: nothing after it
    reaches the disk; a descriptor it closes is closed, as the kernel closes a dead process's), otherwise only
    that one does (an I/O error the update may clean up after). ``hooks[n]`` (a call number, or a call's name
    for its first occurrence) runs just before that call: another process acting in the middle of the update.
    """

    fail_at: int = 0
    crash: bool = True
    hooks: dict[int | str, Callable[[], object]] = dataclasses.field(default_factory=dict)
    calls: list[str] = dataclasses.field(default_factory=list)
    fired: bool = False
    paused: bool = False  # while a hook runs: its own calls are neither numbered nor failed

    def before(self, name: str) -> None:
        if self.paused:
            return
        self.calls.append(name)
        number = len(self.calls)
        hook = self.hooks.get(number) or (self.hooks.get(name) if self.calls.count(name) == 1 else None)
        if hook is not None:
            self.paused = True
            try:
                hook()
            finally:
                self.paused = False
        if number == self.fail_at or (self.crash and 0 < self.fail_at < number):
            self.fired = True
            raise Interrupted(f"call {number} ({name})")


class Counted:
    """Stands in for a module ``cwm.bundle.update`` uses: every function call goes through ``script`` first."""

    def __init__(self, module: ModuleType, script: Script) -> None:
        self._module, self._script = module, script

    def __getattr__(self, name: str) -> object:
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type):
            return value
        label = f"{self._module.__name__}.{name}"

        def call(*args: object, **kwargs: object) -> object:
            try:
                self._script.before(label)
            except Interrupted:
                if name == "close":
                    value(*args, **kwargs)
                raise
            return value(*args, **kwargs)

        return call


@contextlib.contextmanager
def scripted(monkeypatch: pytest.MonkeyPatch, script: Script, *, exchange: bool = True) -> Iterator[Script]:
    """The update's file-system calls run through ``script``; without ``exchange`` the system cannot exchange
    two folders (the C call fails with ``EINVAL``, as on NFS), so the update swaps by two renames."""
    real_exchange = update._exchange

    def counted_exchange(a: Path, b: Path) -> bool:
        script.before("exchange")
        return real_exchange(a, b)

    def einval(a: bytes, b: bytes) -> int:
        ctypes.set_errno(errno.EINVAL)
        return -1

    with monkeypatch.context() as m:
        for module in (os, shutil, fcntl):
            m.setattr(update, module.__name__, Counted(module, script))
        m.setattr(update, "_exchange", counted_exchange)
        if not exchange:
            m.setattr(update, "_exchange_call", lambda: einval)
        yield script


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() if p.is_file() and not p.is_symlink() else b"(not a file)"
            for p in folder.iterdir()}


def loaded_as(folder: Path, old: dict[str, bytes], new: dict[str, bytes]) -> str:
    """``"old"`` or ``"new"``: the bundle at ``folder`` loads (with its game; the checks in this process, as a
    sandbox per step would be slow) and is exactly one of them."""
    loaded = bundle.load_bundle(folder, game="tic_tac_toe", isolate=False)
    found = contents(folder)
    assert found in (old, new), f"neither the old nor the new bundle: {sorted(found)}"
    assert loaded.manifest == json.loads(found["manifest.json"])
    return "old" if found == old else "new"


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name != folder.name)


@pytest.fixture()
def fresh(tmp_path, copy_of) -> Callable[[str, dict[str, str]], Path]:
    """``fresh(label, extra_sources)``: a new copy of the exported bundle, alone in a folder of its own."""
    return lambda label, extra: copy_of(tmp_path / label / "b", extra, {"llm": "hand-written fixture", "seed": 0})


def old_and_new(fresh, writer: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    extra, write = WRITERS[writer]
    target = fresh("reference", extra)
    old = contents(target)
    write(target)
    assert siblings(target) == []
    return old, contents(target)


@pytest.mark.parametrize("crash", [True, False], ids=["crash", "io-error"])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_an_update_stopped_at_any_step_leaves_the_old_bundle_or_the_new_one(fresh, monkeypatch, writer, crash):
    extra, write = WRITERS[writer]
    old, new = old_and_new(fresh, writer)
    seen = []
    for k in itertools.count(1):
        target = fresh(f"step{k}", extra)
        mode = target.stat().st_mode
        with scripted(monkeypatch, Script(fail_at=k, crash=crash)) as script, contextlib.suppress(Interrupted):
            write(target)
        seen.append(loaded_as(target, old, new))
        assert all(LEFTOVER.fullmatch(name) for name in siblings(target)), siblings(target)
        if not crash and not (script.fired and script.calls[k - 1] == "shutil.rmtree"):
            assert siblings(target) == []  # an update that saw an error cleans up after itself
        write(target)  # the next update succeeds, on either bundle, and clears what was left
        assert contents(target) == new and siblings(target) == [] and target.stat().st_mode == mode
        if not script.fired:  # the update made fewer than k calls: it ran to its end
            break
    assert "exchange" in script.calls and "os.rename" not in script.calls  # this file system swaps in one step
    assert k > 20 and seen[0] == "old" and seen[-1] == "new"
    if crash:  # a crash leaves the old bundle up to the exchange and the new one from then on
        swap = script.calls.index("exchange") + 1
        assert seen == ["old"] * swap + ["new"] * (k - swap)


@pytest.mark.parametrize("writer", ["value-dropped", "policy"])
def test_without_an_exchange_a_crash_between_the_two_renames_is_undone_by_the_next_reader(fresh, monkeypatch,
                                                                                          writer):
    extra, write = WRITERS[writer]
    old, new = old_and_new(fresh, writer)
    seen, missing = [], []
    for k in itertools.count(1):
        target = fresh(f"step{k}", extra)
        with scripted(monkeypatch, Script(fail_at=k), exchange=False) as script, contextlib.suppress(Interrupted):
            write(target)
        if not target.exists():
            missing.append(k)
        seen.append(loaded_as(target, old, new))  # puts back the bundle the update moved aside
        write(target)
        assert contents(target) == new and siblings(target) == []
        if not script.fired:
            break
    assert script.calls.count("os.rename") == 2 and set(seen) == {"old", "new"}
    second_rename = len(script.calls) - script.calls[::-1].index("os.rename")
    assert missing == [second_rename] and seen[second_rename - 1] == "old"


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_a_reader_at_any_step_of_an_update_finds_the_old_bundle_or_the_new_one(fresh, monkeypatch, exchange):
    extra, write = WRITERS["value"]
    old, new = old_and_new(fresh, "value")
    seen, failed = [], []
    for k in itertools.count(1):
        target = fresh(f"step{k}", extra)
        script = Script(hooks={k: lambda: seen.append(loaded_as(target, old, new))})  # noqa: B023 (runs now)
        with scripted(monkeypatch, script, exchange=exchange):
            try:
                write(target)
            except OSError as e:  # the reader put the old bundle back between the update's two renames
                failed.append((k, e.errno))
        if len(seen) < k:  # the update made fewer than k calls
            break
        assert loaded_as(target, old, new) == ("old" if failed and failed[-1][0] == k else "new")
        write(target)
        assert contents(target) == new and siblings(target) == []
    assert seen[0] == "old" and seen[-1] == "new" and set(seen) == {"old", "new"}
    if exchange:
        assert failed == []
    else:  # exactly once: the bundle was not in its place, so the reader moved it back
        assert [e for _, e in failed] in ([errno.ENOTEMPTY], [errno.EEXIST])


def test_of_two_updates_at_once_one_fails_cleanly_or_they_run_one_after_the_other(fresh, monkeypatch):
    first, second = WRITERS["encoder"][1], WRITERS["value"][1]
    target = fresh("reference", {})
    old = contents(target)
    first(target)
    only_first = contents(target)
    second(target)
    both = contents(target)
    outcomes = []
    for k in itertools.count(1):
        target = fresh(f"step{k}", {})

        def race(target=target) -> None:
            try:
                second(target)
                outcomes.append("ran")
            except bundle.BundleError as e:
                assert "another update of this bundle is under way" in str(e)
                assert contents(target) in (old, only_first)  # the refused update changed nothing
                outcomes.append("refused")

        with scripted(monkeypatch, Script(hooks={k: race})):
            first(target)  # never disturbed by the other
        if len(outcomes) < k:
            break
        assert loaded_as(target, only_first, both) == ("new" if outcomes[-1] == "ran" else "old")
        assert siblings(target) == []
    assert outcomes[0] == "ran" and outcomes[-1] == "ran" and "refused" in outcomes


def test_an_update_that_locked_a_bundle_replaced_meanwhile_locks_the_new_one(fresh, monkeypatch):
    first, second = WRITERS["encoder"][1], WRITERS["value"][1]
    target = fresh("reference", {})
    first(target)
    second(target)
    both = contents(target)
    target = fresh("race", {})
    third: list[Exception] = []

    def meanwhile() -> None:
        with pytest.raises(bundle.BundleError, match="another update of this bundle is under way") as e:
            save_encoder(target, "def encode(observation, player_id):\n    return [0.0]\n", {"llm": "third"})
        third.append(e.value)

    # the second update runs to its end after the first opened the bundle folder, before it locked it; a
    # third one, started once the first holds its lock, must find the lock on the folder now in place
    script = Script(hooks={"fcntl.flock": lambda: second(target), "os.mkdir": meanwhile})
    with scripted(monkeypatch, script):
        first(target)
    assert script.calls.count("fcntl.flock") == 2 and len(third) == 1
    assert contents(target) == both and siblings(target) == []


def test_an_update_through_a_link_replaces_the_folder_it_points_to(fresh, tmp_path):
    target = fresh("real", {})
    link = tmp_path / "link"
    link.symlink_to(target)
    save_encoder(link, ENCODER, {"llm": "scripted"})
    assert link.is_symlink() and (target / "encoder.py").read_text() == ENCODER
    assert bundle.load_bundle(link, isolate=False).sources["encoder.py"] == ENCODER


@pytest.mark.parametrize("name", ["notes.txt", "manifest.json", "../model.py"])
def test_an_update_writes_only_files_a_bundle_may_hold(fresh, name):
    target = fresh("b", {})
    old = contents(target)
    with pytest.raises(bundle.BundleError, match="a bundle may not hold"):
        update.update_bundle(target, {name: b"x"}, provenance_key="x", provenance={})
    assert contents(target) == old and siblings(target) == []
