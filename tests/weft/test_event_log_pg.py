"""The event log under real concurrent transactions on PostgreSQL: commit order, no shared lock.

Each transaction runs on its own thread (so its own connection) and is driven step by step;
the reader polls from the test's own connection in autocommit.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.db import connection, transaction

from accounts.models import Workspace
from boards.models import Task
from boards.services import task_create, task_update
from tests.boards.helpers import race
from weft import events
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)
STEP_TIMEOUT = 5.0


@pytest.fixture(autouse=True)
def postgres() -> None:
    # Skipped only on the SQLite pass: with DATABASE_URL set, anything but PostgreSQL is a failure.
    if not os.environ.get("DATABASE_URL"):
        pytest.skip("needs PostgreSQL: run through `python -m tests.servers --postgres -- pytest`")
    assert connection.vendor == "postgresql"


class OpenTransaction:
    """One real transaction on its own thread and connection, run step by step until commit."""

    def __init__(self) -> None:
        self._steps: queue.Queue[Callable[[], Any] | None] = queue.Queue()
        self._results: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with transaction.atomic():
                while (step := self._steps.get()) is not None:
                    self._results.put((True, step()))
            # The on_commit relay has run by now: the commit's events are positioned.
            self._results.put((True, "committed"))
        except BaseException as exc:
            self._results.put((False, exc))
        finally:
            connection.close()

    def send(self, step: Callable[[], Any] | None) -> None:
        self._steps.put(step)

    def result(self, timeout: float = STEP_TIMEOUT) -> Any:
        try:
            ok, value = self._results.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the transaction's step did not return within {timeout}s") from None
        if not ok:
            raise value
        return value

    def run(self, step: Callable[[], Any], timeout: float = STEP_TIMEOUT) -> Any:
        self.send(step)
        return self.result(timeout)

    def commit(self) -> None:
        self.send(None)
        assert self.result() == "committed"
        self._thread.join(STEP_TIMEOUT)


@pytest.fixture
def open_transactions() -> Iterator[Callable[[], OpenTransaction]]:
    made: list[OpenTransaction] = []

    def make() -> OpenTransaction:
        made.append(OpenTransaction())
        return made[-1]

    yield make
    for tx in made:  # a failed test must not leave a transaction (and its locks) open
        if tx._thread.is_alive():
            tx.send(None)
            tx._thread.join(STEP_TIMEOUT)


def emit_in(ws: Workspace, type: str, entity_id: object = 1) -> Callable[[], Event]:
    return lambda: events.emit(
        workspace_id=ws.pk, type=type, entity_type="task", entity_id=entity_id, payload={}
    )


def head() -> int:
    """The newest position so far: the reader's starting cursor."""
    events.relay()
    positioned = Event.objects.filter(position__isnull=False).order_by("-position")
    newest = positioned.values_list("position", flat=True)[0]
    assert newest is not None
    return newest


class Reader:
    """Polls the log from a cursor, as a webhook relay or a stream client does."""

    def __init__(self, ws: Workspace) -> None:
        self.ws, self.cursor, self.seen = ws, head(), []  # type: ignore[var-annotated]

    def poll(self) -> list[str]:
        found = events.read(workspace_id=self.ws.pk, after=self.cursor, limit=100)
        if found:
            self.cursor = found[-1].position  # type: ignore[assignment]
        self.seen += [e.type for e in found]
        return [e.type for e in found]


def test_a_late_commit_with_the_earlier_insert_is_never_skipped(ws_a, open_transactions):
    reader = Reader(ws_a)
    first, second = open_transactions(), open_transactions()
    early = first.run(emit_in(ws_a, "first.inserted"))
    late = second.run(emit_in(ws_a, "second.inserted"))
    assert early.pk < late.pk
    assert reader.poll() == []
    second.commit()
    assert reader.poll() == ["second.inserted"]
    assert reader.poll() == []
    first.commit()
    assert reader.poll() == ["first.inserted"]
    assert reader.poll() == []
    everything = events.read(workspace_id=ws_a.pk, after=0, limit=100)
    assert [e.type for e in everything][-2:] == ["second.inserted", "first.inserted"]
    assert reader.seen == ["second.inserted", "first.inserted"]


def test_a_second_writer_in_the_workspace_does_not_wait_for_the_first(ws_a, alice, open_transactions):
    one = task_create(workspace=ws_a, title="One", by_user=alice).task
    two = task_create(workspace=ws_a, title="Two", by_user=alice).task
    reader = Reader(ws_a)
    first, second = open_transactions(), open_transactions()
    assert first.run(lambda: task_update(task=one, by_user=alice, title="One, edited"))
    # Before the relay, this write queued on the workspace's counter row until `first` committed.
    assert second.run(lambda: task_update(task=two, by_user=alice, title="Two, edited"), timeout=STEP_TIMEOUT)
    second.commit()
    first.commit()
    assert reader.poll() == ["task.updated", "task.updated"]
    ordered = events.read(workspace_id=ws_a.pk, after=0, limit=100)[-2:]
    assert [e.entity_id for e in ordered] == [str(two.pk), str(one.pk)]


def _bump(task_id: int, ws: Workspace) -> None:
    """One writer of the task: lock its row, count, and emit what it counted."""
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task_id)
        n = int(task.description or "0") + 1
        Task.objects.filter(pk=task_id).update(description=str(n))
        events.emit(
            workspace_id=ws.pk, type="task.updated", entity_type="task", entity_id=task_id, payload={"n": n}
        )


def test_one_entitys_events_keep_their_writers_commit_order(ws_a, alice):
    task = task_create(workspace=ws_a, title="Contended", by_user=alice).task
    Task.objects.filter(pk=task.pk).update(description="0")
    rounds = 10

    def writer(_: int) -> None:
        for _round in range(rounds):
            _bump(task.pk, ws_a)

    outcomes = race(list(range(8)), writer)
    assert outcomes == [None] * 8, outcomes
    assert not Event.objects.filter(position__isnull=True).exists()
    counted = [
        e.payload["n"]
        for e in events.read(workspace_id=ws_a.pk, after=0, limit=1000, entity_id=task.pk)
        if "n" in e.payload
    ]
    assert counted == list(range(1, 8 * rounds + 1))


def test_trim_removes_only_events_older_than_retention(ws_a, ws_b):
    with time_machine.travel(datetime(2026, 3, 1, tzinfo=UTC), tick=False) as clock:
        with transaction.atomic():
            old = [emit_in(ws_a, "old")(), emit_in(ws_b, "old")()]
        clock.shift(timedelta(days=6))
        with transaction.atomic():
            young = [emit_in(ws_a, "young")(), emit_in(ws_b, "young")()]
        earlier = Event.objects.exclude(pk__in=[e.pk for e in old + young])
        earlier.update(created_at=datetime(2026, 2, 1, tzinfo=UTC))
        held = {pk: position or 0 for pk, position in Event.objects.values_list("pk", "position")}
        assert (events.oldest_position(ws_a.pk) or 0) < held[old[0].pk]  # the workspaces' own first events
        clock.shift(timedelta(days=1, seconds=1))
        deleted = events.trim()
    assert set(Event.objects.values_list("pk", flat=True)) == {e.pk for e in young}
    assert deleted == len(held) - 2
    assert events.oldest_position(ws_a.pk) == held[young[0].pk]
    assert events.oldest_position(ws_b.pk) == held[young[1].pk]
    assert events.trimmed_through() == held[young[0].pk] - 1
