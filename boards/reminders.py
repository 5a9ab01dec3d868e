"""Email reminders for Inbox items that have waited on people for 20 minutes."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import send_mass_mail
from django.db import transaction
from django.urls import reverse

from accounts.models import Seat, Workspace
from boards import clock, queries
from boards.models import InboxItem, InboxKind

REMIND_AFTER = timedelta(minutes=20)


def _due_items(now: datetime) -> list[InboxItem]:
    return list(
        InboxItem.objects.filter(
            queries.waiting(now), reminded_at__isnull=True, created_at__lte=now - REMIND_AFTER
        )
        .select_related("task", "question", "workspace")
        # A total order: concurrent workers lock the items in the same order, so they queue
        # rather than deadlock when items share a creation instant.
        .order_by("created_at", "pk")
    )


def _mark_reminded(item: InboxItem, now: datetime) -> bool:
    """Mark the item reminded; True only for the one caller whose update changed the row.

    Two timers running at once (beat and a manual run, or two workers) both find the item,
    but only one conditional update succeeds, so each item is mailed at most once. We accept
    the opposite failure: if mail delivery fails after the mark, that item is not retried.
    """
    return InboxItem.objects.filter(pk=item.pk, reminded_at__isnull=True).update(reminded_at=now) == 1


def _line(item: InboxItem, now: datetime) -> str:
    minutes = int((now - item.created_at).total_seconds() // 60)
    if item.kind == InboxKind.QUESTION and item.question is not None:
        what = f"Question on #{item.task_id} {item.task.title}: {item.question.text}"
    else:
        what = f"Review of #{item.task_id} {item.task.title}"
    return f"- {what} (waiting {minutes} min)"


Mail = tuple[str, str, str, list[str]]


def _messages(workspace: Workspace, items: list[InboxItem], now: datetime) -> list[Mail]:
    url = settings.WEFT_BASE_URL + reverse("boards:inbox", kwargs={"slug": workspace.slug})
    count = len(items)
    subject = f"[Weft] {count} item{'s' if count != 1 else ''} waiting in {workspace.name}'s Inbox"
    body = "\n".join(
        [
            f"These have waited on a person in {workspace.name} for 20 minutes or more:",
            "",
            *(_line(item, now) for item in items),
            "",
            f"Open the Inbox to decide: {url}",
            "",
            "Agents are refused new work while too much waits on people;",
            "a quick answer keeps them moving.",
        ]
    )
    # People who turned email off in their notification settings get none (notify app).
    seats = Seat.objects.filter(workspace=workspace).exclude(user__notify_settings__email=False)
    emails = seats.values_list("user__email", flat=True)
    return [(subject, body, settings.DEFAULT_FROM_EMAIL, [email]) for email in emails if email]


def inbox_remind(*, now: datetime | None = None) -> int:
    """Email each workspace's people about Inbox items open 20 minutes or more; returns items reminded."""
    now = now or clock.db_now()
    reminded: dict[int, list[InboxItem]] = defaultdict(list)
    with transaction.atomic():
        for item in _due_items(now):
            if _mark_reminded(item, now):
                reminded[item.workspace_id].append(item)
    messages = []
    for items in reminded.values():
        messages.extend(_messages(items[0].workspace, items, now))
    if messages:
        send_mass_mail(messages, fail_silently=False)
    return sum(len(items) for items in reminded.values())
