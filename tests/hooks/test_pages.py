"""The webhook pages: owners and admins list, create, delete and redeliver; the secret shows once."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Seat, User, Workspace
from boards.services import task_create
from hooks.delivery import deliveries_send
from hooks.models import Delivery, Subscription
from hooks.services import subscription_create
from weft.models import Event

pytestmark = pytest.mark.django_db


def url(name: str, ws: Workspace, **kwargs: object) -> str:
    return reverse(f"hooks:{name}", kwargs={"slug": ws.slug, **kwargs})


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def _subscribe(ws: Workspace, user: User, target: str) -> Subscription:
    seat = Seat.objects.select_related("workspace", "user").get(workspace=ws, user=user)
    return subscription_create(
        workspace=ws, url=target, event_types=["task.created"], by_seat=seat
    ).subscription


def test_an_owner_creates_one_and_sees_the_secret_once(as_alice, ws_a, public_dns):
    response = as_alice.post(
        url("subscription_create", ws_a),
        {
            "url": "https://hooks.example.com/in",
            "event_types": "task.created, run.completed",
            "entity_type": "",
        },
    )
    assert response.status_code == 200
    stored = Subscription.objects.get(workspace=ws_a)
    assert stored.event_types == ["task.created", "run.completed"]
    body = response.content.decode()
    secret = body.split("<code data-secret>")[1].split("</code>")[0]
    assert secret.startswith("whsec_")
    again = as_alice.get(url("subscriptions", ws_a)).content.decode()
    assert "https://hooks.example.com/in" in again and secret not in again
    assert secret not in as_alice.get(url("subscription", ws_a, subscription_id=stored.pk)).content.decode()


def test_a_refused_subscription_shows_why_and_stores_nothing(as_alice, ws_a, public_dns):
    response = as_alice.post(url("subscription_create", ws_a), {"url": "http://hooks.example.com/in"})
    assert response.status_code == 400
    assert "must use https" in response.content.decode()
    response = as_alice.post(url("subscription_create", ws_a), {"url": "https://hooks.example.com/in"})
    assert "needs a filter" in response.content.decode()
    assert not Subscription.objects.exists()


def test_the_51st_subscription_is_refused_on_the_page_with_409(as_alice, ws_a, alice, public_dns):
    for n in range(50):
        _subscribe(ws_a, alice, f"https://hooks.example.com/{n}")
    response = as_alice.post(
        url("subscription_create", ws_a),
        {"url": "https://hooks.example.com/51", "event_types": "task.created"},
    )
    assert response.status_code == 409
    assert "already has 50 subscriptions" in response.content.decode()
    assert Subscription.objects.filter(workspace=ws_a).count() == 50


def test_the_dashboard_links_managers_to_the_webhooks(as_alice, ws_a, bob):
    page = url("subscriptions", ws_a)
    assert page in as_alice.get(reverse("workspace_dashboard", kwargs={"slug": ws_a.slug})).content.decode()
    client = Client()
    client.force_login(bob)
    assert page not in client.get(reverse("workspace_dashboard", kwargs={"slug": ws_a.slug})).content.decode()


def test_a_member_gets_404_on_every_page(ws_a, alice, bob, public_dns):
    sub = _subscribe(ws_a, alice, "https://hooks.example.com/in")
    client = Client()
    client.force_login(bob)
    for name, kwargs in [
        ("subscriptions", {}),
        ("subscription_create", {}),
        ("subscription", {"subscription_id": sub.pk}),
        ("subscription_delete", {"subscription_id": sub.pk}),
    ]:
        assert client.get(url(name, ws_a, **kwargs)).status_code == 404
        assert client.post(url(name, ws_a, **kwargs), {"url": "https://x.example.com/"}).status_code == 404
    assert Subscription.objects.count() == 1


def test_an_owner_deletes_one(as_alice, ws_a, alice, public_dns):
    sub = _subscribe(ws_a, alice, "https://hooks.example.com/in")
    response = as_alice.post(url("subscription_delete", ws_a, subscription_id=sub.pk))
    assert response.status_code == 302
    assert not Subscription.objects.exists()
    assert Event.objects.filter(type="subscription.deleted").count() == 1


def test_the_log_shows_status_attempts_code_latency_and_redelivers(
    as_alice, ws_a, alice, settings, receiver, relay
):
    settings.DEBUG = True
    receiver.statuses = [500, 200]
    sub = _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    task_create(workspace=ws_a, title="Logged", by_user=alice)
    relay()
    deliveries_send()
    row = Delivery.objects.get()
    body = as_alice.get(url("subscription", ws_a, subscription_id=sub.pk)).content.decode()
    assert row.message_id in body and "Pending" in body and "500" in body and " ms" in body
    assert as_alice.post(url("delivery_redeliver", ws_a, delivery_id=row.pk)).status_code == 302
    assert deliveries_send() == 1
    body = as_alice.get(url("subscription", ws_a, subscription_id=sub.pk)).content.decode()
    assert "Delivered" in body and "<td>2</td>" in body
    assert [r.headers["webhook-id"] for r in receiver.received] == [row.message_id] * 2


def test_admins_see_a_notice_when_a_410_disabled_a_subscription(
    as_alice, ws_a, alice, settings, receiver, relay
):
    settings.DEBUG = True
    receiver.statuses = [410]
    _subscribe(ws_a, alice, receiver.url)
    relay.skip()
    task_create(workspace=ws_a, title="Gone", by_user=alice)
    relay()
    deliveries_send()
    body = as_alice.get(url("subscriptions", ws_a)).content.decode()
    assert 'role="alert"' in body and "is disabled: the receiver answered 410 Gone" in body


def test_a_foreign_subscription_or_delivery_answers_like_a_missing_one(
    ws_a, alice, ws_b, carol, public_dns, settings, relay
):
    sub = _subscribe(ws_a, alice, "https://hooks.example.com/in")
    relay.skip()
    task_create(workspace=ws_a, title="Probe", by_user=alice)
    relay()
    row = Delivery.objects.get()
    client = Client()
    client.force_login(carol)
    for name, key, foreign in [
        ("subscription", "subscription_id", sub.pk),
        ("subscription_delete", "subscription_id", sub.pk),
        ("delivery_redeliver", "delivery_id", row.pk),
    ]:
        for method in (client.get, client.post):
            got = method(url(name, ws_b, **{key: foreign}))
            missing = method(url(name, ws_b, **{key: 987654321}))
            assert (got.status_code, got.content) == (missing.status_code, missing.content)
    assert Subscription.objects.filter(pk=sub.pk, state=Subscription.ACTIVE).exists()
    assert Delivery.objects.get().attempts == 0


def test_operators_see_subscriptions_and_deliveries_in_the_admin_but_not_the_secret(
    ws_a, alice, public_dns, relay
):
    from accounts.models import User as Operator

    created = subscription_create(
        workspace=ws_a,
        url="https://hooks.example.com/in",
        event_types=["task.created"],
        by_seat=Seat.objects.select_related("workspace", "user").get(workspace=ws_a, user=alice),
    )
    relay.skip()
    task_create(workspace=ws_a, title="Seen by operators", by_user=alice)
    relay()
    operator = Operator.objects.create_superuser(email="ops@example.com", password="x")
    client = Client()
    client.force_login(operator)
    sub = created.subscription
    delivery = Delivery.objects.get()
    for path in [
        reverse("admin:hooks_subscription_changelist"),
        reverse("admin:hooks_subscription_change", args=[sub.pk]),
        reverse("admin:hooks_delivery_changelist"),
        reverse("admin:hooks_delivery_change", args=[delivery.pk]),
    ]:
        response = client.get(path)
        assert response.status_code == 200, path
        body = response.content.decode()
        assert created.secret not in body and sub.secret_sealed not in body, path
