"""The pure rules of webhooks: filters, backoff, signatures, secrets at rest, address checks."""

from __future__ import annotations

import base64
import ipaddress
import socket
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.fernet import InvalidToken
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from hooks import addresses, signing, vault
from hooks.rules import RETRY_DELAYS, Filter, FilterError, clean_filter, next_attempt

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def test_it_requires_a_filter():
    with pytest.raises(FilterError) as refused:
        clean_filter(event_types=None, entity_type=None, entity_id=None)
    assert refused.value.field == "filter"
    with pytest.raises(FilterError):
        clean_filter(event_types=[], entity_type="  ", entity_id="")


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"event_types": ["Task.Created"]}, "eventTypes[0]"),
        ({"event_types": ["task"]}, "eventTypes[0]"),
        ({"event_types": ["task.created"] * 31}, "eventTypes"),
        ({"event_types": [3]}, "eventTypes[0]"),
        ({"entity_type": "Task!"}, "entityType"),
        ({"entity_type": "t" * 33}, "entityType"),
        ({"entity_type": "task", "entity_id": "1" * 65}, "entityId"),
        ({"entity_type": "task", "entity_id": "1\x002"}, "entityId"),
        ({"entity_id": "7"}, "entityType"),
    ],
)
def test_it_refuses_a_filter_part_past_its_rule(spec, field):
    with pytest.raises(FilterError) as refused:
        clean_filter(**{"event_types": None, "entity_type": None, "entity_id": None, **spec})
    assert refused.value.field == field


def test_it_keeps_each_event_type_once_in_order():
    found = clean_filter(
        event_types=["run.completed", "task.created", "run.completed"], entity_type=None, entity_id=None
    )
    assert found.event_types == ("run.completed", "task.created")


@pytest.mark.parametrize(
    ("flt", "event", "expected"),
    [
        (Filter(event_types=("task.created",)), ("task.created", "task", "1"), True),
        (Filter(event_types=("task.created",)), ("task.updated", "task", "1"), False),
        (Filter(entity_type="run"), ("run.started", "run", "9"), True),
        (Filter(entity_type="run"), ("task.created", "task", "9"), False),
        (Filter(entity_id="7"), ("task.updated", "task", "7"), True),
        (Filter(entity_id="7"), ("task.updated", "task", "70"), False),
        (Filter(event_types=("task.updated",), entity_id="7"), ("task.updated", "task", "7"), True),
        (Filter(event_types=("task.updated",), entity_id="7"), ("task.created", "task", "7"), False),
        (Filter(entity_type="task", entity_id="7"), ("run.started", "run", "7"), False),
    ],
)
def test_every_given_part_of_a_filter_must_match(flt, event, expected):
    type_, entity_type, entity_id = event
    assert flt.matches(type=type_, entity_type=entity_type, entity_id=entity_id) is expected


def test_the_backoff_is_5s_5min_30min_2h_5h_10h_then_failed():
    waits = [next_attempt(failures=n, now=NOW) for n in range(1, 8)]
    assert [w - NOW if w else None for w in waits] == [
        timedelta(seconds=5),
        timedelta(minutes=5),
        timedelta(minutes=30),
        timedelta(hours=2),
        timedelta(hours=5),
        timedelta(hours=10),
        None,
    ]
    assert len(RETRY_DELAYS) == 6
    assert next_attempt(failures=0, now=NOW) is None


def test_a_secret_is_whsec_and_24_random_bytes():
    secret = signing.new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 24
    assert signing.new_secret() != secret


def test_the_signature_verifies_with_the_standard_webhooks_library():
    secret = signing.new_secret()
    body = '{"id":"1","type":"task.created"}'
    stamp = int(datetime.now(UTC).timestamp())
    headers = signing.headers(secret=secret, message_id="msg_1", timestamp=stamp, body=body)
    assert headers["webhook-signature"].startswith("v1,")
    assert Webhook(secret).verify(body, headers) == {"id": "1", "type": "task.created"}
    with pytest.raises(WebhookVerificationError, match="No matching signature found"):
        Webhook(signing.new_secret()).verify(body, headers)


def test_a_sealed_secret_unseals_and_does_not_show_it(settings):
    secret = signing.new_secret()
    sealed = vault.seal(secret)
    assert secret not in sealed and secret.removeprefix("whsec_") not in sealed
    assert vault.unseal(sealed) == secret
    settings.SECRET_KEY = "another key"
    with pytest.raises(InvalidToken):
        vault.unseal(sealed)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.1.2.3",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "100.64.0.1",
        "::1",
        "::",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
    ],
)
def test_it_refuses_every_address_that_is_not_public(address):
    assert addresses.refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"]
)
def test_it_accepts_public_addresses(address):
    assert addresses.refusal(ipaddress.ip_address(address)) is None


def _answers(*ips: str):
    def resolver(host, port, **kwargs):
        family = lambda ip: socket.AF_INET6 if ":" in ip else socket.AF_INET  # noqa: E731
        return [(family(ip), socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ips]

    return resolver


def test_a_name_that_resolves_to_any_private_address_is_refused():
    with pytest.raises(FilterError, match=r"10\.0\.0\.1"):
        addresses.resolve(
            "hooks.example.com", 443, allow_private=False, resolver=_answers("93.184.216.34", "10.0.0.1")
        )
    assert (
        addresses.resolve("hooks.example.com", 443, allow_private=False, resolver=_answers("93.184.216.34"))
        == "93.184.216.34"
    )
    assert (
        addresses.resolve("hooks.example.com", 443, allow_private=True, resolver=_answers("10.0.0.1"))
        == "10.0.0.1"
    )


def test_a_name_that_does_not_resolve_is_refused():
    def fails(*args, **kwargs):
        raise socket.gaierror("no such host")

    with pytest.raises(FilterError, match="does not resolve"):
        addresses.resolve("nowhere.invalid", 443, allow_private=False, resolver=fails)


@pytest.mark.parametrize(
    ("url", "debug", "reason"),
    [
        ("http://hooks.example.com/x", False, "https"),
        ("http://hooks.example.com/x", True, "https"),
        ("http://127.0.0.1:9000/x", False, "https"),
        ("ftp://hooks.example.com/x", True, "https"),
        ("https:///x", True, "host"),
        ("https://user:pw@hooks.example.com/x", True, "password"),
        ("https://hooks.example.com:99999/x", True, "valid"),
        ("https://hooks.example.com/" + "x" * 2000, True, "2000"),
    ],
)
def test_it_refuses_urls_weft_does_not_send_to(url, debug, reason):
    with pytest.raises(FilterError, match=reason):
        addresses.target(url, debug=debug)


def test_http_is_allowed_for_loopback_hosts_in_debug_only():
    assert addresses.target("http://localhost:8000/in", debug=True).port == 8000
    assert addresses.target("http://[::1]:8000/in", debug=True).host == "::1"
    found = addresses.target("https://Hooks.Example.com/in?x=1", debug=False)
    assert (found.host, found.port, found.path) == ("hooks.example.com", 443, "/in?x=1")
    assert found.pinned("93.184.216.34") == "https://93.184.216.34:443/in?x=1"
    assert found.pinned("2606:4700::1") == "https://[2606:4700::1]:443/in?x=1"
    assert found.host_header == "hooks.example.com"
