"""Web Push of Inbox items: a device's subscription, one message per item and device sent to a
local push service, signed with the VAPID key (checked here) and encrypted for the device
(decrypted here), quiet hours, push off, unsubscribing, a gone subscription, and the SSRF rule."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from datetime import time as clock_time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from django.core import mail
from django.test import Client, override_settings
from django.utils import timezone

from accounts.models import AgentConnection, User, Workspace
from boards.reminders import inbox_remind
from boards.services import run_complete, task_claim, task_create
from notify.keys import b64url, generate
from notify.models import NotifySettings, PushMessage, PushSubscription
from notify.push import push_send_due
from notify.rules import in_quiet_hours
from weft import events

pytestmark = pytest.mark.django_db
PRIVATE, PUBLIC = generate()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PushService:
    """A push service on loopback: records each POST, answers `status`."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.status = 201
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                service.received.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                self.send_response(service.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Browser:
    """A browser's side of a subscription: its P-256 key pair and auth secret."""

    def __init__(self, service: PushService, name: str = "phone") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.endpoint = f"{service.origin}/push/{name}"

    def subscription(self) -> dict[str, Any]:
        public = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)}}

    def decrypt(self, body: bytes) -> dict[str, Any]:
        return json.loads(
            http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm")
        )


@pytest.fixture
def service() -> Iterator[PushService]:
    push = PushService()
    yield push
    push.server.shutdown()


@pytest.fixture(autouse=True)
def vapid() -> Iterator[None]:
    with override_settings(
        WEFT_VAPID_PRIVATE_KEY=PRIVATE,
        WEFT_VAPID_PUBLIC_KEY=PUBLIC,
        WEFT_VAPID_SUBJECT="mailto:ops@weft.test",
        DEBUG=True,
    ):
        yield


def _subscribe(user: User, browser: Browser) -> int:
    client = Client()
    client.force_login(user)
    answer = client.post("/push/subscriptions/", browser.subscription(), content_type="application/json")
    return answer.status_code


def _inbox_item(ws: Workspace, agent: AgentConnection, title: str = "Ship the release") -> None:
    task = task_create(workspace=ws, title=title, review_required=True).task
    claim = task_claim(task_id=task.pk, connection=agent)
    run_complete(workspace=ws, run_id=claim.run.run_id, lease_token=claim.lease_token, outcome="Shipped.")
    events.relay()


def _verify_vapid(authorization: str, audience: str) -> dict[str, Any]:
    """The VAPID header (RFC 8292): `vapid t=JWT, k=KEY`; the JWT is ES256 under our public key."""
    scheme, _, params = authorization.partition(" ")
    assert scheme == "vapid"
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    head, claims, signature = fields["t"].split(".")
    raw = _unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _unb64(PUBLIC))
    public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    assert fields["k"] == PUBLIC
    assert json.loads(_unb64(head))["alg"] == "ES256"
    decoded = json.loads(_unb64(claims))
    assert decoded["aud"] == audience and decoded["sub"] == "mailto:ops@weft.test"
    assert decoded["exp"] > time.time()
    return decoded


def test_an_inbox_item_sends_one_signed_encrypted_push(service, alice, ws_a, agent) -> None:
    phone = Browser(service)
    assert _subscribe(alice, phone) == 201
    _inbox_item(ws_a, agent)
    events.relay()  # a second relay adds nothing
    assert PushMessage.objects.count() == 1
    assert push_send_due() == 1
    assert push_send_due() == 0  # sent once
    [sent] = service.received
    assert sent["path"] == "/push/phone"
    assert sent["headers"]["content-encoding"] == "aes128gcm" and int(sent["headers"]["ttl"]) > 0
    _verify_vapid(sent["headers"]["authorization"], service.origin)
    message = phone.decrypt(sent["body"])
    assert message["title"] == "Review waiting in Acme" and message["body"] == "Ship the release"
    assert message["url"] == f"/w/{ws_a.slug}/inbox/"
    assert PushMessage.objects.get().state == "sent"


def test_a_forged_signature_would_be_caught(service, alice, ws_a, agent) -> None:
    """The check above can fail: the same header under another key does not verify."""
    _subscribe(alice, Browser(service))
    _inbox_item(ws_a, agent)
    with override_settings(WEFT_VAPID_PRIVATE_KEY=generate()[0]):
        push_send_due()
    with pytest.raises(InvalidSignature):
        _verify_vapid(service.received[0]["headers"]["authorization"], service.origin)


def test_every_device_of_every_person_with_a_seat_and_nobody_else(
    service, alice, bob, carol, ws_a, agent
) -> None:
    devices = {"alice-phone": alice, "alice-laptop": alice, "bob-phone": bob, "carol-phone": carol}
    for name, user in devices.items():
        assert _subscribe(user, Browser(service, name)) == 201
    _inbox_item(ws_a, agent)
    assert push_send_due() == 3
    assert sorted(r["path"] for r in service.received) == [
        "/push/alice-laptop",
        "/push/alice-phone",
        "/push/bob-phone",
    ]


@pytest.mark.parametrize(
    ("start", "end", "suppressed"),
    [(clock_time(22), clock_time(7), True), (clock_time(7), clock_time(22), False), (None, None, False)],
)
def test_quiet_hours_suppress_the_push(service, alice, ws_a, agent, start, end, suppressed) -> None:
    NotifySettings.objects.create(user=alice, quiet_start=start, quiet_end=end, time_zone="Europe/Berlin")
    _subscribe(alice, Browser(service))
    _inbox_item(ws_a, agent)
    night = timezone.make_aware(
        datetime(2026, 12, 3, 23, 30), timezone=__import__("zoneinfo").ZoneInfo("Europe/Berlin")
    )
    push_send_due(now=night)
    assert len(service.received) == (0 if suppressed else 1)
    assert PushMessage.objects.get().state == ("suppressed" if suppressed else "sent")


@pytest.mark.parametrize(
    ("local", "start", "end", "quiet"),
    [
        (clock_time(22, 0), clock_time(22), clock_time(7), True),
        (clock_time(6, 59), clock_time(22), clock_time(7), True),
        (clock_time(7, 0), clock_time(22), clock_time(7), False),
        (clock_time(21, 59), clock_time(22), clock_time(7), False),
        (clock_time(12, 0), clock_time(9), clock_time(17), True),
        (clock_time(17, 0), clock_time(9), clock_time(17), False),
        (clock_time(12, 0), clock_time(9), clock_time(9), False),
    ],
)
def test_quiet_hours_at_their_edges(local, start, end, quiet) -> None:
    assert in_quiet_hours(local, start, end) is quiet


def test_push_off_sends_nothing(service, alice, ws_a, agent) -> None:
    NotifySettings.objects.create(user=alice, push=False)
    _subscribe(alice, Browser(service))
    _inbox_item(ws_a, agent)
    assert push_send_due() == 0 and not PushMessage.objects.exists()


def test_unsubscribing_stops_the_push(service, alice, ws_a, agent) -> None:
    phone = Browser(service)
    _subscribe(alice, phone)
    client = Client()
    client.force_login(alice)
    gone = client.post(
        "/push/subscriptions/delete/", {"endpoint": phone.endpoint}, content_type="application/json"
    )
    assert gone.status_code == 200
    _inbox_item(ws_a, agent)
    assert push_send_due() == 0 and service.received == []


def test_a_person_cannot_unsubscribe_someone_elses_device(service, alice, carol) -> None:
    phone = Browser(service)
    _subscribe(alice, phone)
    client = Client()
    client.force_login(carol)
    answer = client.post(
        "/push/subscriptions/delete/", {"endpoint": phone.endpoint}, content_type="application/json"
    )
    assert answer.status_code == 404 and PushSubscription.objects.filter(user=alice).exists()


def test_a_subscription_the_push_service_says_is_gone_is_deleted(service, alice, ws_a, agent) -> None:
    _subscribe(alice, Browser(service))
    service.status = 410
    _inbox_item(ws_a, agent)
    assert push_send_due() == 0
    assert not PushSubscription.objects.exists()


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:9/push",
        "https://10.0.0.5/push",
        "https://evil.example.com/push",
        "ftp://fcm.googleapis.com/x",
    ],
)
def test_only_a_push_service_may_be_the_endpoint(alice, endpoint) -> None:
    client = Client()
    client.force_login(alice)
    body = {"endpoint": endpoint, "keys": {"p256dh": "BPk", "auth": "x"}}
    with override_settings(DEBUG=False):
        answer = client.post("/push/subscriptions/", body, content_type="application/json")
    assert answer.status_code == 400 and not PushSubscription.objects.exists()


def test_a_push_service_endpoint_is_accepted(alice) -> None:
    client = Client()
    client.force_login(alice)
    body = {"endpoint": "https://fcm.googleapis.com/fcm/send/abc123", "keys": {"p256dh": "BPk", "auth": "x"}}
    with override_settings(DEBUG=False):
        assert client.post("/push/subscriptions/", body, content_type="application/json").status_code == 201


def test_a_signed_out_browser_cannot_subscribe(service) -> None:
    answer = Client().post(
        "/push/subscriptions/", Browser(service).subscription(), content_type="application/json"
    )
    assert answer.status_code == 302 and not PushSubscription.objects.exists()


def test_the_email_reminder_respects_email_off(alice, bob, ws_a, agent) -> None:
    NotifySettings.objects.create(user=bob, email=False)
    _inbox_item(ws_a, agent)
    from boards.models import InboxItem

    InboxItem.objects.update(created_at=timezone.now() - timedelta(minutes=30))
    assert inbox_remind() == 1
    assert [m.to for m in mail.outbox] == [[alice.email]]


def test_the_settings_page_saves_and_the_worker_and_manifest_are_served(alice) -> None:
    client = Client()
    client.force_login(alice)
    page = client.get("/account/notifications/")
    assert page.status_code == 200 and f'data-key="{PUBLIC}"' in page.content.decode()
    saved = client.post(
        "/account/notifications/",
        {"push": "on", "quiet_start": "22:00", "quiet_end": "07:00", "time_zone": "Europe/Berlin"},
    )
    assert saved.status_code == 302
    settings = NotifySettings.objects.get(user=alice)
    assert (settings.push, settings.email, settings.quiet_start) == (True, False, clock_time(22))
    assert client.post("/account/notifications/", {"time_zone": "Mars/Olympus"}).status_code == 400
    worker = client.get("/sw.js")
    assert worker["Service-Worker-Allowed"] == "/" and b"showNotification" in worker.content
    manifest = client.get("/manifest.webmanifest").json()
    assert manifest["display"] == "standalone" and manifest["icons"]


def test_without_a_vapid_key_no_message_waits(service, alice, ws_a, agent) -> None:
    _subscribe(alice, Browser(service))
    with override_settings(WEFT_VAPID_PRIVATE_KEY="", WEFT_VAPID_PUBLIC_KEY=""):
        _inbox_item(ws_a, agent)
        assert push_send_due() == 0
    assert not PushMessage.objects.exists()


@pytest.mark.parametrize("auth", ["a\x00b", "a b", "x" * 201, ""])
def test_a_key_that_is_not_base64url_is_refused(alice, auth) -> None:
    client = Client()
    client.force_login(alice)
    body = {"endpoint": "https://fcm.googleapis.com/fcm/send/abc", "keys": {"p256dh": "BPk", "auth": auth}}
    with override_settings(DEBUG=False):
        answer = client.post("/push/subscriptions/", body, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_argument"
    assert not PushSubscription.objects.exists()
