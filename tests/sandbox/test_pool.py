"""``cwm.sandbox.pool.Lease``: one worker at a time on a given sandbox or one borrowed from the pool."""

from __future__ import annotations

from cwm.sandbox import pool
from cwm.sandbox.box import Sandbox
from cwm.sandbox.verdicts import ENCODE_JOB

ENCODER = "def encode(observation, player):\n    return [float(player), 1.0]\n"
ENCODE = {"op": "encode", "observation": {"board": "..."}, "player": 1}


def test_a_borrowed_sandbox_goes_back_to_the_pool_and_a_given_one_stays_with_its_owner():
    pool.close_all()
    borrowed = pool.Lease()
    session = borrowed.open(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
    assert borrowed.session is session and session.ask(ENCODE).value == {"vector": [1.0, 1.0]}
    box = borrowed._box
    borrowed.close()
    assert borrowed.session is None and not session.alive
    assert pool._IDLE[:] == [box]  # back in the pool, and the next borrower gets it
    assert pool.acquire() is box
    try:
        given = pool.Lease(box)
        given.open(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
        given.close()
        assert not pool._IDLE and given._box is box  # the owner's, kept for its next worker
    finally:
        box.close()


def test_a_worker_that_failed_or_did_not_start_is_no_session_and_the_next_open_reuses_the_sandbox():
    with Sandbox() as box:
        lease = pool.Lease(box)
        session = lease.open(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
        assert not session.ask({"op": "decode"}).ok  # the server refuses the message: the worker is gone
        assert lease.session is None
        refused = lease.open(ENCODE_JOB, "x = 1\n", {}, move_cpu_s=5.0)  # no encode: it does not start
        assert not refused.alive and "encode" in refused.opened.error and lease.session is None
        again = lease.open(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)
        assert lease.session is again and again.ask(ENCODE).ok
        lease.open(ENCODE_JOB, ENCODER, {}, move_cpu_s=5.0)  # a new worker ends the one before
        assert not again.alive and lease.session is not None
        lease.close()
        assert lease.session is None
