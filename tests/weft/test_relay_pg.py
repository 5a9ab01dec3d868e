"""The relay off the write path, under real threads on PostgreSQL.

A writer never waits on the relay's advisory lock: a relay that finds it taken leaves the work
to the holder, who looks again after each commit. These tests show that no event is lost by
that hand-over: every committed event is positioned without anyone calling relay() by hand,
once, in its writers' commit order, and a relay that dies mid-way leaves its events for the next.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection, transaction

from accounts.models import Workspace
from boards.models import Task
from boards.services import task_create
from tests.boards.helpers import race
from weft import events
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)
# A write that waited on the lock would take at least this long: the holder keeps it this long.
HOLD_SECONDS = 3.0
FAST = 1.0


def write(ws: Workspace, type: str = "relay.test") -> Event:
    with transaction.atomic():
        return events.emit(workspace_id=ws.pk, type=type, entity_type="task", entity_id=1, payload={})


def timed_write(ws: Workspace) -> tuple[Event, float]:
    started = time.monotonic()
    event = write(ws)
    return event, time.monotonic() - started


def position_of(event: Event) -> int | None:
    return Event.objects.get(pk=event.pk).position


def unpositioned() -> set[int]:
    return set(Event.objects.filter(position__isnull=True).values_list("pk", flat=True))


def in_thread(fn: Callable[[], Any]) -> threading.Thread:
    def run() -> None:
        try:
            fn()
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def clean_log(on_postgres: None, ws_a: Workspace) -> None:
    events.relay()


class BlockingHook:
    """A relay hook that, in one thread only, stops inside the relay's transaction until let go."""

    def __init__(self) -> None:
        self.inside, self.go = threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None
        self.seen: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, batch: list[Event]) -> None:
        with self.lock:
            self.seen += [e.pk for e in batch]
        if threading.current_thread() is self.thread and not self.inside.is_set():
            self.inside.set()
            assert self.go.wait(10), "the test never let the relay go"


@pytest.fixture
def blocking_hook() -> Iterator[BlockingHook]:
    hook = BlockingHook()
    events.register_relay_hook(hook)
    try:
        yield hook
    finally:
        hook.go.set()
        events.unregister_relay_hook(hook)


def test_a_writer_does_not_wait_while_another_connection_holds_the_relay_lock(clean_log, ws_a):
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [events.RELAY_LOCK])
            held.set()
            done.wait(HOLD_SECONDS)

    holder = in_thread(hold)
    assert held.wait(5)
    event, took = timed_write(ws_a)
    done.set()
    holder.join(5)
    assert took < FAST, f"the write waited {took:.2f}s on the relay's lock"
    assert position_of(event) is None  # left to the holder (here a stand-in that never relays)
    assert [e.pk for e in events.relay()] == [event.pk]


def test_the_lock_holder_positions_what_writers_left_to_it(clean_log, ws_a, blocking_hook):
    first: list[Event] = []
    blocking_hook.thread = in_thread(lambda: first.append(write(ws_a, "first")))
    assert blocking_hook.inside.wait(5), "the first writer's relay never ran"
    second, took = timed_write(ws_a)
    assert took < FAST, f"the second write waited {took:.2f}s on the first one's relay"
    assert position_of(second) is None  # the first writer's relay holds the lock: the work is its
    blocking_hook.go.set()
    blocking_hook.thread.join(10)
    # Nobody called relay() by hand: the holder looked again after its commit.
    assert unpositioned() == set()
    assert (position_of(second) or 0) > (position_of(first[0]) or 0)
    assert blocking_hook.seen == [first[0].pk, second.pk]


def test_a_relay_that_dies_midway_leaves_every_event_for_the_next(clean_log, ws_a, blocking_hook):
    blocking_hook.thread = in_thread(lambda: write(ws_a, "first"))
    assert blocking_hook.inside.wait(5)
    left = [timed_write(ws_a) for _ in range(3)]
    assert max(took for _, took in left) < FAST
    with connection.cursor() as cursor:  # the relay's process dies, holding the lock
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND ((classid::bigint << 32) | objid::bigint) = %s",
            [events.RELAY_LOCK],
        )
        assert cursor.fetchone() == (True,)
    blocking_hook.go.set()
    blocking_hook.thread.join(10)
    waiting = unpositioned()
    assert len(waiting) == 4  # its own event and the three left to it: none positioned, none lost
    relayed = events.relay()  # the next relay (here the periodic one) positions them all, once
    assert [e.pk for e in relayed] == sorted(waiting)
    assert unpositioned() == set()


def _bump(counter_id: int, ws: Workspace) -> None:
    """One writer: lock the workspace's counter row, count, and emit what it counted."""
    with transaction.atomic():
        counter = Task.objects.select_for_update().get(pk=counter_id)
        n = int(counter.description or "0") + 1
        Task.objects.filter(pk=counter_id).update(description=str(n))
        events.emit(
            workspace_id=ws.pk, type="relay.counted", entity_type="task", entity_id=0, payload={"n": n}
        )


def _bump_rounds(counter_id: int, ws: Workspace, rounds: int) -> None:
    for _ in range(rounds):
        _bump(counter_id, ws)


def test_concurrent_writers_have_every_event_relayed_once_in_commit_order(clean_log, ws_a, ws_b, alice):
    counters = {ws.pk: task_create(workspace=ws, title="Counter", by_user=alice).task for ws in (ws_a, ws_b)}
    Task.objects.filter(pk__in=[t.pk for t in counters.values()]).update(description="0")
    events.relay()
    fanned: list[int] = []
    fanned_lock = threading.Lock()

    def fan(event: Event) -> None:
        with fanned_lock:
            fanned.append(event.pk)

    writers, rounds = 8, 15
    events.register_fanout(fan)
    try:
        outcomes = race(
            [(ws_a if i % 2 else ws_b) for i in range(writers)],
            lambda ws: _bump_rounds(counters[ws.pk].pk, ws, rounds),
        )
    finally:
        events.unregister_fanout(fan)
    assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
    made = Event.objects.filter(type="relay.counted")
    assert made.count() == writers * rounds
    assert unpositioned() == set()  # no relay() by hand: the writers' own relays did it all
    assert Counter(fanned) == Counter(made.values_list("pk", flat=True))  # each fanned out once
    for ws in (ws_a, ws_b):
        relayed = events.read(workspace_id=ws.pk, after=0, limit=1000, types=["relay.counted"])
        counted = [e.payload["n"] for e in relayed]
        assert counted == list(range(1, writers // 2 * rounds + 1))
