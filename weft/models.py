"""The durable event log that every write appends to, positioned in commit order by the relay."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Event(models.Model):
    """One change in a workspace's log; the relay sets `position` once the writer has committed."""

    # No index of its own: event_workspace_position leads with it.
    workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="events", db_index=False
    )
    position = models.PositiveBigIntegerField(null=True, blank=True, unique=True)
    type = models.CharField(max_length=64)
    entity_type = models.CharField(max_length=32)
    entity_id = models.CharField(max_length=64)
    payload = models.JSONField(default=dict)
    epoch = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "position"], name="event_workspace_position"),
            # The relay's scan: only the few rows still waiting for a position.
            models.Index(fields=["id"], condition=models.Q(position__isnull=True), name="event_unpositioned"),
        ]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.workspace_id}#{self.position} {self.type}"
