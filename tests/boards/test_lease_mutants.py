"""The lease rules at the points the first mutation run found untested: question holds, releases, refusals."""

from datetime import UTC, datetime, timedelta

import pytest

from boards import lease
from boards.lease import Lease, LeaseLost

T0 = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


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
