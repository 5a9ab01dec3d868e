"""The link between the event log's relay and webhook deliveries.

The relay positions committed events in commit order and calls its hooks with each batch inside
its own transaction (weft.events.register_relay_hook); `on_events` turns them into deliveries
there, so an event is positioned if and only if its deliveries exist. A hook that raised would
roll the batch back, so this one only writes rows and never touches the network.
"""

from __future__ import annotations

from hooks.models import Subscription
from weft import events as log
from weft.models import Event


def on_events(events: list[Event]) -> None:
    """Relay hook: the deliveries of freshly positioned events (in the relay's transaction)."""
    from hooks.delivery import deliveries_create

    if events:
        deliveries_create(events, [log.envelope(event) for event in events])


def acts_on() -> str:
    """The events this hook may act on, for the loop's relay: those of a workspace with an active
    subscription (whether its filter matches is left to `deliveries_create`)."""
    table = Subscription._meta.db_table
    return (
        f"EXISTS (SELECT 1 FROM {table} s WHERE s.workspace_id = e.workspace_id "  # noqa: S608 (names from the model)
        f"AND s.state = '{Subscription.ACTIVE}')"
    )


def connect() -> None:
    log.register_relay_hook(on_events, acts_on=acts_on)
