"""Notifications to people: their devices' Web Push subscriptions, their settings, and the
push messages waiting to be sent (written in the event relay, sent by a periodic task)."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.utils import timezone


class PushSubscription(models.Model):
    """One browser on one device (the Push API's subscription), for one person."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions"
    )
    endpoint = models.URLField(max_length=2000, unique=True)
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    user_agent = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_sent_at = models.DateTimeField(null=True, blank=True)

    objects: ClassVar[models.Manager[PushSubscription]] = models.Manager()

    def __str__(self) -> str:
        return f"{self.user} on {self.user_agent or 'a device'}"


class NotifySettings(models.Model):
    """How a person is told about Inbox items: push, email, and quiet hours in their time zone."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notify_settings"
    )
    push = models.BooleanField(default=True)
    email = models.BooleanField(default=True)
    quiet_start = models.TimeField(null=True, blank=True)
    quiet_end = models.TimeField(null=True, blank=True)
    time_zone = models.CharField(max_length=64, default="UTC")

    objects: ClassVar[models.Manager[NotifySettings]] = models.Manager()

    def __str__(self) -> str:
        return f"notifications of {self.user}"


class PushMessage(models.Model):
    """One Inbox item's notification for one device: pending until sent, suppressed in quiet hours."""

    PENDING, SENT, SUPPRESSED, FAILED = "pending", "sent", "suppressed", "failed"
    STATES = [(PENDING, "Pending"), (SENT, "Sent"), (SUPPRESSED, "Suppressed"), (FAILED, "Failed")]

    subscription = models.ForeignKey(PushSubscription, on_delete=models.CASCADE, related_name="messages")
    workspace_id = models.BigIntegerField()
    item_id = models.BigIntegerField()
    title = models.CharField(max_length=200)
    body = models.CharField(max_length=500)
    url = models.CharField(max_length=500)
    state = models.CharField(max_length=16, choices=STATES, default=PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    objects: ClassVar[models.Manager[PushMessage]] = models.Manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subscription", "item_id"], name="one_push_per_item_and_device")
        ]
        indexes = [models.Index(fields=["state", "created_at"])]

    def __str__(self) -> str:
        return f"push of inbox item {self.item_id} ({self.state})"
