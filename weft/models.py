"""The durable, ordered, per-workspace event log that every write appends to."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class EventSequence(models.Model):
    """The last sequence number handed out in a workspace; its row lock orders the log."""

    workspace = models.OneToOneField(
        "accounts.Workspace", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    last_seq = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.workspace_id}@{self.last_seq}"


class Event(models.Model):
    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=64)
    entity_type = models.CharField(max_length=32)
    entity_id = models.CharField(max_length=64)
    payload = models.JSONField(default=dict)
    epoch = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "seq"], name="one_event_per_seq")]
        ordering = ["workspace", "seq"]

    def __str__(self) -> str:
        return f"{self.workspace_id}#{self.seq} {self.type}"
