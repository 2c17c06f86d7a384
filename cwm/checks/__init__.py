"""Checks of a model against data: world-model, step, inference, value, encoder, random-play, posterior and
on-policy checks, and how their outcomes become a report. Pure functions over loaded modules; where the
code runs (a sandbox child or this process) is the sandbox's business."""

from cwm.checks.world_model import (  # noqa: F401
    CHANCE,
    check_model,
    describe_error,
    diff,
    normalise,
    random_play_checks,
    run_checks,
)

__all__ = ['CHANCE', 'check_model', 'describe_error', 'diff', 'normalise', 'random_play_checks', 'run_checks']
