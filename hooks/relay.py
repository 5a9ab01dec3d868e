"""The link between the event log's relay and webhook deliveries.

The relay positions committed events in commit order and calls its hooks with each batch inside
its own transaction (weft.events.register_relay_hook); `on_events` turns them into deliveries
there, so an event is positioned if and only if its deliveries exist. A hook that raised would
roll the batch back, so this one only writes rows and never touches the network.
"""

from __future__ import annotations

from weft import events as log
from weft.models import Event


def on_events(events: list[Event]) -> None:
    """Relay hook: the deliveries of freshly positioned events (in the relay's transaction)."""
    from hooks.delivery import deliveries_create

    if events:
        deliveries_create(events, [log.envelope(event) for event in events])


def connect() -> None:
    log.register_relay_hook(on_events)
