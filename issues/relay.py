"""The link between the event log's relay and the issues: an accepted task resolves its issue.

boards/ knows nothing of issues. The relay calls `on_events` with each freshly positioned batch
inside its own transaction (weft.events.register_relay_hook), so the resolution commits with the
positions: right after the Inbox accept commits (the relay that runs on commit), or at the
periodic relay's next pass if that one did not run. Each resolution runs in a savepoint and a
failure is logged, never raised: a raising hook would roll the batch back and hold every later
event of every workspace unpositioned.
"""

from __future__ import annotations

import logging

from django.db import transaction

from boards.models import Decision
from weft import events as log
from weft.models import Event

logger = logging.getLogger(__name__)
DECIDED = "inbox.item_decided"


def on_events(events: list[Event]) -> None:
    """Relay hook: resolve the issues whose task an Inbox accept took (in the relay's transaction)."""
    from issues.services.tasks import issues_resolve_for_accept

    for event in events:
        if event.type != DECIDED or event.payload.get("decision") != Decision.ACCEPT:
            continue
        try:
            with transaction.atomic():
                issues_resolve_for_accept(
                    workspace_id=event.workspace_id,
                    item_id=event.payload.get("itemId"),
                    task_id=event.payload.get("taskId"),
                )
        except Exception:
            logger.exception("resolving the issues of accepted task %s failed", event.payload.get("taskId"))


def acts_on() -> str:
    """The events this hook acts on, for the loop's relay: an Inbox accept."""
    return f"(e.type = '{DECIDED}' AND e.payload ->> 'decision' = '{Decision.ACCEPT}')"


def connect() -> None:
    log.register_relay_hook(on_events, acts_on=acts_on)
