"""Webhook subscriptions of a workspace and the deliveries of its events to them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


def _message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class Subscription(models.Model):
    """An https endpoint that receives the workspace's events matching its filter.

    `secret_sealed` is the signing secret encrypted with a key derived from SECRET_KEY
    (hooks/vault.py): it must stay usable for signing, so it cannot be hashed.
    """

    ACTIVE = "active"
    DISABLED = "disabled"
    STATES = [(ACTIVE, "Active"), (DISABLED, "Disabled")]

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    url = models.CharField(max_length=2000)
    event_types = models.JSONField(default=list, blank=True)
    entity_type = models.CharField(max_length=32, blank=True)
    entity_id = models.CharField(max_length=64, blank=True)
    secret_sealed = models.TextField()
    state = models.CharField(max_length=8, choices=STATES, default=ACTIVE)
    disabled_reason = models.CharField(max_length=200, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    created_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_connection = models.ForeignKey(
        "accounts.AgentConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["workspace", "state"], name="hooks_subscription_state")]
        ordering = ["workspace", "pk"]

    def __str__(self) -> str:
        return f"{self.workspace_id}: {self.url} ({self.state})"


class Delivery(models.Model):
    """One event on its way to one subscription; `message_id` is its webhook-id on every attempt."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
    STATES = [(PENDING, "Pending"), (DELIVERED, "Delivered"), (FAILED, "Failed")]

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="deliveries")
    message_id = models.CharField(max_length=40, unique=True, default=_message_id)
    event_id = models.CharField(max_length=32)
    event_type = models.CharField(max_length=64)
    # The envelope as sent: the same bytes on every attempt, even after the log trims the event.
    body = models.TextField()
    state = models.CharField(max_length=9, choices=STATES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # Failed attempts since the delivery was created or last redelivered: the step of the backoff.
    failures = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=200, blank=True)
    last_latency_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="hooks_delivery_due"),
            models.Index(fields=["subscription", "-id"], name="hooks_delivery_log"),
        ]

    def __str__(self) -> str:
        return f"{self.message_id} → {self.subscription_id} ({self.state})"
