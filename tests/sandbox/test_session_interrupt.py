"""A planning worker's session interrupted half way (Ctrl-C while the host waits): the sandbox is restarted, so
the next job gets its own verdict, the zygote prints no traceback and no reply arrives out of turn."""

from __future__ import annotations

import logging

import pytest

from cwm.sandbox import CALL_JOB, Sandbox
from cwm.sandbox.launch import Zygote
from cwm.sandbox.verdicts import ENCODE_JOB

ENCODER = "def encode(observation, player):\n    return [float(player), 1.0]\n"
ENCODE = {"op": "encode", "observation": {"board": "..."}, "player": 1}
MODEL = "def get_initial_state():\n    return {'board': [0] * 9}\n"


def _interrupt_next_receive(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next wait for the zygote's answer is ended by a KeyboardInterrupt (after the request went out)."""
    real = Zygote.receive

    def interrupted(self: Zygote, deadline: float) -> None:
        monkeypatch.setattr(Zygote, "receive", real)
        raise KeyboardInterrupt

    monkeypatch.setattr(Zygote, "receive", interrupted)


def _next_jobs_are_answered_in_turn(box: Sandbox) -> None:
    job = box.run(CALL_JOB, MODEL, {"function": "get_initial_state"})
    assert job.ok and job.value == {"board": [0] * 9}, job
    with box.open_session(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0) as session:
        assert session.ask(ENCODE).value == {"vector": [1.0, 1.0]}


@pytest.mark.parametrize("where", ["opening", "asking"])
def test_an_interrupted_session_leaves_a_sandbox_that_answers_the_next_jobs(where, monkeypatch, caplog, capfd):
    with Sandbox() as box:
        box.run(CALL_JOB, MODEL, {"function": "get_initial_state"})  # the zygote is up
        restarts = box.restarts
        if where == "opening":
            _interrupt_next_receive(monkeypatch)
            with pytest.raises(KeyboardInterrupt):
                box.open_session(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
        else:
            session = box.open_session(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
            _interrupt_next_receive(monkeypatch)
            with pytest.raises(KeyboardInterrupt):
                session.ask(ENCODE)
            assert not session.alive
        assert box.restarts == restarts + 1  # the zygote serving the lost session is gone
        with caplog.at_level(logging.WARNING):
            _next_jobs_are_answered_in_turn(box)
    assert "out of turn" not in caplog.text
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyError" not in err, err


def test_a_job_sent_to_a_zygote_still_serving_a_worker_ends_that_worker_and_is_answered(caplog, capfd):
    with Sandbox() as box:
        session = box.open_session(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
        assert session.ask(ENCODE).ok
        # a host that lost its session (as an interrupt once made one) sends a job: the zygote ends the worker
        # and says so, and the job is sent again and answered
        job = box._run(CALL_JOB, MODEL, {"function": "get_initial_state"}, box.limits, True)
        assert job.ok and job.value == {"board": [0] * 9}, job
        session.abandon()
        with caplog.at_level(logging.WARNING):
            _next_jobs_are_answered_in_turn(box)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyError" not in err, err
