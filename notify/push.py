"""Sending push messages: Web Push (RFC 8030) with VAPID (RFC 8292), encrypted (RFC 8291).

A periodic task sends what is pending: a message whose person is in quiet hours is suppressed
(the Inbox still has the item, and the email reminder still comes), one the push service
accepts is sent, a subscription it says is gone (404, 410) is deleted, and any other failure is
retried on the next round, three attempts in all. The signing key is WEFT_VAPID_PRIVATE_KEY;
without one push is off and messages wait. A daily trim deletes the messages that are done with
(sent, suppressed or failed) once they are a week old; pending ones stay until they are sent.
"""

from __future__ import annotations

import json
import logging
import zoneinfo
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from pywebpush import WebPushException, webpush

from notify.models import NotifySettings, PushMessage, PushSubscription
from notify.rules import in_quiet_hours

log = logging.getLogger(__name__)
ATTEMPTS = 3
BATCH = 100
TTL_SECONDS = 3600
RETENTION = timedelta(days=7)
TRIM_BATCH = 1000


def push_enabled() -> bool:
    return bool(settings.WEFT_VAPID_PRIVATE_KEY)


def _quiet(user_id: int, now: datetime) -> bool:
    found = NotifySettings.objects.filter(user_id=user_id).first()
    if found is None:
        return False
    try:
        zone = zoneinfo.ZoneInfo(found.time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = zoneinfo.ZoneInfo("UTC")
    return in_quiet_hours(now.astimezone(zone).time(), found.quiet_start, found.quiet_end)


def _claimed(batch: int) -> list[PushMessage]:
    """Pending messages, locked so that two senders never send one twice."""
    with transaction.atomic():
        rows = list(
            PushMessage.objects.select_for_update(skip_locked=True)
            .filter(state=PushMessage.PENDING)
            .select_related("subscription")
            .order_by("created_at", "pk")[:batch]
        )
        PushMessage.objects.filter(pk__in=[m.pk for m in rows]).update(attempts=F("attempts") + 1)
    return rows


def push_send_due(*, now: datetime | None = None, batch: int = BATCH) -> int:
    """Send (or suppress) every pending message; returns how many the push services accepted."""
    if not push_enabled():
        return 0
    now = now or timezone.now()
    sent = 0
    for message in _claimed(batch):
        sent += _send_one(message, now)
    return sent


def _send_one(message: PushMessage, now: datetime) -> int:
    device = message.subscription
    if _quiet(device.user_id, now):
        PushMessage.objects.filter(pk=message.pk).update(state=PushMessage.SUPPRESSED)
        return 0
    data = json.dumps(
        {"title": message.title, "body": message.body, "url": message.url, "tag": f"inbox-{message.item_id}"}
    )
    endpoint = urlsplit(device.endpoint)
    try:
        webpush(
            subscription_info={
                "endpoint": device.endpoint,
                "keys": {"p256dh": device.p256dh, "auth": device.auth},
            },
            data=data,
            vapid_private_key=settings.WEFT_VAPID_PRIVATE_KEY,
            vapid_claims={
                "sub": settings.WEFT_VAPID_SUBJECT,
                "aud": f"{endpoint.scheme}://{endpoint.netloc}",
            },
            ttl=TTL_SECONDS,
            timeout=10,
        )
    except (WebPushException, requests.RequestException) as exc:
        response = getattr(exc, "response", None)
        status = response.status_code if response is not None else None
        if status in (404, 410):
            PushSubscription.objects.filter(pk=device.pk).delete()
            return 0
        log.warning("push to subscription %s failed: %s", device.pk, exc)
        if message.attempts + 1 >= ATTEMPTS:
            PushMessage.objects.filter(pk=message.pk).update(state=PushMessage.FAILED)
        return 0
    PushMessage.objects.filter(pk=message.pk).update(state=PushMessage.SENT, sent_at=now)
    PushSubscription.objects.filter(pk=device.pk).update(last_sent_at=now)
    return 1


def push_trim(*, now: datetime | None = None, batch: int = TRIM_BATCH) -> int:
    """Delete finished messages older than RETENTION, a batch per statement; returns how many."""
    cutoff = (now or timezone.now()) - RETENTION
    finished = PushMessage.objects.exclude(state=PushMessage.PENDING).filter(created_at__lt=cutoff)
    deleted = 0
    while ids := list(finished.values_list("pk", flat=True)[:batch]):
        deleted += PushMessage.objects.filter(pk__in=ids).delete()[0]
    return deleted
