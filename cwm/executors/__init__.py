"""Where independent jobs run: in this process, on a local process pool (the default), or on a Ray cluster."""

from cwm.executors.pools import (  # noqa: F401
    Executor,
    ExecutorError,
    InlineExecutor,
    JobCrashed,
    ProcessExecutor,
    RayExecutor,
    make_executor,
    worker_place,
)

__all__ = ['Executor', 'ExecutorError', 'InlineExecutor', 'JobCrashed', 'ProcessExecutor', 'RayExecutor', 'make_executor', 'worker_place']
