"""The lease rules at the points the first mutation run found untested: answers, releases, refusals."""

from datetime import UTC, datetime, timedelta

import pytest

from boards import lease
from boards.lease import Lease, LeaseLost

T0 = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


def claimed_and_asked() -> Lease:
    return lease.step(lease.claim(0, T0), "ask", T0 + 5 * MIN)


def test_it_refuses_an_unknown_event_by_name():
    held = lease.claim(0, T0)
    with pytest.raises(ValueError) as refused:
        lease.step(held, "steal", T0 + MIN)
    assert str(refused.value) == "unknown lease event 'steal'"


def test_lease_lost_names_the_event_that_needed_the_lease():
    with pytest.raises(LeaseLost) as refused:
        lease.step(None, "heartbeat", T0)
    assert str(refused.value) == "heartbeat"
    released = lease.step(lease.claim(0, T0), "release", T0 + MIN)
    with pytest.raises(LeaseLost) as refused:
        lease.step(released, "complete", T0 + 2 * MIN)
    assert str(refused.value) == "complete"


def test_expiring_a_live_lease_is_refused_as_nothing_to_expire():
    held = lease.claim(0, T0)
    with pytest.raises(LeaseLost) as refused:
        lease.step(held, "expire", T0 + 19 * MIN)
    assert str(refused.value) == "nothing to expire"


def test_release_gives_the_task_back_at_a_new_epoch():
    held = lease.claim(0, T0)
    assert lease.step(held, "release", T0 + MIN) == Lease("released", 2, None)


def test_an_answer_reactivates_a_waiting_run_at_the_same_epoch():
    asked = claimed_and_asked()
    answered = lease.step(asked, "answer", T0 + 10 * MIN)
    # The 60-minute hold from T0+5 is longer than a fresh 20 minutes: it is kept.
    assert answered == Lease("active", asked.epoch, T0 + 65 * MIN)


def test_an_answer_to_a_run_that_is_not_waiting_changes_nothing():
    held = lease.claim(0, T0)
    assert lease.step(held, "answer", T0 + 10 * MIN) == held


def test_an_answer_after_the_question_hold_ran_out_changes_nothing():
    asked = claimed_and_asked()
    assert lease.step(asked, "answer", T0 + 65 * MIN) == asked


def test_an_answer_without_any_lease_is_a_released_lease_at_epoch_0():
    assert lease.step(None, "answer", T0) == Lease("released", 0, None)
