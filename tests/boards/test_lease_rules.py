"""The pure lease rules: exhaustive edges and property-based sequences."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boards import lease
from boards.lease import Lease, LeaseLost

T0 = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


def test_it_claims_for_twenty_minutes_at_a_new_epoch():
    claimed = lease.claim(0, T0)
    assert claimed == Lease("active", 1, T0 + 20 * MIN)
    assert lease.RENEW_EVERY_SECONDS == 300


def test_it_keeps_the_lease_at_19_minutes_and_expires_it_at_20():
    claimed = lease.claim(0, T0)
    assert lease.is_live(claimed.state, claimed.expires_at, T0 + 19 * MIN)
    assert not lease.is_live(claimed.state, claimed.expires_at, T0 + 20 * MIN)
    assert lease.is_expired(claimed.state, claimed.expires_at, T0 + 20 * MIN)
    renewed = lease.step(claimed, "heartbeat", T0 + 19 * MIN)
    assert renewed.expires_at == T0 + 39 * MIN
    assert renewed.epoch == claimed.epoch


def test_it_holds_sixty_minutes_for_a_question_then_releases():
    claimed = lease.claim(0, T0)
    asked = lease.step(claimed, "ask", T0 + 5 * MIN)
    assert asked == Lease("waiting_input", 1, T0 + 65 * MIN)
    assert lease.is_live(asked.state, asked.expires_at, T0 + 64 * MIN)
    expired = lease.step(asked, "expire", T0 + 65 * MIN)
    assert expired == Lease("released", 2, None)


def test_a_heartbeat_never_shortens_a_question_hold():
    asked = lease.step(lease.claim(0, T0), "ask", T0)
    assert lease.step(asked, "heartbeat", T0 + MIN).expires_at == T0 + 60 * MIN


def test_an_answer_reactivates_a_waiting_run():
    asked = lease.step(lease.claim(0, T0), "ask", T0)
    answered = lease.step(asked, "answer", T0 + 50 * MIN)
    assert answered.state == "active"
    assert answered.expires_at == T0 + 70 * MIN


def test_no_heartbeat_makes_it_stale_with_a_new_epoch():
    claimed = lease.claim(0, T0)
    assert lease.step(claimed, "expire", T0 + 20 * MIN) == Lease("stale", 2, None)
    with pytest.raises(LeaseLost):
        lease.step(claimed, "expire", T0 + 19 * MIN)


@pytest.mark.parametrize("event", ["heartbeat", "ask", "complete", "release"])
def test_guarded_events_need_a_live_lease(event):
    claimed = lease.claim(0, T0)
    with pytest.raises(LeaseLost):
        lease.step(claimed, event, T0 + 20 * MIN)
    with pytest.raises(LeaseLost):
        lease.step(None, event, T0)
    for ended in ("completed", "stale", "released"):
        with pytest.raises(LeaseLost):
            lease.step(Lease(ended, 3, T0 + 99 * MIN), event, T0)


def test_release_bumps_the_epoch_and_complete_does_not():
    claimed = lease.claim(0, T0)
    assert lease.step(claimed, "release", T0).epoch == 2
    assert lease.step(claimed, "complete", T0) == Lease("completed", 1, None)


def test_an_expired_lease_is_expired_first_then_claimed_at_the_epoch_after():
    claimed = lease.claim(0, T0)
    expired = lease.step(claimed, "expire", T0 + 20 * MIN)
    again = lease.claim(expired.epoch, T0 + 20 * MIN)
    assert again == Lease("active", 3, T0 + 40 * MIN)  # expiry (2) then claim (3)


def test_a_claim_starts_at_the_epoch_after_the_tasks():
    assert lease.claim(7, T0) == Lease("active", 8, T0 + 20 * MIN)


def test_unknown_events_are_refused():
    with pytest.raises(ValueError):
        lease.step(lease.claim(0, T0), "teleport", T0)


EVENTS = st.sampled_from(["claim", "heartbeat", "ask", "answer", "complete", "release", "expire"])


@given(st.lists(st.tuples(EVENTS, st.integers(min_value=0, max_value=90)), max_size=40))
def test_any_sequence_keeps_the_invariants(steps):
    current: Lease | None = None
    now = T0
    for event, minutes in steps:
        now = now + timedelta(minutes=minutes)
        before = current
        try:
            if event != "claim":
                current = lease.step(current, event, now)
            elif current is None or not lease.is_live(current.state, current.expires_at, now):
                # The claim service expires a lease that ran out before it claims the task.
                if current is not None and lease.is_expired(current.state, current.expires_at, now):
                    current = lease.step(current, "expire", now)
                current = lease.claim(current.epoch if current is not None else 0, now)
            else:
                raise LeaseLost("already claimed")
        except LeaseLost:
            assert current == before
            continue
        assert current is not None
        # The epoch never goes backwards; it moves on claim, release and expiry only.
        if before is not None:
            assert current.epoch >= before.epoch
            if event in ("heartbeat", "ask", "complete", "answer"):
                assert current.epoch == before.epoch
            if event in ("release", "expire"):
                assert current.epoch == before.epoch + 1
            if event == "claim":
                assert current.epoch > before.epoch
        if current.state in lease.LIVE_STATES and current != before:
            # A lease an event just produced or renewed is held now, and never past the question hold.
            assert current.expires_at is not None and current.expires_at > now
            assert current.expires_at - now <= lease.QUESTION_HOLD
        elif current.state not in lease.LIVE_STATES:
            assert current.expires_at is None
