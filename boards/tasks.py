"""Celery tasks of the boards app: each fetches nothing itself and calls one service."""

from __future__ import annotations

from celery import shared_task

from boards.reminders import inbox_remind


@shared_task(name="boards.tasks.send_inbox_reminders")
def send_inbox_reminders() -> int:
    return inbox_remind()
