"""Two reminder workers at once still send each reminder once (real threads, PostgreSQL)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from boards.models import InboxItem
from boards.reminders import inbox_remind
from tests.boards.helpers import race
from tests.web.factories import make_question, make_review

pytestmark = pytest.mark.django_db(transaction=True)


def test_4_workers_remind_each_item_once(on_postgres, alice, bob, ws_a, agent, moving_clock):
    for round_no in range(5):
        mail.outbox.clear()
        # Same creation instant for all: the workers must still agree on an order (no deadlock).
        waited = timezone.now() - timedelta(minutes=25)
        items = [
            make_review(ws_a, agent, title=f"Review {round_no}.{n}", created_at=waited) for n in range(6)
        ]
        items.append(make_question(ws_a, agent, created_at=waited))
        outcomes = race(range(4), lambda _: inbox_remind())
        assert all(isinstance(o, int) for o in outcomes), outcomes
        assert sum(outcomes) == len(items)
        assert InboxItem.objects.filter(reminded_at__isnull=True).count() == 0
        # Every person reads every item exactly once, whichever worker mailed it.
        seen = Counter(
            (message.to[0], line)
            for message in mail.outbox
            for line in message.body.splitlines()
            if line.startswith("- ")
        )
        assert len(seen) == 2 * len(items)
        assert set(seen.values()) == {1}
        InboxItem.objects.update(state="decided")
