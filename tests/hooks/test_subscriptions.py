"""subscription_create / subscription_delete: filters, https, the limit of 50, SSRF, the secret once."""

from __future__ import annotations

import pytest

from accounts.models import AgentConnection, Seat
from hooks import vault
from hooks.models import Subscription
from hooks.rules import MAX_PER_WORKSPACE
from hooks.selectors import subscriptions_list
from hooks.services import subscription_create, subscription_delete, subscription_disable
from tests.hooks.conftest import fake_dns
from weft.errors import HTTP_STATUS, WeftError
from weft.models import Event

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/weft"


def _seat(ws, user) -> Seat:
    return Seat.objects.select_related("workspace", "user").get(workspace=ws, user=user)


def _create(ws, alice, **spec):
    return subscription_create(
        workspace=ws, by_seat=_seat(ws, alice), **{"url": URL, "event_types": ["task.created"], **spec}
    )


def test_it_creates_a_subscription_and_emits_its_event(ws_a, alice, public_dns):
    created = _create(ws_a, alice, event_types=["task.created", "run.completed"], entity_type="task")
    stored = Subscription.objects.get(pk=created.subscription.pk)
    assert (stored.url, stored.event_types, stored.entity_type, stored.state) == (
        URL, ["task.created", "run.completed"], "task", Subscription.ACTIVE,
    )  # fmt: skip
    event = Event.objects.filter(workspace=ws_a, type="subscription.created").get()
    assert (event.entity_type, event.entity_id) == ("subscription", str(stored.pk))
    assert event.payload["host"] == "hooks.example.com"
    assert created.hint.lines() == ["Next: list_subscriptions {}"]


def test_the_secret_is_shown_once_and_stored_only_sealed(ws_a, alice, public_dns):
    created = _create(ws_a, alice)
    secret = created.secret
    assert secret.startswith("whsec_") and secret in created.summary()
    assert created.payload()["secret"] == secret
    stored = Subscription.objects.get(pk=created.subscription.pk)
    assert secret not in stored.secret_sealed and vault.unseal(stored.secret_sealed) == secret
    listing = subscriptions_list(workspace=ws_a, by_seat=_seat(ws_a, alice))
    assert secret not in listing.summary() and secret not in str(listing.payload())
    assert not any(secret in str(e.payload) for e in Event.objects.all())


def test_the_50th_subscription_is_accepted_and_the_51st_refused(ws_a, alice, public_dns):
    for n in range(MAX_PER_WORKSPACE - 1):
        _create(ws_a, alice, url=f"{URL}/{n}")
    fiftieth = _create(ws_a, alice, url=f"{URL}/last")
    assert Subscription.objects.filter(workspace=ws_a).count() == MAX_PER_WORKSPACE == 50
    assert fiftieth.subscription.pk
    events = Event.objects.count()
    with pytest.raises(WeftError) as refused:
        _create(ws_a, alice, url=f"{URL}/one-too-many")
    assert refused.value.code == "subscription_limit_reached"
    assert refused.value.fix.lines() == ["Fix: list_subscriptions {}"]
    assert Subscription.objects.filter(workspace=ws_a).count() == 50
    assert Event.objects.count() == events


def test_another_workspace_has_its_own_50(ws_a, alice, ws_b, carol, public_dns):
    for n in range(MAX_PER_WORKSPACE):
        _create(ws_a, alice, url=f"{URL}/{n}")
    assert _create(ws_b, carol).subscription.workspace_id == ws_b.pk


@pytest.mark.parametrize(
    ("spec", "field", "fix"),
    [
        (
            {"url": "http://hooks.example.com/weft"},
            "url",
            'Fix: subscribe {"eventTypes": ["task.created"], "url": "https://hooks.example.com/weft"}',
        ),
        (
            {"event_types": None},
            "filter",
            'Fix: subscribe {"entityType": "task", "url": "https://hooks.example.com/weft"}',
        ),
        (
            {"event_types": ["task.created", "Bad Type"]},
            "eventTypes[1]",
            'Fix: subscribe {"eventTypes": ["task.created"], "url": "https://hooks.example.com/weft"}',
        ),
    ],
)
def test_a_refusal_fixes_the_call_where_weft_knows_a_valid_value(ws_a, alice, public_dns, spec, field, fix):
    with pytest.raises(WeftError) as refused:
        _create(ws_a, alice, **spec)
    assert refused.value.code == "invalid_argument"
    assert refused.value.details["field"] == field
    assert refused.value.fix.lines() == [fix]
    assert not Subscription.objects.exists()


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("loopback.example.com", "127.0.0.1"),
        ("internal.example.com", "10.0.0.1"),
        ("metadata.example.com", "169.254.169.254"),
        ("six.example.com", "::1"),
        ("mapped.example.com", "::ffff:127.0.0.1"),
    ],
)
def test_a_url_resolving_to_a_private_address_is_refused_outside_debug(
    ws_a, alice, monkeypatch, host, address
):
    fake_dns(monkeypatch, {host: address}, default=None)
    with pytest.raises(WeftError) as refused:
        _create(ws_a, alice, url=f"https://{host}/weft")
    assert refused.value.code == "invalid_argument"
    assert address in refused.value.message
    assert not Subscription.objects.exists()


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]"])
def test_an_ip_literal_that_is_private_is_refused_outside_debug(ws_a, alice, monkeypatch, address):
    fake_dns(monkeypatch, {}, default=None)
    with pytest.raises(WeftError, match="public addresses only"):
        _create(ws_a, alice, url=f"https://{address}/weft")


def test_in_debug_http_to_loopback_is_accepted(ws_a, alice, settings):
    settings.DEBUG = True
    assert _create(ws_a, alice, url="http://127.0.0.1:9999/in").subscription.pk
    assert _create(ws_a, alice, url="http://localhost:9999/in").subscription.pk
    with pytest.raises(WeftError, match="https"):
        _create(ws_a, alice, url="http://hooks.example.com/in")


def test_members_and_their_agents_may_not_manage_subscriptions(ws_a, alice, bob, public_dns):
    with pytest.raises(WeftError) as refused:
        subscription_create(workspace=ws_a, url=URL, event_types=["task.created"], by_seat=_seat(ws_a, bob))
    assert refused.value.code == "permission_denied"
    bobs_agent = AgentConnection.objects.create(workspace=ws_a, user=bob, name="Bob's agent")
    with pytest.raises(WeftError, match="owners and admins"):
        subscription_create(workspace=ws_a, url=URL, event_types=["task.created"], by_connection=bobs_agent)
    alices_agent = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Alice's agent")
    created = subscription_create(
        workspace=ws_a, url=URL, event_types=["task.created"], by_connection=alices_agent
    )
    with pytest.raises(WeftError, match="owners and admins"):
        subscription_delete(subscription=created.subscription, by_connection=bobs_agent)
    with pytest.raises(WeftError, match="owners and admins"):
        subscriptions_list(workspace=ws_a, by_connection=bobs_agent)
    assert len(subscriptions_list(workspace=ws_a, by_connection=alices_agent).subscriptions) == 1
    assert not Subscription.objects.exclude(pk=created.subscription.pk).exists()


def test_a_seat_of_another_workspace_may_not_manage_this_one(ws_a, ws_b, carol, public_dns):
    with pytest.raises(WeftError, match="owners and admins"):
        subscription_create(workspace=ws_a, url=URL, event_types=["task.created"], by_seat=_seat(ws_b, carol))


def test_delete_removes_it_and_emits(ws_a, alice, public_dns):
    created = _create(ws_a, alice)
    result = subscription_delete(subscription=created.subscription, by_seat=_seat(ws_a, alice))
    assert not Subscription.objects.exists()
    assert (
        Event.objects.filter(type="subscription.deleted", entity_id=str(created.subscription.pk)).count() == 1
    )
    assert result.hint.lines() == ["Done."]


def test_disable_emits_once(ws_a, alice, public_dns):
    created = _create(ws_a, alice)
    assert subscription_disable(
        subscription_id=created.subscription.pk, reason="the receiver answered 410 Gone"
    )
    assert not subscription_disable(subscription_id=created.subscription.pk, reason="again")
    assert Event.objects.filter(type="subscription.disabled").count() == 1
    stored = Subscription.objects.get()
    assert (stored.state, stored.disabled_reason) == (Subscription.DISABLED, "the receiver answered 410 Gone")


def test_a_correction_that_would_be_refused_too_is_not_offered(ws_a, alice, monkeypatch):
    fake_dns(monkeypatch, {}, default=None)
    with pytest.raises(WeftError) as refused:
        _create(ws_a, alice, url="http://127.0.0.1:8000/in")
    assert refused.value.fix.lines() == ["Fix: list_subscriptions {}"]


def test_the_51st_is_a_conflict_on_the_web_and_rest_surfaces(ws_a, alice, public_dns):
    for n in range(MAX_PER_WORKSPACE):
        _create(ws_a, alice, url=f"{URL}/{n}")
    with pytest.raises(WeftError) as refused:
        _create(ws_a, alice, url=f"{URL}/one-too-many")
    assert refused.value.http_status == 409 == HTTP_STATUS["conflict"]
