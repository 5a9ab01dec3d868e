"""A broker that never answers holds a write's after-commit queueing of its webhook deliveries for
at most the push timeout, and then queueing pauses: later writes are not slowed.

Found by the redis_freeze_webhooks fault scenario (bench/faults): with Redis stopped and one
subscription live, every write that made a delivery waited on Celery's publish to the frozen
broker, and claims fell to a third of their rate.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from hooks import delivery

TIMEOUT = 0.3


@pytest.fixture
def frozen_broker(settings, monkeypatch) -> Iterator[list[int]]:  # type: ignore[no-untyped-def]
    """deliver.delay as a frozen Redis makes it: it blocks (here until the test ends)."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.WEFT_PUSH_TIMEOUT_SECONDS = TIMEOUT
    monkeypatch.setattr(delivery, "_queue_paused_until", 0.0, raising=False)
    tried: list[int] = []
    thawed = threading.Event()

    def delay(pk: int) -> None:
        tried.append(pk)
        thawed.wait(10)

    monkeypatch.setattr("hooks.tasks.deliver.delay", delay)
    try:
        yield tried
    finally:
        thawed.set()


def _timed(ids: list[int]) -> float:
    started = time.monotonic()
    delivery.schedule(ids)
    return time.monotonic() - started


def test_it_waits_for_a_frozen_broker_at_most_the_push_timeout_then_pauses(frozen_broker):
    first = _timed([1])
    later = [_timed([n]) for n in (2, 3, 4)]
    assert TIMEOUT <= first < TIMEOUT + 1.0, f"the first queueing took {first:.2f}s"
    assert max(later) < TIMEOUT / 2, f"later queueing still waited: {[round(t, 2) for t in later]}"
    assert frozen_broker == [1], "queueing was tried again during the pause"


def test_it_queues_again_when_the_pause_is_over(frozen_broker, monkeypatch):
    monkeypatch.setattr(delivery, "PAUSE_SECONDS", 0.0, raising=False)
    _timed([1])
    _timed([2])
    assert frozen_broker == [1, 2]
