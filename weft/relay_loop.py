"""The event loop's relay: the events the loop's own statements committed, positioned in the loop.

The one-statement claim and completion (boards.services.fast, fast_next) commit their event
rows on the loop's pool (weft.apool) and call `relay_soon()`. It positions them by the protocol
of weft.events, on a pooled connection and without a thread, while the answer goes out:

1. `BEGIN; SELECT pg_try_advisory_xact_lock(RELAY_LOCK)` (one round trip). Taken: stop; the holder
   looks again after its commit.
2. A new statement, so a snapshot taken after the lock: the batch in id order takes its
   positions and is read back with, for each event, whether a relay hook would act on it (the
   hooks' `acts_on` conditions, weft.events). If one would, the transaction rolls back, and the
   rest goes to `events.relay()` in a worker thread, where the hooks write their rows in the
   relay's transaction as always.
3. `COMMIT; SELECT EXISTS (an unpositioned event)` (one round trip), the fan-out in the loop,
   and again while events wait: at once after a full batch; after a short one (the events came
   in meanwhile), as the pump's next run, RELAY_SOON_DELAY later, with what comes in until then.

A relay starts RELAY_SOON_DELAY (20 ms) after the first call; calls made while it waits share
it, calls made while it runs share one more run after it: a busy server relays tens of times a
second, not once per write. A relay that fails is logged and leaves its events unpositioned for
the next one or the periodic relay (never lost). On SQLite, or with the pool off, it is
`events.relay()` in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from functools import cache
from typing import Any

import psycopg
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from psycopg.types.string import TextLoader

from accounts.models import Workspace
from weft import apool, events
from weft.models import Event

log = logging.getLogger(__name__)

# How long a relay waits before it runs: its events get their positions this much later, and a
# busy server relays tens of times a second, not once per write.
RELAY_SOON_DELAY = 0.02

_LOCK = f"BEGIN; SELECT pg_try_advisory_xact_lock({events.RELAY_LOCK})"
_COMMIT_AND_LOOK = f"COMMIT; SELECT EXISTS (SELECT 1 FROM {events.EVENT_TABLE} WHERE position IS NULL)"  # noqa: S608


@cache
def _position_sql(acts: str) -> str:
    """Step 2: the batch positioned and read back; each row's first column says whether a hook
    acts on its event (then the caller rolls the batch back)."""
    table = events.EVENT_TABLE
    return (
        f"WITH batch AS (SELECT e.id, nextval('{events.SEQUENCE}') AS position, ({acts}) AS acts "  # noqa: S608
        f"FROM {table} e WHERE e.position IS NULL ORDER BY e.id LIMIT %(batch)s), "
        f"moved AS (UPDATE {table} e SET position = batch.position FROM batch WHERE e.id = batch.id "
        f"RETURNING {events.columns_of(Event, 'e')}) "
        f"SELECT batch.acts, {events.columns_of(Event, 'moved')}, {events.columns_of(Workspace, 'w')} "
        f"FROM moved JOIN batch ON batch.id = moved.id JOIN {Workspace._meta.db_table} w "
        "ON w.id = moved.workspace_id ORDER BY moved.position"
    )


class HooksAct(Exception):
    """A relay hook acts on the batch: `events.relay()` positions it, in a worker thread."""


async def relay_in_loop(
    *, batch: int = events.RELAY_BATCH, later: Callable[[], None] | None = None
) -> list[Event]:
    """Position every committed, unpositioned event on the loop's pool; returns them in position
    order. Raises HooksAct when a hook would act on a batch (what it positioned before stays).
    `later`: events committed while a batch short of `batch` was relayed are left to a later
    relay, which `later()` schedules, instead of relaid at once (a busy loop then relays once a
    RELAY_SOON_DELAY, not after every commit)."""
    conditions = events.relay_hook_conditions()
    if conditions is None:
        raise HooksAct
    statement = apool.positional(_position_sql(" OR ".join(f"({c})" for c in conditions) or "false"))
    positioned: list[Event] = []
    async with apool.connection() as conn, psycopg.AsyncRawCursor(conn) as cursor:
        # Django's JSONField reads its text, as it does on Django's own connections.
        cursor.adapters.register_loader("jsonb", TextLoader)
        while True:
            if not await _scalar(cursor, _LOCK):
                return positioned  # the holder looks again after its commit
            await cursor.execute(statement.text, [batch])
            rows = await cursor.fetchall()
            if any(row[0] for row in rows):
                raise HooksAct  # apool.connection() rolls the batch back
            moved = events.events_from_rows(row[1:] for row in rows)
            waiting = await _scalar(cursor, _COMMIT_AND_LOOK)
            events.fan_out(moved)
            positioned += moved
            if waiting and later is not None and len(rows) < batch:
                later()
                return positioned
            if not waiting:
                return positioned


async def _scalar(cursor: psycopg.AsyncRawCursor[Any], sql: str) -> Any:
    """The value of the last statement of a two-statement simple query (`BEGIN; SELECT …`)."""
    await cursor.execute(sql)
    cursor.nextset()
    row = await cursor.fetchone()
    assert row is not None
    return row[0]


class _Pump:
    """One event loop's relays: the one running, and whether it must run once more."""

    task: asyncio.Task[None] | None = None
    again: bool = False


_pumps: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pump] = weakref.WeakKeyDictionary()


def relay_soon() -> None:
    """From the event loop, after a commit that inserted events: relay them without the caller
    waiting; while a relay runs, one more follows it (see above)."""
    loop = asyncio.get_running_loop()
    pump = _pumps.setdefault(loop, _Pump())
    if pump.task is not None:
        pump.again = True
        return
    pump.task = loop.create_task(_pump_relays(pump))


async def settled() -> None:
    """Returns once no relay runs or waits to run in the running loop (tests wait on it)."""
    pump = _pumps.get(asyncio.get_running_loop())
    while pump is not None and pump.task is not None:
        await asyncio.wait([pump.task])


async def _pump_relays(pump: _Pump) -> None:
    try:
        while True:
            # A moment first: the writes of the next few milliseconds share this relay (one
            # batch, one transaction, one push) instead of each paying for one.
            await asyncio.sleep(RELAY_SOON_DELAY)
            pump.again = False
            try:
                await _relay()
            except Exception:
                # The writes have committed; the next relay, or the periodic one, positions them.
                log.exception("relay from the event loop failed; a later relay will position the events")
            if not pump.again:
                return
    finally:
        pump.task = None


async def _relay() -> None:
    if apool.enabled():
        # The pump's relay leaves events committed meanwhile to the pump's next run.
        pump = _pumps.get(asyncio.get_running_loop())
        pumping = pump is not None and pump.task is asyncio.current_task()
        try:
            await relay_in_loop(later=(lambda: setattr(pump, "again", True)) if pumping else None)
            return
        except HooksAct:
            pass
    await sync_to_async(_relay_in_thread, thread_sensitive=False)()


def _relay_in_thread() -> None:
    close_old_connections()
    try:
        events.relay_after_commit()
    finally:
        close_old_connections()
