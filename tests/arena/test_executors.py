"""Executors: spec parsing, and the same tournament on a local Ray cluster as in-process.

Ray is the optional extra ``cwm[ray]``; this test needs it installed (``pip install ray``). It starts a
two-CPU local cluster (about 5 s), as Ray no longer has a local mode.
"""

from __future__ import annotations

import pytest

from cwm.arena import tournament
from cwm.executors import ExecutorError, InlineExecutor, ProcessExecutor, RayExecutor, make_executor
from planners import Settings

FAST = Settings(num_simulations=20, rollouts=1)


@pytest.mark.parametrize("spec,kind,workers", [("inline", InlineExecutor, None), ("local", ProcessExecutor, None),
                                               ("local:3", ProcessExecutor, 3)])
def test_make_executor(spec, kind, workers):
    ex = make_executor(spec)
    assert isinstance(ex, kind)
    if workers:
        assert ex.workers == workers


@pytest.mark.parametrize("spec", ["threads", "local:many", "inline:2"])
def test_bad_executor_specs(spec):
    with pytest.raises(ExecutorError, match="executor"):
        make_executor(spec)


def test_ray_cluster_plays_the_same_matches(tmp_path):
    import ray

    agents = ["random", "gt-mcts"]
    inline = tournament("tic_tac_toe", agents, matches=2, out_dir=tmp_path / "inline", settings=FAST,
                        executor="inline", progress=False)
    try:
        on_ray = tournament("tic_tac_toe", agents, matches=2, out_dir=tmp_path / "ray", settings=FAST,
                            executor=RayExecutor(num_cpus=2), progress=False)
    finally:
        ray.shutdown()
    assert [(r.key, r.returns, r.moves) for r in inline] == [(r.key, r.returns, r.moves) for r in on_ray]
