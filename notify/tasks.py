"""Celery tasks of the notify app: each calls one service."""

from __future__ import annotations

from celery import shared_task

from notify.push import push_send_due, push_trim


@shared_task(name="notify.push_due")
def push_due() -> int:
    """Every few seconds (beat, or the embedded timer): send every pending push message."""
    return push_send_due()


@shared_task(name="notify.push_trim")
def trim_pushes() -> int:
    """Daily: forget the push messages that were sent, suppressed or failed over a week ago."""
    return push_trim()
