"""One poller per process feeds every open stream; an idle client holds no database connection.

The poller (`Hub`) runs while any client is connected. Once per tick it reads, in one worker
thread that closes its database connection afterwards, the new events of every workspace that
has clients (`weft.events.read` after the hub's cursor for that workspace), renders each event
once as an SSE frame and appends it to the in-memory queue of every client whose filter it
matches. A client's queue is bounded: one that falls `limit` events behind is marked overflowed,
and the surface ends its stream so that it resumes from the log with Last-Event-ID.

Joining without loss or duplicates: a client joins the hub first and only then reads its
catch-up from the log. Every event the poller handed out before the join was positioned before
the catch-up read began, and positions are given in commit order (an event never appears below
a position a reader has already passed), so the catch-up sees it; every event the poller reads
after the join reaches the client's queue. The two overlap, and the client drops any event at or
below the last position it sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from weft import events
from weft.models import Event
from weft.stream.request import StreamFilter

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5
QUEUE_LIMIT = 1000
# Events per read; a catch-up or a poll that gets a full page reads on.
PAGE = 500
# Pages one poll reads per workspace; the rest waits for the next tick.
POLL_PAGES = 4


def poll_seconds() -> float:
    return float(getattr(settings, "WEFT_STREAM_POLL_SECONDS", POLL_SECONDS))


def queue_limit() -> int:
    return int(getattr(settings, "WEFT_STREAM_QUEUE_LIMIT", QUEUE_LIMIT))


@dataclass(frozen=True)
class Item:
    """One positioned event, rendered once as its SSE frame for every client that gets it."""

    position: int
    type: str
    entity_type: str
    entity_id: str
    frame: bytes

    def matches(self, wanted: StreamFilter) -> bool:
        return wanted.matches(type=self.type, entity_type=self.entity_type, entity_id=self.entity_id)


def frame(*, id: int, event: str, data: object) -> bytes:
    """An SSE event: `id:`, `event:` and one `data:` line of compact JSON (which has no newline)."""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"id: {id}\nevent: {event}\ndata: {body}\n\n".encode()


def _item(event: Event) -> Item:
    assert event.position is not None
    envelope = events.envelope(event)
    return Item(
        position=event.position,
        type=event.type,
        entity_type=event.entity_type,
        entity_id=event.entity_id,
        frame=frame(id=event.position, event=event.type, data=envelope),
    )


def _read(workspace_id: int, after: int, wanted: StreamFilter | None = None) -> list[Item]:
    arguments = wanted.read_arguments() if wanted is not None else {}
    page = events.read(workspace_id=workspace_id, after=after, limit=PAGE, **arguments)
    return [_item(event) for event in page]


def read_new(cursors: dict[int, int]) -> dict[int, list[Item]]:
    """The poller's read, in a worker thread: every workspace's events after its cursor."""
    try:
        fresh: dict[int, list[Item]] = {}
        for workspace_id, after in cursors.items():
            items: list[Item] = []
            for _ in range(POLL_PAGES):
                page = _read(workspace_id, items[-1].position if items else after)
                items += page
                if len(page) < PAGE:
                    break
            fresh[workspace_id] = items
        return fresh
    finally:
        connection.close()


def catch_up_page(workspace_id: int, after: int, wanted: StreamFilter) -> tuple[list[Item], int]:
    """One page of a client's catch-up and the log's trim mark, read in that order (a worker thread).

    Read after the page, the mark is at least what it was when the page was read, so an event
    trimmed meanwhile is reported as a gap rather than missed in silence.
    """
    try:
        page = _read(workspace_id, after, wanted)
        return page, events.trimmed_through()
    finally:
        connection.close()


class Subscriber:
    """One open stream's queue: the hub appends matching items, the stream takes them in batches."""

    def __init__(self, workspace_id: int, wanted: StreamFilter, limit: int) -> None:
        self.workspace_id = workspace_id
        self.wanted = wanted
        self.limit = limit
        self.overflowed = False
        self.gone = False
        self._pending: list[Item] = []
        self._ready = asyncio.Event()

    def offer(self, items: list[Item]) -> None:
        if self.overflowed or self.gone:
            return
        matching = [item for item in items if item.matches(self.wanted)]
        if not matching:
            return
        if len(self._pending) + len(matching) > self.limit:
            self.overflowed = True
            self._pending = []
        else:
            self._pending += matching
        self._ready.set()

    def close(self) -> None:
        """The client went away: wake its stream so that it ends."""
        self.gone = True
        self._ready.set()

    async def take(self, timeout: float) -> list[Item]:
        """The items queued so far, waiting up to `timeout` seconds for the first one."""
        if not (self._pending or self.overflowed or self.gone):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), timeout)
        self._ready.clear()
        taken, self._pending = self._pending, []
        return taken


class Hub:
    """The clients of one event loop by workspace, and the poller that feeds them."""

    def __init__(self) -> None:
        self.subscribers: dict[int, set[Subscriber]] = {}
        # Per workspace: every event at or below it has been handed to its subscribers.
        self.cursors: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None

    def join(self, subscriber: Subscriber, *, head: int) -> None:
        """Add a client; `head` (the newest position, read before) starts a workspace new to the hub."""
        self.subscribers.setdefault(subscriber.workspace_id, set()).add(subscriber)
        self.cursors.setdefault(subscriber.workspace_id, head)
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="weft-stream-poller")

    def leave(self, subscriber: Subscriber) -> None:
        subscribers = self.subscribers.get(subscriber.workspace_id)
        if subscribers is None:
            return
        subscribers.discard(subscriber)
        if not subscribers:
            del self.subscribers[subscriber.workspace_id]
            del self.cursors[subscriber.workspace_id]

    def client_count(self) -> int:
        return sum(len(subscribers) for subscribers in self.subscribers.values())

    async def _run(self) -> None:
        try:
            while self.subscribers:
                await asyncio.sleep(poll_seconds())
                if self.subscribers:
                    await self.poll()
        finally:
            self._task = None

    async def poll(self) -> None:
        """One tick: read what is new for every workspace with clients and hand it out."""
        try:
            fresh = await sync_to_async(read_new, thread_sensitive=False)(dict(self.cursors))
        except Exception:
            # A lost database: the clients stay connected and the next tick reads on.
            log.warning("event stream poll failed; retrying next tick", exc_info=True)
            return
        for workspace_id, items in fresh.items():
            if not items or workspace_id not in self.cursors:
                continue
            # A workspace that emptied and filled again meanwhile may have started above this read.
            self.cursors[workspace_id] = max(self.cursors[workspace_id], items[-1].position)
            for subscriber in list(self.subscribers.get(workspace_id, ())):
                subscriber.offer(items)


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


def current_hub() -> Hub:
    """The hub of the running event loop (one per server process; a test may start several loops)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub()
    return hub
