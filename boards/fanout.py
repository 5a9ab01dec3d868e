"""Live push, the receiving side: one channel-layer channel per server event loop for all its sockets.

A workspace page's socket does not get a channel of its own. The process joins the group of each
workspace it has sockets for with one channel, receives each workspace message once, turns it into
one JSON frame and writes that frame to every local socket of that workspace. An event then costs
the process one channel-layer message and one receive, not one per socket (at 200 sockets the
per-socket receives and dispatches were most of a push's latency; docs/performance.md).

At most once, as before: a channel layer that fails closes this process's sockets, and their
pages reconnect and re-fetch what they show.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from typing import Any, Protocol

from channels.layers import get_channel_layer
from django.conf import settings

from boards.push import MESSAGE_TYPE, unbatched, workspace_group

log = logging.getLogger(__name__)

# The Redis layer forgets a group member after a day without a group_add: the process renews its
# groups this often, so a page open for days still hears its workspace.
RENEW_SECONDS = 3600.0
# The close code a socket gets when the channel layer failed: its page reconnects and re-fetches.
LAYER_FAILED = 1011
FRAME_KEYS = ("position", "event", "entity_type", "entity_id")


class Socket(Protocol):
    async def send_frame(self, text: str) -> None: ...

    async def close_for_layer(self) -> None: ...


def event_frame(message: dict[str, Any]) -> str:
    """The JSON a page gets for one workspace message: what changed, never its content."""
    return json.dumps({"type": "event", **{key: message[key] for key in FRAME_KEYS}})


class Fanout:
    """One event loop's sockets by workspace, and the one channel that hears their workspaces."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel: str | None = None
        self.sockets: dict[int, set[Socket]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        # Joins and leaves take turns: a group is added before its first socket counts, and
        # discarded only after its last one left.
        self._lock = asyncio.Lock()
        # Writes to a socket that did not finish at once, kept referenced until they do.
        self._writes: set[asyncio.Task[None]] = set()

    async def join(self, workspace_id: int, socket: Socket) -> None:
        async with self._lock:
            if self.channel is None:
                self.channel = await self.layer.new_channel()
                loop = asyncio.get_running_loop()
                self._tasks = [
                    loop.create_task(self._receive(self.channel)),
                    loop.create_task(self._renew(self.channel)),
                ]
            if workspace_id not in self.sockets:
                try:
                    await self.layer.group_add(workspace_group(workspace_id), self.channel)
                except BaseException:
                    if not self.sockets:
                        self._stop()
                    raise
                self.sockets[workspace_id] = set()
            self.sockets[workspace_id].add(socket)

    async def leave(self, workspace_id: int, socket: Socket) -> None:
        async with self._lock:
            members = self.sockets.get(workspace_id)
            if members is None or socket not in members:
                return
            members.discard(socket)
            if members:
                return
            del self.sockets[workspace_id]
            channel = self.channel
            if not self.sockets:
                self._stop()
            # Bounded, so a frozen Redis holds no later join up behind the lock. A member left behind
            # is harmless: its messages name a workspace with no socket here, and it expires.
            try:
                await asyncio.wait_for(
                    self.layer.group_discard(workspace_group(workspace_id), channel),
                    settings.WEFT_PUSH_TIMEOUT_SECONDS,
                )
            except Exception:
                log.exception("live push: leaving the group of workspace %s failed", workspace_id)

    def deliver(self, message: dict[str, Any]) -> None:
        """Write one workspace message to that workspace's sockets here, and to no other."""
        if message.get("type") != MESSAGE_TYPE:
            log.warning("live push: ignored a message of type %r", message.get("type"))
            return
        workspace = message.get("workspace")
        members = self.sockets.get(workspace) if isinstance(workspace, int) else None
        if not members:
            return
        for one in unbatched(message):
            self._write(members, event_frame(one))

    def _write(self, members: set[Socket], frame: str) -> None:
        loop = asyncio.get_running_loop()
        for socket in list(members):
            # Each write runs at once and, with uvicorn, finishes at once; one that has to wait
            # (a server that awaits a slow client) goes on alone and holds no other socket up.
            write = asyncio.Task(socket.send_frame(frame), loop=loop, eager_start=True)
            if not write.done():
                self._writes.add(write)
                write.add_done_callback(self._writes.discard)

    async def _receive(self, channel: str) -> None:
        while True:
            try:
                message = await self.layer.receive(channel)
            except Exception:
                log.exception("live push: the channel layer failed; closing this process's sockets")
                await self._fail(channel)
                return
            try:
                self.deliver(message)
            except Exception:
                log.exception("live push: a message could not be delivered")

    async def _fail(self, channel: str) -> None:
        """Forget every socket and group and close the sockets: their pages reconnect and re-fetch."""
        async with self._lock:
            if self.channel != channel:
                return
            sockets = [socket for members in self.sockets.values() for socket in members]
            self.sockets = {}
            self._stop()
        for socket in sockets:
            with contextlib.suppress(Exception):
                await socket.close_for_layer()

    async def _renew(self, channel: str) -> None:
        # Without the lock, so a slow layer holds no join up. A renewal that crosses a workspace's
        # last leave adds the channel back to a group nobody here reads: its messages are dropped
        # (no socket for them) and the member expires after a day.
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            for workspace_id in list(self.sockets):
                try:
                    await self.layer.group_add(workspace_group(workspace_id), channel)
                except Exception:
                    log.exception("live push: renewing the group of workspace %s failed", workspace_id)

    def _stop(self) -> None:
        """No socket is left (or the layer failed): drop the channel and stop its tasks."""
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()
        self._tasks = []
        self.channel = None


_fanouts: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Fanout] = weakref.WeakKeyDictionary()


def local_fanout() -> Fanout | None:
    """This event loop's fan-out for the configured channel layer; None when there is no layer."""
    layer = get_channel_layer()
    if layer is None:
        return None
    loop = asyncio.get_running_loop()
    fanout = _fanouts.get(loop)
    if fanout is None or fanout.layer is not layer:
        # A new layer (settings changed) gets a new fan-out; the old one keeps its sockets until they leave.
        fanout = _fanouts[loop] = Fanout(layer)
    return fanout
