"""Live push: each committed event becomes a small message to its workspace's Channels group.

The message names what changed, never its content; the page re-fetches what it shows
through the ordinary (access-checked) views. Channel layers deliver at most once, so a
page that reconnects re-fetches its whole state instead of trusting missed messages.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)

MESSAGE_TYPE = "workspace.event"
# Sends scheduled on a running loop, kept referenced until they finish.
_pending: set[asyncio.Task[None]] = set()


def workspace_group(workspace_id: int) -> str:
    return f"workspace.{workspace_id}"


def event_message(event: Any) -> dict[str, Any]:
    return {
        "type": MESSAGE_TYPE,
        "seq": event.seq,
        "event": event.type,
        "entity_type": event.entity_type,
        "entity_id": str(event.entity_id),
    }


def push_event(event: Any) -> None:
    """Fan-out hook for weft.events: runs after commit; a failed push never fails the write."""
    layer = get_channel_layer()
    if layer is None:
        return
    group, message = workspace_group(event.workspace_id), event_message(event)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    try:
        if loop is None:
            async_to_sync(layer.group_send)(group, message)
        else:
            # Committed from code running inside an event loop's own thread: send without blocking it.
            task = loop.create_task(layer.group_send(group, message))
            _pending.add(task)
            task.add_done_callback(_pending.discard)
    except Exception:
        log.exception("push of event %s#%s failed", event.workspace_id, event.seq)
