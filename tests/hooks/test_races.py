"""Races on PostgreSQL with real threads: the limit of 50 at its edge, and two senders sharing the work."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from accounts.models import Seat
from boards.services import task_create
from hooks.delivery import deliveries_send
from hooks.models import Delivery, Subscription
from hooks.rules import MAX_PER_WORKSPACE
from hooks.services import subscription_create
from weft.errors import WeftError

pytestmark = pytest.mark.django_db(transaction=True)


def _together(fns: list[Callable[[], Any]]) -> list[Any]:
    """Run each function in its own thread, released at once; their results or exceptions."""
    barrier = threading.Barrier(len(fns))
    results: list[Any] = [None] * len(fns)

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = fns[i]()
        except Exception as exc:
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_two_subscribes_at_the_edge_leave_exactly_50(on_postgres, ws_a, alice, public_dns):
    seat = Seat.objects.select_related("workspace", "user").get(workspace=ws_a, user=alice)

    def subscribe(n: int) -> Callable[[], Any]:
        return lambda: subscription_create(
            workspace=ws_a, url=f"https://hooks.example.com/{n}", event_types=["task.created"], by_seat=seat
        )

    for n in range(MAX_PER_WORKSPACE - 1):
        subscribe(n)()
    results = _together([subscribe(100), subscribe(101)])
    refused = [r for r in results if isinstance(r, WeftError)]
    assert len(refused) == 1 and refused[0].code == "subscription_limit_reached", results
    assert Subscription.objects.filter(workspace=ws_a).count() == MAX_PER_WORKSPACE


def test_two_senders_send_each_delivery_once(on_postgres, ws_a, alice, settings, receiver, relay):
    settings.DEBUG = True
    seat = Seat.objects.select_related("workspace", "user").get(workspace=ws_a, user=alice)
    subscription_create(workspace=ws_a, url=receiver.url, event_types=["task.created"], by_seat=seat)
    relay.skip()
    for n in range(8):
        task_create(workspace=ws_a, title=f"Task {n}", by_user=alice)
    ids = relay()
    assert len(ids) == 8
    sent = _together([deliveries_send, deliveries_send])
    assert sum(sent) == 8, sent
    webhook_ids = [r.headers["webhook-id"] for r in receiver.received]
    assert sorted(webhook_ids) == sorted(set(webhook_ids)) and len(webhook_ids) == 8
    assert set(Delivery.objects.values_list("state", flat=True)) == {Delivery.DELIVERED}
