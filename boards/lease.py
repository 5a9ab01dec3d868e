"""The lease state machine of a run: pure values in, pure values out (no ORM, no clock reads).

A claim is a lease of LEASE_DURATION on a task, renewed by heartbeats every RENEW_EVERY_SECONDS.
While a question to a person is open the lease holds for QUESTION_HOLD without heartbeats.
Every claim, release and expiry bumps the task's epoch, the fencing token every lease-guarded
write compares against. The services compute the next lease here (`claim`, `step`) and their
conditional UPDATEs only apply it; the fence on token and epoch is the database's
(`services.common.fenced`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

LEASE_DURATION = timedelta(minutes=20)
RENEW_EVERY_SECONDS = 300
QUESTION_HOLD = timedelta(minutes=60)

ACTIVE = "active"
WAITING_INPUT = "waiting_input"
COMPLETED = "completed"
STALE = "stale"
RELEASED = "released"
LIVE_STATES = frozenset({ACTIVE, WAITING_INPUT})
ENDED_STATES = frozenset({COMPLETED, STALE, RELEASED})


class LeaseLost(Exception):
    """The lease is not held: expired, ended or superseded."""


@dataclass(frozen=True)
class Lease:
    """A run's lease as the rules see it; `epoch` is the task's epoch the run was claimed at."""

    state: str
    epoch: int
    expires_at: datetime | None


def claim_expiry(now: datetime) -> datetime:
    return now + LEASE_DURATION


def renewed_expiry(expires_at: datetime, now: datetime) -> datetime:
    """A heartbeat renews to now + 20 min, never shortening a longer question hold."""
    return max(expires_at, now + LEASE_DURATION)


def question_expiry(expires_at: datetime, now: datetime) -> datetime:
    """An open question holds the claim 60 minutes from when it is asked."""
    return max(expires_at, now + QUESTION_HOLD)


def is_live(state: str, expires_at: datetime | None, now: datetime) -> bool:
    """A lease is held only in a live state and strictly before its expiry."""
    return state in LIVE_STATES and expires_at is not None and expires_at > now


def is_expired(state: str, expires_at: datetime | None, now: datetime) -> bool:
    """Live by state but past its expiry: expired at read time, whether or not a sweep ran."""
    return state in LIVE_STATES and expires_at is not None and expires_at <= now


def expired_state(state: str) -> str:
    """What an expired lease becomes: no heartbeat → stale; a question hold that ran out → released."""
    return RELEASED if state == WAITING_INPUT else STALE


def next_epoch(epoch: int) -> int:
    return epoch + 1


def claim(task_epoch: int, now: datetime) -> Lease:
    """The lease a claim of a free task at `task_epoch` starts: active, at the next epoch, 20 minutes."""
    return Lease(ACTIVE, next_epoch(task_epoch), claim_expiry(now))


def step(lease: Lease | None, event: str, now: datetime) -> Lease:
    """The next lease after `event` (heartbeat, ask, answer, complete, release, expire).

    `lease` is the run's current lease (None when there is no run). Raises LeaseLost when the
    event needs a held lease (or, for expire, an expired one) and there is none.
    """
    if event == "expire":
        if lease is None or not is_expired(lease.state, lease.expires_at, now):
            raise LeaseLost("nothing to expire")
        return Lease(expired_state(lease.state), next_epoch(lease.epoch), None)
    if event == "answer":
        if lease is None or lease.state != WAITING_INPUT or not is_live(lease.state, lease.expires_at, now):
            return lease if lease is not None else Lease(RELEASED, 0, None)
        assert lease.expires_at is not None
        return Lease(ACTIVE, lease.epoch, renewed_expiry(lease.expires_at, now))
    if lease is None or not is_live(lease.state, lease.expires_at, now):
        raise LeaseLost(event)
    assert lease.expires_at is not None
    if event == "heartbeat":
        return replace(lease, expires_at=renewed_expiry(lease.expires_at, now))
    if event == "ask":
        return Lease(WAITING_INPUT, lease.epoch, question_expiry(lease.expires_at, now))
    if event == "complete":
        return Lease(COMPLETED, lease.epoch, None)
    if event == "release":
        return Lease(RELEASED, next_epoch(lease.epoch), None)
    raise ValueError(f"unknown lease event {event!r}")
