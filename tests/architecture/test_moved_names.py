"""Every module that moved into the package layout still imports under its former name for one release: the
same module object (its names, its state and any patch of them are shared), with a DeprecationWarning that
names the new home. And the former agent names of ``planners`` still resolve, warning."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import cwm
import planners

FORMER = sorted({**cwm.MOVED, **planners.MOVED}.items())


@pytest.mark.parametrize("old, new", FORMER, ids=[old for old, _ in FORMER])
def test_a_former_module_name_is_the_new_module_with_a_warning(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # the module keeps its own spec (pickling, reloading name it right)


def test_the_former_names_cover_every_moved_module_and_point_at_real_ones() -> None:
    assert len(FORMER) >= 45  # the package move: 52 modules, some of which kept their name as a package door
    for _, new in FORMER:
        importlib.import_module(new)


@pytest.mark.parametrize("name", ["make_agent", "Settings", "CWMAgent", "MCTSAgent", "inference_sampler"])
def test_a_former_agent_name_of_planners_resolves_with_a_warning(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"cwm.agents.{name}"):
        found = getattr(planners, name)
    assert found is getattr(importlib.import_module("cwm.agents"), name)


def test_current_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from cwm import games, load_trajectories  # noqa: F401
        from planners import MCTS, SearchConfig  # noqa: F401
