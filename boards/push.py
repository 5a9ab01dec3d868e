"""Live push: each committed event becomes a small message to its workspace's Channels group.

The message names what changed, never its content; the page re-fetches what it shows
through the ordinary (access-checked) views. Channel layers deliver at most once, so a
page that reconnects re-fetches its whole state instead of trusting missed messages.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)

MESSAGE_TYPE = "workspace.event"


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
    try:
        async_to_sync(layer.group_send)(workspace_group(event.workspace_id), event_message(event))
    except Exception:
        log.exception("push of event %s#%s failed", event.workspace_id, event.seq)
