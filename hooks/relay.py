"""The link between the event log's relay and webhook deliveries.

The relay positions committed events in commit order and calls its hooks with them inside
its own transaction (weft.events.register_relay_hook); `on_events` turns them into deliveries
there, so an event is positioned if and only if its deliveries exist. A log that positions
events at insert and has no relay hands committed events to its fan-outs instead: there the
deliveries are created in their own transaction right after the write commits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC
from typing import Any

from django.db import transaction

from weft import events as log


def _envelope(event: Any) -> dict[str, Any]:
    """The public payload of an event: `weft.events.envelope` where the log defines it."""
    envelope: Callable[[Any], dict[str, Any]] | None = getattr(log, "envelope", None)
    if envelope is not None:
        return envelope(event)
    occurred = event.created_at.astimezone(UTC).isoformat(timespec="milliseconds")
    return {
        "id": str(event.seq),
        "type": event.type,
        "workspace": event.workspace.slug,
        "entity": {"type": event.entity_type, "id": str(event.entity_id)},
        "occurredAt": occurred.replace("+00:00", "Z"),
        "data": event.payload,
    }


def on_events(events: Sequence[Any]) -> None:
    """Relay hook: the deliveries of freshly positioned events (in the relay's transaction)."""
    from hooks.delivery import deliveries_create

    if events:
        deliveries_create(events, [_envelope(event) for event in events])


def after_commit(event: Any) -> None:
    with transaction.atomic():
        on_events([event])


def connect() -> None:
    register: Callable[[Callable[..., Any]], None] | None = getattr(log, "register_relay_hook", None)
    if register is not None:
        register(on_events)
    else:
        log.register_fanout(after_commit)
