"""Celery tasks of the boards app: each fetches nothing itself and calls one service."""

from __future__ import annotations

from celery import shared_task

from boards.reminders import inbox_remind
from boards.services import lease_sweep, trash_purge


@shared_task(name="boards.tasks.send_inbox_reminders")
def send_inbox_reminders() -> int:
    return inbox_remind()


@shared_task(name="boards.tasks.sweep_leases")
def sweep_leases() -> int:
    """Every 30 s (beat, or the embedded timer): make expired leases visible and emit their events."""
    return lease_sweep()


@shared_task(name="boards.tasks.purge_trash")
def purge_trash() -> int:
    """Hourly: tasks trashed more than 30 days ago are deleted for good."""
    return trash_purge()
