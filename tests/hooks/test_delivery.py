"""Delivery: signed with Standard Webhooks, each event once per webhook-id, retried on the backoff,
a 410 disables, a slow receiver never slows the write, and the address is checked again at send time."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from standardwebhooks import Webhook

from accounts.models import Seat
from boards.services import task_create
from hooks import delivery, sender
from hooks.delivery import deliveries_send, delivery_redeliver
from hooks.models import Delivery, Subscription
from hooks.rules import RETRY_DELAYS
from hooks.services import subscription_create
from tests.hooks.conftest import fake_dns
from weft.events import envelope as _envelope
from weft.models import Event

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def debug(settings):
    """Loopback receivers are allowed in debug only."""
    settings.DEBUG = True


def _subscribe(ws, user, url, **spec):
    seat = Seat.objects.select_related("workspace", "user").get(workspace=ws, user=user)
    return subscription_create(
        workspace=ws, url=url, by_seat=seat, **{"event_types": ["task.created"], **spec}
    )


def _task(ws, user, title="Ship the webhooks"):
    return task_create(workspace=ws, title=title, by_user=user).task


def test_it_delivers_each_event_signed_and_once(ws_a, alice, debug, receiver, relay):
    created = _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    task = _task(ws_a, alice)
    [delivery_id] = relay()
    assert deliveries_send() == 1
    assert deliveries_send() == 0
    [got] = receiver.received
    event = Event.objects.get(type="task.created", entity_id=str(task.pk))
    assert Webhook(created.secret).verify(got.body, got.headers) == _envelope(event)
    assert got.json["entity"] == {"type": "task", "id": str(task.pk)}
    assert set(got.json) == {"id", "type", "workspace", "entity", "occurredAt", "data"}
    row = Delivery.objects.get(pk=delivery_id)
    assert got.headers["webhook-id"] == row.message_id
    assert abs(int(got.headers["webhook-timestamp"]) - time.time()) < 60
    assert (row.state, row.attempts, row.last_status_code) == (Delivery.DELIVERED, 1, 200)
    assert row.last_latency_ms is not None and row.next_attempt_at is None


def test_events_outside_the_filter_are_not_delivered(ws_a, alice, debug, receiver, relay):
    _subscribe(ws_a, alice, receiver.url, event_types=["run.completed"])
    relay.skip()
    _task(ws_a, alice)
    assert relay() == []
    assert deliveries_send() == 0 and receiver.received == []


def test_a_500_is_retried_on_the_schedule_with_the_same_webhook_id(ws_a, alice, debug, receiver, relay):
    receiver.statuses = [500]
    created = _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    with time_machine.travel(START, tick=False) as clock:
        _task(ws_a, alice)
        [delivery_id] = relay()
        assert deliveries_send() == 1
        for wait in RETRY_DELAYS:
            row = Delivery.objects.get(pk=delivery_id)
            assert (row.state, row.next_attempt_at) == (Delivery.PENDING, datetime.now(UTC) + wait)
            clock.shift(wait - timedelta(seconds=1))
            assert deliveries_send() == 0, "sent before its time"
            clock.shift(timedelta(seconds=1))
            assert deliveries_send() == 1
        row = Delivery.objects.get(pk=delivery_id)
        assert (row.state, row.attempts, row.last_status_code, row.next_attempt_at) == (
            Delivery.FAILED, 7, 500, None,
        )  # fmt: skip
        clock.shift(timedelta(days=2))
        assert deliveries_send() == 0
    assert len(receiver.received) == 7
    assert {r.headers["webhook-id"] for r in receiver.received} == {row.message_id}
    stamps = [int(r.headers["webhook-timestamp"]) for r in receiver.received]
    assert stamps[1] - stamps[0] == 5, "each attempt is stamped with its own time"
    for got, stamp in zip(receiver.received, stamps, strict=True):
        at = datetime.fromtimestamp(stamp, UTC)
        assert Webhook(created.secret).sign(row.message_id, at, got.body) == got.headers["webhook-signature"]


def test_a_receiver_that_recovers_gets_the_event_once_more_and_no_more(ws_a, alice, debug, receiver, relay):
    receiver.statuses = [503, 200]
    _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    with time_machine.travel(START, tick=False) as clock:
        _task(ws_a, alice)
        relay()
        deliveries_send()
        clock.shift(timedelta(seconds=5))
        deliveries_send()
        clock.shift(timedelta(hours=24))
        assert deliveries_send() == 0
    assert [r.headers["webhook-id"] for r in receiver.received] == [
        receiver.received[0].headers["webhook-id"]
    ] * 2
    assert Delivery.objects.get().state == Delivery.DELIVERED


def test_a_connection_error_is_retried(ws_a, alice, debug, relay):
    _subscribe(ws_a, alice, "http://127.0.0.1:9/closed")
    relay.skip()
    _task(ws_a, alice)
    relay()
    deliveries_send()
    row = Delivery.objects.get()
    assert (row.state, row.failures, row.last_status_code) == (Delivery.PENDING, 1, None)
    assert row.last_error


def test_a_410_disables_the_subscription_and_stops_its_deliveries(ws_a, alice, debug, receiver, relay):
    receiver.statuses = [410]
    created = _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    with time_machine.travel(START, tick=False) as clock:
        _task(ws_a, alice, "first")
        relay()
        assert deliveries_send() == 1
        _task(ws_a, alice, "second")
        assert relay() == [], "a disabled subscription gets no new deliveries"
        clock.shift(timedelta(days=1))
        assert deliveries_send() == 0
    stored = Subscription.objects.get(pk=created.subscription.pk)
    assert stored.state == Subscription.DISABLED and "410" in stored.disabled_reason
    assert Event.objects.filter(type="subscription.disabled", entity_id=str(stored.pk)).count() == 1
    assert Delivery.objects.get().state == Delivery.FAILED
    assert len(receiver.received) == 1


def test_a_pending_delivery_of_a_subscription_disabled_meanwhile_is_not_sent(
    ws_a, alice, debug, receiver, relay
):
    first = _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    _task(ws_a, alice)
    relay()
    Subscription.objects.filter(pk=first.subscription.pk).update(state=Subscription.DISABLED)
    assert deliveries_send() == 0 and receiver.received == []


def test_workspace_b_never_receives_workspace_a_events(ws_a, alice, ws_b, carol, debug, receiver, relay):
    _subscribe(ws_b, carol, receiver.url, event_types=None, entity_type="task")
    relay.skip()
    task = _task(ws_a, alice)
    assert relay() == []
    _subscribe(ws_b, carol, receiver.url, event_types=None, entity_type="task", entity_id=str(task.pk))
    relay.skip()
    _task(ws_a, alice, "another")
    from boards.services import task_update

    task_update(task=task, by_user=alice, title="renamed in A")
    assert relay() == []
    assert deliveries_send() == 0 and receiver.received == []


def test_a_slow_receiver_does_not_slow_the_write(
    ws_a, alice, debug, receiver, relay, monkeypatch, django_capture_on_commit_callbacks
):
    receiver.delay = 15

    def write(title: str) -> float:
        started = time.monotonic()
        with django_capture_on_commit_callbacks(execute=True):
            _task(ws_a, alice, title)
        relay()
        return time.monotonic() - started

    without = write("no subscriber yet")
    _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    with_subscriber = write("with a subscriber that sleeps 15 s")
    assert without < 1.0 and with_subscriber < 1.0, (without, with_subscriber)
    assert receiver.received == [], "nothing is sent in the request that wrote the event"
    # The sender itself gives up after its timeout and retries on the backoff.
    monkeypatch.setattr(sender, "TIMEOUT_SECONDS", 0.3)
    started = time.monotonic()
    assert deliveries_send() >= 1
    assert time.monotonic() - started < 5
    row = Delivery.objects.filter(event_type="task.created").order_by("-pk").first()
    assert row is not None and (row.state, row.last_error) == (Delivery.PENDING, "timed out")


def test_with_a_worker_each_delivery_is_queued_after_commit(
    ws_a, alice, settings, public_dns, relay, monkeypatch, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    queued: list[int] = []
    monkeypatch.setattr("hooks.tasks.deliver.delay", queued.append)
    _subscribe(ws_a, alice, "https://hooks.example.com/in")
    relay.skip()
    _task(ws_a, alice)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        ids = relay()
    assert queued == []
    for callback in callbacks:
        callback()
    assert queued == ids and len(ids) == 1


def test_with_eager_celery_nothing_is_queued_or_sent_inline(
    ws_a, alice, public_dns, relay, monkeypatch, django_capture_on_commit_callbacks
):
    attempts: list[object] = []
    monkeypatch.setattr(delivery, "_attempt", attempts.append)
    monkeypatch.setattr("hooks.tasks.deliver.delay", attempts.append)
    _subscribe(ws_a, alice, "https://hooks.example.com/in")
    relay.skip()
    _task(ws_a, alice)
    with django_capture_on_commit_callbacks(execute=True):
        relay()
    assert attempts == []
    assert Delivery.objects.get().state == Delivery.PENDING


def test_the_address_is_checked_again_at_send_time(ws_a, alice, settings, monkeypatch, relay):
    fake_dns(monkeypatch, {"rebind.example.com": "93.184.216.34"})
    _subscribe(ws_a, alice, "https://rebind.example.com/in")
    fake_dns(monkeypatch, {"rebind.example.com": "10.0.0.1"})
    relay.skip()
    _task(ws_a, alice)
    relay()
    assert deliveries_send() == 1
    row = Delivery.objects.get()
    assert row.state == Delivery.PENDING and row.last_error.startswith(
        "refused: rebind.example.com resolves to 10.0.0.1"
    )
    assert row.last_status_code is None


def test_it_connects_to_the_checked_address_without_resolving_again(
    ws_a, alice, debug, receiver, relay, monkeypatch
):
    import socket

    port = int(receiver.url.rsplit(":", 1)[1].split("/")[0])
    asked: list[str] = []
    real = socket.getaddrinfo

    def counting(host, *args, **kwargs):
        asked.append(host)
        return real("127.0.0.1" if host == "receiver.localhost" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", counting)
    settings_url = f"http://localhost:{port}/hook"
    _subscribe(ws_a, alice, settings_url)
    relay.skip()
    _task(ws_a, alice)
    relay()
    asked.clear()
    deliveries_send()
    assert [h for h in asked if not h.startswith("127.")] == ["localhost"], asked
    assert receiver.received[0].headers["host"] == f"localhost:{port}"


def test_redeliver_sends_again_with_the_same_webhook_id(ws_a, alice, debug, receiver, relay):
    _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    _task(ws_a, alice)
    relay()
    deliveries_send()
    row = Delivery.objects.select_related("subscription").get()
    seat = Seat.objects.get(workspace=ws_a, user=alice)
    assert delivery_redeliver(delivery=row, by_seat=seat).state == Delivery.PENDING
    assert deliveries_send() == 1
    assert [r.headers["webhook-id"] for r in receiver.received] == [row.message_id] * 2
    stored = Delivery.objects.get()
    assert (stored.state, stored.attempts) == (Delivery.DELIVERED, 2)
    assert json.loads(receiver.received[0].body) == json.loads(receiver.received[1].body)
