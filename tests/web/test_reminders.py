"""Inbox reminders: once per item, at 20 minutes, never before and never twice."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.core import mail
from django.utils import timezone

from boards.models import InboxItem, InboxState
from boards.reminders import inbox_remind
from boards.tasks import send_inbox_reminders
from tests.web.factories import make_question, make_review


def test_it_reminds_once_at_twenty_minutes(alice, bob, ws_a, agent, moving_clock):
    start = timezone.now()
    with time_machine.travel(start, tick=False) as traveller:
        item = make_review(ws_a, agent)
        traveller.shift(timedelta(minutes=19, seconds=59))
        assert inbox_remind() == 0
        assert mail.outbox == []

        traveller.shift(timedelta(seconds=1))
        assert inbox_remind() == 1
        assert sorted(m.to[0] for m in mail.outbox) == ["alice@example.com", "bob@example.com"]
        message = mail.outbox[0]
        assert "Acme" in message.subject
        assert "Write the changelog" in message.body
        assert f"/w/{ws_a.slug}/inbox/" in message.body
        item.refresh_from_db()
        assert item.reminded_at == timezone.now()

        traveller.shift(timedelta(hours=3))
        assert inbox_remind() == 0
        assert len(mail.outbox) == 2


def test_it_sends_one_mail_per_person_for_several_items(alice, ws_a, agent, moving_clock):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        make_review(ws_a, agent)
        make_question(ws_a, agent)
        traveller.shift(timedelta(minutes=25))
        assert inbox_remind() == 2
        assert len(mail.outbox) == 1
        assert "Postgres or SQLite?" in mail.outbox[0].body
        assert "2 items" in mail.outbox[0].subject


def test_it_skips_decided_and_snoozed_items(alice, ws_a, agent, moving_clock):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        decided = make_review(ws_a, agent)
        snoozed = make_review(ws_a, agent, title="Tidy the README")
        InboxItem.objects.filter(pk=decided.pk).update(state=InboxState.DECIDED, decision="accept")
        InboxItem.objects.filter(pk=snoozed.pk).update(
            state=InboxState.SNOOZED, snoozed_until=timezone.now() + timedelta(hours=4)
        )
        traveller.shift(timedelta(minutes=30))
        assert inbox_remind() == 0
        assert mail.outbox == []


def test_it_never_mails_another_workspaces_people(alice, carol, ws_a, ws_b, agent, moving_clock):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        make_review(ws_a, agent)
        traveller.shift(timedelta(minutes=21))
        inbox_remind()
    assert [m.to for m in mail.outbox] == [["alice@example.com"]]


def test_it_runs_as_the_scheduled_task(alice, ws_a, agent, moving_clock):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        make_review(ws_a, agent)
        traveller.shift(timedelta(minutes=20))
        assert send_inbox_reminders.apply().get() == 1
        assert send_inbox_reminders.apply().get() == 0
    assert len(mail.outbox) == 1
