"""A hanging receiver holds back no other: one lane per subscription, a deadline on every attempt,
and redirects are answers, never followed."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from accounts.models import Seat
from boards.services import task_create
from hooks import delivery, sender
from hooks.delivery import PER_LANE, deliveries_send
from hooks.models import Delivery, Subscription
from hooks.services import subscription_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def debug(settings):
    """Loopback receivers are allowed in debug only."""
    settings.DEBUG = True


def _subscribe(ws, user, url):
    seat = Seat.objects.select_related("workspace", "user").get(workspace=ws, user=user)
    return subscription_create(workspace=ws, url=url, by_seat=seat, event_types=["task.created"]).subscription


def test_a_hanging_receiver_does_not_hold_back_another_subscription(
    ws_a, alice, debug, receivers, relay, monkeypatch
):
    monkeypatch.setattr(sender, "DEADLINE_SECONDS", 2.0)
    hanging, healthy = receivers(), receivers()
    hanging.delay = 15
    stuck, fine = _subscribe(ws_a, alice, hanging.url), _subscribe(ws_a, alice, healthy.url)
    relay.skip()
    for n in range(25):
        task_create(workspace=ws_a, title=f"Task {n}", by_user=alice)
    assert len(relay()) == 50
    recorded: dict[int, list[float]] = {stuck.pk: [], fine.pk: []}
    record = delivery.delivery_record

    def timed(job, outcome):
        recorded[job.subscription_id].append(time.monotonic() - started)
        return record(job, outcome)

    monkeypatch.setattr(delivery, "delivery_record", timed)
    started = time.monotonic()
    assert deliveries_send() == PER_LANE + 1
    took = time.monotonic() - started
    assert took < 3.5, (
        f"the round took {took:.1f}s: it waited on more than one attempt of the hanging receiver"
    )
    assert len(healthy.received) == PER_LANE
    assert len(hanging.received) == 1, "a lane stops at its first failed attempt"
    assert max(recorded[fine.pk]) < 1.5 <= min(recorded[stuck.pk]), recorded
    rows = Delivery.objects.filter(subscription=stuck).order_by("pk")
    assert (rows[0].state, rows[0].failures, rows[0].last_error) == (Delivery.PENDING, 1, "timed out")
    handed_back = rows[1:PER_LANE]
    assert all(r.failures == 0 and r.attempts == 0 for r in handed_back)
    due = Delivery.objects.filter(
        pk__in=[r.pk for r in handed_back], next_attempt_at__lte=delivery.clock.db_now()
    )
    assert due.count() == PER_LANE - 1, "the untried deliveries are due again at once"
    assert Delivery.objects.filter(subscription=fine, state=Delivery.DELIVERED).count() == PER_LANE


@pytest.fixture
def dripping() -> Iterator[str]:
    """A receiver that reads the request, then sends its answer one byte every 0.2 s (for 7 s)."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:
        server.settimeout(5)
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 10:  # 7 s in all
                if stop.wait(0.2):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    stop.set()
    server.close()
    thread.join(5)


def test_an_attempt_ends_at_its_deadline_however_slowly_the_receiver_drips(dripping, monkeypatch):
    monkeypatch.setattr(sender, "DEADLINE_SECONDS", 1.0)
    started = time.monotonic()
    outcome = sender.send(
        url=dripping, secret="whsec_" + "A" * 32, message_id="msg_1", body="{}", timestamp=1, debug=True
    )
    took = time.monotonic() - started
    assert (outcome.status, outcome.error) == (None, "timed out")
    assert took < 2.0, f"the attempt took {took:.1f}s: each read got its own timeout, not the deadline's rest"


def test_a_redirect_is_an_answer_and_is_not_followed(ws_a, alice, debug, receivers, relay):
    redirecting, elsewhere = receivers(), receivers()
    redirecting.statuses = [302]
    redirecting.headers = {"location": elsewhere.url}  # followed, it would reach this one
    _subscribe(ws_a, alice, redirecting.url)
    relay.skip()
    task_create(workspace=ws_a, title="Redirected", by_user=alice)
    relay()
    assert deliveries_send() == 1
    row = Delivery.objects.get()
    assert (row.state, row.failures, row.last_status_code) == (Delivery.PENDING, 1, 302)
    assert len(redirecting.received) == 1 and elsewhere.received == []


def test_a_subscription_deleted_while_its_delivery_is_in_flight_costs_no_other_lane(
    ws_a, alice, debug, receivers, relay, monkeypatch
):
    doomed_receiver, other = receivers(), receivers()
    doomed, _ = _subscribe(ws_a, alice, doomed_receiver.url), _subscribe(ws_a, alice, other.url)
    relay.skip()
    task_create(workspace=ws_a, title="Raced by an unsubscribe", by_user=alice)
    relay()
    real_record = delivery.delivery_record

    def record(job, outcome):
        if job.subscription_id == doomed.pk:
            Subscription.objects.filter(pk=doomed.pk).delete()
        return real_record(job, outcome)

    monkeypatch.setattr(delivery, "delivery_record", record)
    assert deliveries_send() == 2
    assert Delivery.objects.get().state == Delivery.DELIVERED
    assert len(other.received) == len(doomed_receiver.received) == 1
