"""IdempotencyKey: the first answer to a write sent with an `Idempotency-Key`, kept for a day."""

from __future__ import annotations

from django.db import models

from accounts.models import Workspace


class IdempotencyKey(models.Model):
    """One key of one caller in one workspace: the request it was first used with and its answer.

    `status` is null while the first request is still running. The answer is sealed (it may
    carry a lease token or a signing secret, which are never kept readable at rest).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    credential = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField(null=True)
    response = models.TextField(blank=True, default="")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "credential", "key"], name="idempotency_key_once")
        ]

    def __str__(self) -> str:
        return f"{self.credential} {self.key}"
