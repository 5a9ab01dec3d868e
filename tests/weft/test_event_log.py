"""The event log on the embedded default: emit, relay, read, envelope, trim."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.db import transaction

from weft import events
from weft.celery import EVENT_LOG_SCHEDULE, relay_events, trim_events
from weft.models import Event


def emit(ws: Any, type: str = "task.updated", entity_id: object = 1, **payload: Any) -> Event:
    return events.emit(
        workspace_id=ws.pk, type=type, entity_type="task", entity_id=entity_id, payload=payload
    )


def positions() -> list[int | None]:
    return list(Event.objects.order_by("id").values_list("position", flat=True))


@pytest.fixture
def empty_log(ws_a, ws_b) -> None:
    """Creating the workspaces emitted events; these tests start from an empty log."""
    Event.objects.all().delete()


def test_it_appends_without_a_position_until_the_relay_runs(empty_log, ws_a):
    event = emit(ws_a)
    assert Event.objects.get(pk=event.pk).position is None
    assert events.read(workspace_id=ws_a.pk, after=0, limit=10) == []
    assert [e.pk for e in events.relay()] == [event.pk]
    assert [e.pk for e in events.read(workspace_id=ws_a.pk, after=0, limit=10)] == [event.pk]


def test_it_positions_in_id_order_after_what_is_already_positioned(empty_log, ws_a, ws_b):
    emit(ws_a)
    (first,) = events.relay()
    later = [emit(ws_a), emit(ws_b), emit(ws_a)]
    relayed = events.relay()
    assert [e.pk for e in relayed] == [e.pk for e in later]
    assert first.position is not None
    assert [e.position for e in relayed] == [first.position + 1, first.position + 2, first.position + 3]
    assert events.relay() == []


def test_it_relays_in_bounded_batches(empty_log, ws_a):
    made = [emit(ws_a, entity_id=n) for n in range(5)]
    relayed = events.relay(batch=2)
    assert [e.pk for e in relayed] == [e.pk for e in made]
    assert positions() == sorted(positions())  # type: ignore[type-var]
    assert None not in positions()


def test_a_relay_hook_sees_each_batch_inside_the_relay_transaction(empty_log, ws_a):
    seen: list[tuple[list[int | None], bool]] = []

    def hook(batch: list[Event]) -> None:
        from django.db import connection

        seen.append(([e.position for e in batch], connection.in_atomic_block))

    emit(ws_a)
    emit(ws_a)
    events.register_relay_hook(hook)
    try:
        relayed = events.relay()
    finally:
        events.unregister_relay_hook(hook)
    assert seen == [([e.position for e in relayed], True)]


def test_a_failing_relay_hook_leaves_the_batch_unpositioned_for_the_next_relay(empty_log, ws_a):
    def hook(batch: list[Event]) -> None:
        raise RuntimeError("the delivery rows could not be written")

    event = emit(ws_a)
    events.register_relay_hook(hook)
    try:
        with pytest.raises(RuntimeError):
            events.relay()
    finally:
        events.unregister_relay_hook(hook)
    assert positions() == [None]
    assert [e.pk for e in events.relay()] == [event.pk]


def test_the_periodic_relay_positions_what_no_commit_relayed(empty_log, ws_a):
    emit(ws_a)
    emit(ws_a)
    assert relay_events.apply().get() == 2
    assert None not in positions()
    assert {"weft.events.relay", "weft.events.trim"} == {e["task"] for e in EVENT_LOG_SCHEDULE.values()}


@pytest.mark.django_db(transaction=True)
def test_the_commit_relays_and_fans_out_each_event_once_with_its_position(ws_a):
    seen: list[tuple[str, int | None]] = []

    def fanout(event: Event) -> None:
        seen.append((event.type, event.position))

    events.register_fanout(fanout)
    try:
        with transaction.atomic():
            emit(ws_a, "task.created")
            emit(ws_a, "task.updated")
            assert seen == []
        with pytest.raises(RuntimeError), transaction.atomic():
            emit(ws_a, "task.moved")
            raise RuntimeError("roll back")
    finally:
        events.unregister_fanout(fanout)
    tasks = Event.objects.filter(type__startswith="task.")
    held = {kind: position or 0 for kind, position in tasks.values_list("type", "position")}
    assert seen == [("task.created", held["task.created"]), ("task.updated", held["task.updated"])]
    assert held["task.created"] < held["task.updated"]
    assert not Event.objects.filter(type="task.moved").exists()
    assert not Event.objects.filter(position__isnull=True).exists()


def test_a_failing_fanout_fails_neither_the_relay_nor_the_other_consumers(
    empty_log, ws_a, django_capture_on_commit_callbacks
):
    seen: list[Event] = []

    def broken(event: Event) -> None:
        raise RuntimeError("consumer down")

    events.register_fanout(broken)
    events.register_fanout(seen.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            emit(ws_a)
    finally:
        events.unregister_fanout(broken)
        events.unregister_fanout(seen.append)
    assert [e.position for e in seen] == [Event.objects.get().position]


def test_read_filters_and_pages_by_position(empty_log, ws_a, ws_b):
    emit(ws_a, "task.created", entity_id=1)
    emit(ws_b, "task.created", entity_id=1)
    emit(ws_a, "run.started", entity_id=1)
    emit(ws_a, "task.updated", entity_id=2)
    events.relay()

    def types(**kwargs: Any) -> list[str]:
        return [e.type for e in events.read(workspace_id=ws_a.pk, **{"after": 0, "limit": 10, **kwargs})]

    assert types() == ["task.created", "run.started", "task.updated"]
    assert types(types=["task.created", "task.updated"]) == ["task.created", "task.updated"]
    assert types(entity_id=2) == ["task.updated"]
    assert types(entity_type="run") == []
    assert types(limit=2) == ["task.created", "run.started"]
    cursor = events.read(workspace_id=ws_a.pk, after=0, limit=1)[0].position
    assert cursor is not None
    assert types(after=cursor) == ["run.started", "task.updated"]
    assert [e.workspace_id for e in events.read(workspace_id=ws_b.pk, after=0, limit=10)] == [ws_b.pk]


def test_the_envelope_is_the_public_payload(empty_log, ws_a):
    with time_machine.travel(datetime(2026, 3, 1, 9, 30, 15, 250000, tzinfo=UTC), tick=False):
        emit(ws_a, "task.updated", entity_id=42, title="Write the docs")
    (event,) = events.relay()
    assert events.envelope(event) == {
        "id": str(event.position),
        "type": "task.updated",
        "workspace": ws_a.slug,
        "entity": {"type": "task", "id": "42"},
        "occurredAt": "2026-03-01T09:30:15.250Z",
        "data": {"title": "Write the docs"},
    }


def test_an_unpositioned_event_has_no_envelope(empty_log, ws_a):
    with pytest.raises(ValueError):
        events.envelope(emit(ws_a))


def test_trim_removes_only_events_older_than_retention(empty_log, ws_a, ws_b):
    start = datetime(2026, 3, 1, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        old = [emit(ws_a), emit(ws_b)]
        events.relay()
        clock.shift(timedelta(days=6))
        young = [emit(ws_a), emit(ws_b)]
        events.relay()
        assert events.oldest_position(ws_a.pk) == Event.objects.get(pk=old[0].pk).position
        assert events.trimmed_through() == Event.objects.get(pk=old[0].pk).position - 1  # type: ignore[operator]
        clock.shift(timedelta(days=1, seconds=1))
        assert trim_events.apply().get() == 2
    assert set(Event.objects.values_list("pk", flat=True)) == {e.pk for e in young}
    assert events.oldest_position(ws_a.pk) == Event.objects.get(pk=young[0].pk).position
    assert events.trimmed_through() == Event.objects.get(pk=young[0].pk).position - 1  # type: ignore[operator]


def test_trim_keeps_the_newest_event_so_the_trim_stays_known(empty_log, ws_a):
    with time_machine.travel(datetime(2026, 3, 1, tzinfo=UTC), tick=False) as clock:
        made = [emit(ws_a), emit(ws_a), emit(ws_a)]
        events.relay()
        clock.shift(timedelta(days=30))
        assert events.trim() == 2
    newest = Event.objects.get()
    assert newest.pk == made[-1].pk
    assert events.trimmed_through() == newest.position - 1  # type: ignore[operator]
    assert events.oldest_position(ws_a.pk) == newest.position


def test_trim_leaves_unpositioned_events_for_the_relay(empty_log, ws_a):
    with time_machine.travel(datetime(2026, 3, 1, tzinfo=UTC), tick=False) as clock:
        emit(ws_a)
        clock.shift(timedelta(days=30))
        assert events.trim() == 0
    assert positions() == [None]


def test_an_empty_log_has_nothing_trimmed(empty_log, ws_a):
    assert events.oldest_position(ws_a.pk) is None
    assert events.trimmed_through() == 0
    assert events.trim() == 0


def test_the_newest_position_is_the_highest_positioned_event_of_any_workspace(empty_log, ws_a, ws_b):
    assert events.newest_position() == 0
    emit(ws_a)
    emit(ws_b)
    relayed = events.relay()
    emit(ws_a)  # not positioned yet: a reader starting from now gets it once it is
    assert events.newest_position() == max(e.position or 0 for e in relayed) == relayed[-1].position
