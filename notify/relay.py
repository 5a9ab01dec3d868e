"""The link between the event log's relay and push messages.

Inside the relay's transaction (weft.events.register_relay_hook), each inbox.item_created
becomes one pending PushMessage per device of each person with a seat in the workspace who has
push on. Rows only, never the network: notify.push sends them, off the request and the relay.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse

from accounts.models import Seat
from boards.models import InboxItem
from notify.models import NotifySettings, PushMessage, PushSubscription
from notify.rules import message_text
from weft import events as log
from weft.models import Event

CREATED = "inbox.item_created"


def on_events(events: list[Event]) -> None:
    """Relay hook: the push messages of freshly positioned Inbox items."""
    created = [e for e in events if e.type == CREATED]
    if not created or not settings.WEFT_VAPID_PRIVATE_KEY:
        return  # push is off on this server: nothing would send them
    ids = [int(e.entity_id) for e in created]
    items = InboxItem.objects.select_related("task", "question", "workspace").in_bulk(ids)
    rows = []
    for item_id in ids:
        item = items.get(item_id)
        if item is not None:
            rows.extend(_messages(item))
    PushMessage.objects.bulk_create(rows, ignore_conflicts=True)


def _messages(item: InboxItem) -> list[PushMessage]:
    people = Seat.objects.filter(workspace_id=item.workspace_id).values("user_id")
    push_off = NotifySettings.objects.filter(user_id=OuterRef("user_id"), push=False)
    devices = PushSubscription.objects.filter(Q(user_id__in=people) & ~Q(Exists(push_off)))
    title, body = message_text(
        kind=item.kind,
        task_title=item.task.title,
        question=item.question.text if item.question is not None else None,
        workspace=item.workspace.name,
    )
    url = reverse("boards:inbox", kwargs={"slug": item.workspace.slug})
    return [
        PushMessage(
            subscription=device,
            workspace_id=item.workspace_id,
            item_id=item.pk,
            title=title,
            body=body,
            url=url,
        )
        for device in devices
    ]


def acts_on() -> str:
    """The events this hook acts on, for the loop's relay: Inbox items, when push is on."""
    return f"e.type = '{CREATED}'" if settings.WEFT_VAPID_PRIVATE_KEY else "false"


def connect() -> None:
    log.register_relay_hook(on_events, acts_on=acts_on)
