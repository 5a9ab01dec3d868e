"""The pure attention model the rule tests use agrees with what the database counts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from accounts.models import Seat
from boards.models import InboxItem, InboxKind
from boards.selectors import inbox_for_user
from boards.services import task_claim
from boards.services.common import attention_now
from tests.boards import attention_model as model
from tests.boards.attention_model import WaitingItem

HOUR = timedelta(hours=1)

# Each item: (state, snoozed_until relative to now or None, estimated minutes, age).
SCENARIOS = {
    "nothing waits": [],
    "open items count, decided ones do not": [
        ("open", None, 3, 2 * HOUR),
        ("open", None, 4, HOUR),
        ("decided", None, 30, 3 * HOUR),
    ],
    "a snooze in the future is later, a passed or exact one is back": [
        ("snoozed", HOUR, 10, 4 * HOUR),
        ("snoozed", -HOUR, 7, 3 * HOUR),
        ("snoozed", timedelta(0), 2, HOUR),
    ],
    "a snooze with no end never comes back": [("snoozed", None, 5, HOUR), ("open", None, 1, 0 * HOUR)],
    "full on items": [("open", None, 1, HOUR)] * 5,
    "full on minutes": [("open", None, 44, HOUR), ("snoozed", -HOUR, 1, 2 * HOUR)],
}


@pytest.mark.parametrize("seeded", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_the_model_counts_what_the_database_counts(ws_a, agent, task, alice, seeded):
    run = task_claim(task_id=task.pk, connection=agent).run
    now = run.started_at + HOUR
    items = [
        WaitingItem(
            created_at=now - age,
            estimated_minutes=minutes,
            state=state,
            snoozed_until=now + until if until is not None else None,
        )
        for state, until, minutes, age in seeded
    ]
    created = [
        InboxItem.objects.create(
            workspace=ws_a,
            kind=InboxKind.REVIEW,
            task=task,
            run=run,
            state=item.state,
            snoozed_until=item.snoozed_until,
            estimated_minutes=item.estimated_minutes,
            created_at=item.created_at,
        )
        for item in items
    ]
    # The Inbox lists oldest first (ties by id).
    pairs = sorted(zip(created, items, strict=True), key=lambda pair: (pair[1].created_at, pair[0].pk))
    people = Seat.objects.filter(workspace=ws_a).count()

    assert attention_now(ws_a.pk, now) == model.assess_items(items, people=people, now=now)
    inbox = inbox_for_user(workspace=ws_a, user=alice, now=now)
    waiting = [row.pk for row, item in pairs if model.counts(item.state, item.snoozed_until, now)]
    later = [row.pk for row, item in pairs if item.state != "decided" and row.pk not in waiting]
    assert [i.pk for i in inbox.open] == waiting
    assert [i.pk for i in inbox.snoozed] == later
