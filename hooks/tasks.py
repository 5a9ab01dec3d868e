"""Celery tasks of the hooks app: each calls one service."""

from __future__ import annotations

from celery import shared_task

from hooks.delivery import deliveries_send


@shared_task(name="hooks.deliver_due")
def deliver_due() -> int:
    """Every few seconds (beat, or the embedded timer): send every delivery that is due."""
    return deliveries_send()


@shared_task(name="hooks.deliver")
def deliver(delivery_id: int) -> int:
    """Queued after commit in production: send one delivery now (retries come back as due)."""
    return deliveries_send(ids=[delivery_id])
