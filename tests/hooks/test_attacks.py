"""Attacks on subscribe and delivery: malformed input, addresses that hide a private host, retries.

Each refusal is `invalid_argument` (or `conflict`) with a Fix: hint, and stores nothing.
"""

from __future__ import annotations

import json

import pytest

from accounts.models import Seat
from boards.services import task_create
from hooks.delivery import deliveries_send
from hooks.models import Delivery, Subscription
from hooks.services import subscription_create
from tests.hooks.conftest import fake_dns
from weft.errors import WeftError
from weft.models import Event

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/in"


def _create(ws, user, **spec):
    seat = Seat.objects.select_related("workspace", "user").get(workspace=ws, user=user)
    return subscription_create(
        workspace=ws, by_seat=seat, **{"url": URL, "event_types": ["task.created"], **spec}
    )


def _refused(ws, user, **spec) -> WeftError:
    events = Event.objects.count()
    with pytest.raises(WeftError) as refused:
        _create(ws, user, **spec)
    assert refused.value.fix.lines()[0].startswith("Fix: "), refused.value.fix.lines()
    assert not Subscription.objects.exists() and Event.objects.count() == events
    return refused.value


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"url": "https://hooks.example.com/a\x00b"}, "url"),
        ({"url": "https://hooks.exa\x00mple.com/a"}, "url"),
        ({"url": "https://hooks.example.com/a\r\nX-Injected: 1"}, "url"),
        ({"url": "https://hooks.example.com/a\tb"}, "url"),
        ({"url": "https://hooks.example.com/a b"}, "url"),
        ({"url": "https://bücher.example/in"}, "url"),
        ({"url": "https://hooks.example.com/" + "x" * 1_000_000}, "url"),
        ({"event_types": ["task.created\x00"]}, "eventTypes[0]"),
        ({"event_types": ["task." + "x" * 100_000]}, "eventTypes[0]"),
        ({"event_types": ["task.created"] * 31}, "eventTypes"),
        ({"event_types": None, "entity_type": "task\x00"}, "entityType"),
        ({"event_types": None, "entity_type": "task", "entity_id": "7\x00"}, "entityId"),
        ({"event_types": None, "entity_type": "task", "entity_id": "7" * 100_000}, "entityId"),
        ({"event_types": [7]}, "eventTypes[0]"),
    ],
)
def test_nul_control_characters_and_huge_strings_are_refused(ws_a, alice, public_dns, spec, field):
    error = _refused(ws_a, alice, **spec)
    assert (error.code, error.details["field"]) == ("invalid_argument", field)
    assert len(error.message) < 300, "a huge value is not echoed back"


@pytest.mark.parametrize(
    ("spec", "field", "fix"),
    [
        (
            {"event_types": ["task.created", "task.exploded"]},
            "eventTypes[1]",
            'Fix: subscribe {"eventTypes": ["task.created"], "url": "https://hooks.example.com/in"}',
        ),
        ({"event_types": ["task.create"]}, "eventTypes[0]", 'Fix: subscribe {"entityType": "task", "url": '),
        ({"event_types": None, "entity_type": "tasks"}, "entityType", "Fix: list_subscriptions {}"),
    ],
)
def test_an_event_or_entity_type_no_write_emits_is_refused(ws_a, alice, public_dns, spec, field, fix):
    error = _refused(ws_a, alice, **spec)
    assert (error.code, error.details["field"]) == ("invalid_argument", field)
    assert error.fix.lines()[0].startswith(fix)


def test_a_misspelt_type_is_told_the_types_of_its_family(ws_a, alice, public_dns):
    error = _refused(ws_a, alice, event_types=["run.complete"])
    assert "run.completed" in error.message and "run.started" in error.message


@pytest.mark.parametrize(
    "url",
    [
        "https://user:secret@hooks.example.com/in",
        "https://user@hooks.example.com/in",
        "https://:secret@hooks.example.com/in",
        "https://hooks.example.com@10.0.0.1/in",
    ],
)
def test_a_url_with_credentials_is_refused(ws_a, alice, public_dns, url):
    error = _refused(ws_a, alice, url=url)
    assert "user name or password" in error.message


@pytest.mark.parametrize(
    "url",
    [
        "https://2130706433/in",  # 127.0.0.1 in decimal
        "https://0177.0.0.1/in",  # in octal
        "https://0x7f000001/in",  # in hex
        "https://127.1/in",  # the short form
        "https://0/in",  # 0.0.0.0
        "https://[::ffff:127.0.0.1]/in",
        "https://[::ffff:7f00:1]/in",
        "https://[::127.0.0.1]/in",
        "https://[2002:7f00:1::]/in",  # 6to4 of 127.0.0.1
        "https://[64:ff9b::a00:1]/in",  # NAT64 of 10.0.0.1
        "https://[fe80::1%25eth0]/in",
        "https://169.254.169.254/latest/meta-data",
    ],
)
def test_every_spelling_of_a_private_address_is_refused_outside_debug(ws_a, alice, url):
    # The real resolver: numeric forms resolve without the network, as the sender's would.
    error = _refused(ws_a, alice, url=url)
    assert error.code == "invalid_argument" and "address" in error.message


def test_http_to_a_loopback_number_is_refused_even_in_debug(ws_a, alice, settings):
    settings.DEBUG = True
    error = _refused(ws_a, alice, url="http://2130706433:8000/in")
    assert "https" in error.message


def test_a_name_with_one_private_address_among_public_ones_is_refused_at_subscribe_and_send(
    ws_a, alice, monkeypatch, relay
):
    import socket

    def several(host, port, *args, **kwargs):
        ips = ["93.184.216.34", "10.0.0.7"] if host == "mixed.example.com" else ["93.184.216.34"]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ips]

    monkeypatch.setattr(socket, "getaddrinfo", several)
    error = _refused(ws_a, alice, url="https://mixed.example.com/in")
    assert "10.0.0.7" in error.message
    # Public at subscribe, mixed at send time: the attempt is refused, nothing is sent.
    fake_dns(monkeypatch, {"later.example.com": "93.184.216.34"})
    _create(ws_a, alice, url="https://later.example.com/in")
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *a, **k: several("mixed.example.com", port))
    relay.skip()
    task_create(workspace=ws_a, title="Rebound", by_user=alice)
    relay()
    assert deliveries_send() == 1
    row = Delivery.objects.get()
    assert row.state == Delivery.PENDING and "10.0.0.7" in row.last_error and row.last_status_code is None


def test_a_retried_subscribe_is_refused_as_a_conflict_not_made_twice(ws_a, alice, public_dns):
    first = _create(ws_a, alice, event_types=["task.created", "run.completed"])
    events = Event.objects.count()
    with pytest.raises(WeftError) as refused:
        _create(ws_a, alice, event_types=["run.completed", "task.created", "task.created"])
    assert refused.value.code == "conflict" and refused.value.http_status == 409
    assert refused.value.details == {"subscriptionId": first.subscription.pk}
    assert refused.value.fix.lines() == ["Fix: list_subscriptions {}"]
    assert Subscription.objects.count() == 1 and Event.objects.count() == events
    # Another filter, or the same one once the first was disabled by a 410, is a new subscription.
    assert _create(ws_a, alice, event_types=["task.created"]).subscription.pk
    Subscription.objects.filter(pk=first.subscription.pk).update(state=Subscription.DISABLED)
    assert _create(ws_a, alice, event_types=["task.created", "run.completed"]).subscription.pk


def test_31_distinct_types_are_fixed_to_the_first_30(ws_a, alice, public_dns):
    from weft.event_types import TYPES

    names = sorted(TYPES)[:31]
    error = _refused(ws_a, alice, event_types=names)
    assert error.details["field"] == "eventTypes"
    [line] = error.fix.lines()
    assert (
        line.startswith("Fix: subscribe ")
        and json.loads(line.removeprefix("Fix: subscribe "))["eventTypes"] == names[:30]
    )
