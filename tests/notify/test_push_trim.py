"""The daily trim of push messages: finished ones go once a week old, pending ones stay."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from notify.models import PushMessage, PushSubscription
from notify.push import RETENTION, push_trim
from notify.tasks import trim_pushes

pytestmark = pytest.mark.django_db


def _message(device: PushSubscription, item_id: int, state: str, age: timedelta) -> PushMessage:
    return PushMessage.objects.create(
        subscription=device,
        workspace_id=1,
        item_id=item_id,
        title="Review",
        body="A result waits",
        url="/",
        state=state,
        created_at=timezone.now() - age,
    )


def test_finished_messages_go_at_a_week_and_pending_ones_stay(alice: User, settings) -> None:
    assert settings.CELERY_BEAT_SCHEDULE["push-trim"]["task"] == "notify.push_trim"
    now = timezone.now()
    device = PushSubscription.objects.create(
        user=alice, endpoint="https://fcm.googleapis.com/fcm/send/x", p256dh="k", auth="a"
    )
    second = timedelta(seconds=1)
    kept = [
        _message(device, 1, PushMessage.SENT, RETENTION - second),
        _message(device, 2, PushMessage.PENDING, RETENTION * 4),
    ]
    gone = [
        _message(device, 3, PushMessage.SENT, RETENTION + second),
        _message(device, 4, PushMessage.SUPPRESSED, RETENTION + second),
        _message(device, 5, PushMessage.FAILED, RETENTION * 2),
    ]
    assert push_trim(now=now, batch=2) == len(gone)
    assert set(PushMessage.objects.values_list("pk", flat=True)) == {m.pk for m in kept}
    assert trim_pushes() == 0
