"""Live push: each committed event becomes a small message to its workspace's Channels group.

This is the sending side; boards/fanout.py receives the message once per server process and
writes it to that workspace's sockets there.

The message names what changed, never its content; the page re-fetches what it shows
through the ordinary (access-checked) views. Channel layers deliver at most once, so a
page that reconnects re-fetches its whole state instead of trusting missed messages.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import weakref
from collections import deque
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

log = logging.getLogger(__name__)

MESSAGE_TYPE = "workspace.event"
# Each event loop's pushes wait in its outbox and one sender task sends them in order, one at a
# time: a burst of events (a relay batch, sixteen agents committing) never opens a channel-layer
# connection per push (redis' pool ran out at 16 agents) and a page gets them in position order.
_Send = tuple[Any, str, dict[str, Any], str]
_outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, deque[_Send]] = weakref.WeakKeyDictionary()
# The senders, kept referenced until they finish.
_pending: set[asyncio.Task[None]] = set()
# At most this many pushes to one workspace travel as one channel-layer message.
BATCH = 50
# After a push times out, every push to that channel layer is dropped at once for this long: a
# frozen Redis then costs one push the timeout, not every push (bench/faults, redis_freeze).
PAUSE_SECONDS = 5.0
_paused_until: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


def workspace_group(workspace_id: int) -> str:
    return f"workspace.{workspace_id}"


def event_message(event: Any) -> dict[str, Any]:
    # A process hears every workspace it has sockets for on one channel (boards/fanout.py): the
    # message names its workspace, and only that workspace's sockets get it.
    return {
        "type": MESSAGE_TYPE,
        "workspace": event.workspace_id,
        "position": event.position,
        "event": event.type,
        "entity_type": event.entity_type,
        "entity_id": str(event.entity_id),
    }


def batched(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One channel-layer message for a workspace's pushes in a row: the message itself when alone."""
    if len(messages) == 1:
        return messages[0]
    first = messages[0]
    events = [{k: v for k, v in m.items() if k not in ("type", "workspace")} for m in messages]
    return {"type": first["type"], "workspace": first["workspace"], "events": events}


def unbatched(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The single-event messages a channel-layer message carries, in order."""
    if "events" not in message:
        return [message]
    shared = {"type": message["type"], "workspace": message["workspace"]}
    return [{**shared, **event} for event in message["events"]]


async def _send_bounded(layer: Any, group: str, message: dict[str, Any], label: str) -> None:
    """One send, given up after WEFT_PUSH_TIMEOUT_SECONDS; a failed or late push is dropped, not retried."""
    timeout = settings.WEFT_PUSH_TIMEOUT_SECONDS
    try:
        await asyncio.wait_for(layer.group_send(group, message), timeout)
    except TimeoutError:
        _paused_until[layer] = time.monotonic() + PAUSE_SECONDS
        log.warning(
            "push of event %s dropped: the channel layer did not answer within %ss; pushes paused for %ss",
            label,
            timeout,
            PAUSE_SECONDS,
        )
    except Exception:
        log.exception("push of event %s failed and was dropped", label)


def push_event(event: Any) -> None:
    """Fan-out hook for weft.events: runs after commit; a failed push never fails or slows the write.

    In the server the send is handed to its event loop and the write's request does not wait
    for it; only code with no running loop to hand it to waits, at most the push timeout.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    group, message = workspace_group(event.workspace_id), event_message(event)
    label = f"{event.workspace_id}#{event.position}"
    if time.monotonic() < _paused_until.get(layer, 0.0):
        log.info("push of event %s dropped: pushes are paused after a channel layer timeout", label)
        return
    try:
        loop, own = _server_loop()
        if loop is None:
            # No event loop to hand the send to (a worker, a command): wait, bounded by the timeout.
            async_to_sync(_send_bounded)(layer, group, message, label)
        elif own:
            # Committed from code running inside the event loop's own thread: send without blocking it.
            _start_send(layer, group, message, label)
        else:
            # Committed in a request's worker thread: the server's loop sends; the request goes on.
            loop.call_soon_threadsafe(_start_send, layer, group, message, label)
    except Exception:
        log.exception("push of event %s failed and was dropped", label)


def _server_loop() -> tuple[asyncio.AbstractEventLoop | None, bool]:
    """The event loop to send on, and whether it is this thread's own; (None, False) when none runs."""
    try:
        return asyncio.get_running_loop(), True
    except RuntimeError:
        pass
    # A sync view or tool runs in asgiref's thread pool, which records the loop that called it.
    local = SyncToAsync.threadlocal
    loop = getattr(local, "main_event_loop", None)
    if loop is None or getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None, False
    if loop.is_closed() or not loop.is_running():
        return None, False
    return loop, False


def _start_send(layer: Any, group: str, message: dict[str, Any], label: str) -> None:
    """Queue one send on the running loop's outbox, starting its sender when none runs."""
    loop = asyncio.get_running_loop()
    outbox = _outboxes.get(loop)
    if outbox is not None:
        outbox.append((layer, group, message, label))
        return
    outbox = _outboxes[loop] = deque([(layer, group, message, label)])
    task = loop.create_task(_drain(loop, outbox))
    _pending.add(task)
    task.add_done_callback(_pending.discard)


async def _drain(loop: asyncio.AbstractEventLoop, outbox: deque[_Send]) -> None:
    """Send the outbox's pushes one after another, then stop (the next push starts a new sender).

    Pushes to one workspace waiting in a row go as one message (`events`, in position order): a
    relay batch of sixteen agents' commits costs the channel layer one send, not sixteen."""
    try:
        while outbox:
            layer, group, message, label = outbox.popleft()
            messages = [message]
            while outbox and len(messages) < BATCH and outbox[0][0] is layer and outbox[0][1] == group:
                messages.append(outbox.popleft()[2])
            if len(messages) > 1:
                label = f"{label} and {len(messages) - 1} more"
            if time.monotonic() < _paused_until.get(layer, 0.0):
                log.info("push of event %s dropped: pushes are paused after a channel layer timeout", label)
                continue
            await _send_bounded(layer, group, batched(messages), label)
    finally:
        # Only the loop's thread touches the outbox: nothing was queued since the last look.
        if _outboxes.get(loop) is outbox:
            del _outboxes[loop]
