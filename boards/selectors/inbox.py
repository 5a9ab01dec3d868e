"""The Inbox, one read for the web page and for agents: what waits on people and what is snoozed
for later, with the workspace's attention against its limits.

What waits is `queries.waiting` (open, or snoozed past its snooze), the same condition the
attention count, the reminders and the board's "In Inbox" badge use.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.db.models import BooleanField, Case, Value, When

from accounts.models import User, Workspace
from boards import clock, queries
from boards.models import InboxItem
from boards.payloads import holder_name, iso
from boards.results import AttentionStatus, InboxListResult
from boards.selectors.tasks import report_data
from boards.services.common import attention_now, attention_wait
from weft.hints import DONE, Call, Hint, next_, wait


def attention_status(*, workspace: Workspace, now: datetime | None = None) -> AttentionStatus:
    at = now or clock.db_now()
    attention = attention_now(workspace.pk, at)
    return AttentionStatus.of(attention, attention_wait(attention) if attention.full else DONE)


def inbox_for_user(*, workspace: Workspace, user: User, now: datetime | None = None) -> InboxListResult:
    """The workspace's Inbox: items waiting on people, oldest first, then those snoozed for later."""
    at = now or clock.db_now()
    items = list(
        InboxItem.objects.select_related(
            "task", "report", "question", "question__run", "run__connection", "run__user"
        )
        .filter(queries.undecided(), workspace=workspace)
        .annotate(
            is_waiting=Case(
                When(queries.waiting(at), then=Value(True)), default=Value(False), output_field=BooleanField()
            )
        )
        .order_by("created_at", "pk")
    )
    open_items: list[InboxItem] = [item for item in items if item.is_waiting]
    snoozed: list[InboxItem] = [item for item in items if not item.is_waiting]
    status = attention_status(workspace=workspace, now=at)
    if open_items:
        first = open_items[0]
        hint = wait(f"a person decides inbox item {first.pk} ({first.kind} of task {first.task_id})")
    elif snoozed:
        hint = wait(f"inbox item {snoozed[0].pk} comes back at {iso(snoozed[0].snoozed_until)}")
    else:
        hint = DONE
    return InboxListResult(open=open_items, snoozed=snoozed, attention=status, now=at, hint=hint)


def inbox_for_person(*, workspace: Workspace, user: User) -> InboxListResult:
    """The Inbox as its person reads it over REST: the hint is theirs to act on — decide the
    oldest waiting item (answer a question with its first option) — rather than to wait for."""
    found = inbox_for_user(workspace=workspace, user=user)
    if not found.open:
        return found
    return replace(found, hint=person_hint(found.open[0]))


def person_hint(item: InboxItem) -> Hint:
    """A review: accept it, or snooze it. A question: answer with its first option, or snooze it;
    a question without options is read first (its task), since no answer can be offered."""
    later = Call("decide_inbox_item", {"id": item.pk, "decision": "later"})
    question = item.question
    if question is None:
        return next_("decide_inbox_item", {"id": item.pk, "decision": "accept"}, fallback=later)
    if question.options:
        return next_(
            "answer_question", {"id": question.pk, "answer": str(question.options[0])}, fallback=later
        )
    return next_("get_task", {"id": item.task_id}, fallback=later)


@dataclass
class InboxEntry:
    """One waiting item as the Inbox page shows it: its age, who sent it, its report made safe."""

    item: InboxItem
    age: timedelta
    sender: str
    report: dict[str, Any] = field(default_factory=dict)


def inbox_entries(inbox: InboxListResult) -> list[InboxEntry]:
    """The waiting items of an Inbox read, shaped for the page."""
    return [
        InboxEntry(
            item=item,
            age=max(inbox.now - item.created_at, timedelta(0)),
            sender=holder_name(item.run),
            report=report_data(item.report) if item.report is not None else {},
        )
        for item in inbox.open
    ]
