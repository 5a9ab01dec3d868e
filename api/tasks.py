"""Celery tasks of the REST API: each calls one service."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from api.idempotency import keys_purge


@shared_task(name="api.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    """Hourly: forget every Idempotency-Key past its 24 hours."""
    return keys_purge(now=timezone.now())
