"""The event log: every write appends one event per change, in the writer's own transaction.

The per-workspace sequence comes from a row-locked counter (`EventSequence`): the increment is
one `UPDATE ... SET last_seq = last_seq + 1 ... RETURNING`, so concurrent writers in one
workspace queue on that row and the log has no gaps or duplicates; a rolled-back writer leaves
neither its event nor its number behind. Fan-out (web socket pushes, webhooks) runs only after
commit, and a failing consumer never fails the write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from django.db import connection, transaction

from weft.models import Event, EventSequence

log = logging.getLogger(__name__)

Fanout = Callable[[Event], None]
_fanouts: list[Fanout] = []


def register_fanout(fn: Fanout) -> None:
    """Call `fn(event)` after commit for every event (registering twice is harmless)."""
    if fn not in _fanouts:
        _fanouts.append(fn)


def unregister_fanout(fn: Fanout) -> None:
    if fn in _fanouts:
        _fanouts.remove(fn)


def _next_seq(workspace_id: int) -> int:
    table = connection.ops.quote_name(EventSequence._meta.db_table)
    sql = f"UPDATE {table} SET last_seq = last_seq + 1 WHERE workspace_id = %s RETURNING last_seq"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, [workspace_id])
        row = cursor.fetchone()
        if row is None:
            # First event of the workspace: create the counter (a racing creator is harmless).
            EventSequence.objects.bulk_create(
                [EventSequence(workspace_id=workspace_id, last_seq=0)], ignore_conflicts=True
            )
            cursor.execute(sql, [workspace_id])
            row = cursor.fetchone()
    assert row is not None
    return int(row[0])


def emit(
    *,
    workspace_id: int,
    type: str,
    entity_type: str,
    entity_id: object,
    payload: Mapping[str, Any],
    epoch: int | None = None,
) -> Event:
    """Append one event to the workspace's log; must run inside the writer's transaction."""
    if not connection.in_atomic_block:
        raise RuntimeError("emit() must run inside the writer's transaction")
    event = Event.objects.create(
        workspace_id=workspace_id,
        seq=_next_seq(workspace_id),
        type=type,
        entity_type=entity_type,
        entity_id=str(entity_id),
        payload=dict(payload),
        epoch=epoch,
    )
    transaction.on_commit(lambda: _fan_out(event))
    return event


def _fan_out(event: Event) -> None:
    for fn in list(_fanouts):
        try:
            fn(event)
        except Exception:
            log.exception("event fan-out %r failed for %s", fn, event)
