"""`weft login`'s device authorization grant (RFC 8628): the code pair, the person's approval
for one of their workspaces, the polled token, and the refusals around them."""

from __future__ import annotations

import threading
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken, DeviceGrant

from accounts.models import AgentConnection, User, Workspace
from accounts.oauth_ratelimit import RateWindow
from weft.mcp.verifier import verify_in_request

pytestmark = pytest.mark.django_db

DEVICE = "urn:ietf:params:oauth:grant-type:device_code"


def _form(client: Client, path: str, data: dict[str, str]):
    return client.post(path, urlencode(data), content_type="application/x-www-form-urlencoded")


def _pair(client: Client, client_id: str = "weft-cli") -> dict:
    response = _form(client, "/o/device-authorization/", {"client_id": client_id, "scope": "mcp"})
    assert response.status_code == 200, response.content
    return response.json()


def _poll(client: Client, device_code: str) -> tuple[int, dict]:
    """One poll, as a device waiting its interval would make it."""
    DeviceGrant.objects.update(last_checked=timezone.now() - timedelta(seconds=60))
    response = _form(
        client, "/o/token/", {"grant_type": DEVICE, "device_code": device_code, "client_id": "weft-cli"}
    )
    return response.status_code, response.json()


def _approve(person: Client, user_code: str, workspace: str, action: str = "accept") -> int:
    entered = person.post("/o/device/", {"user_code": user_code})
    assert entered.status_code == 302, entered.content
    assert entered["Location"] == f"/o/device/weft-cli/{user_code}/"
    page = person.get(entered["Location"])
    assert page.status_code == 200
    return person.post(entered["Location"], {"action": action, "workspace": workspace}).status_code


def test_a_device_signs_in_for_the_workspace_the_person_picks(alice: User, ws_a: Workspace) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    assert pair["verification_uri"].endswith("/o/device/")
    assert _poll(device, pair["device_code"]) == (400, {"error": "authorization_pending"})
    assert _approve(person, pair["user_code"], ws_a.slug) == 302
    status, body = _poll(device, pair["device_code"])
    assert status == 200, body
    assert body["refresh_token"]
    connection = AgentConnection.objects.get(user=alice, application__client_id="weft-cli", revoked_at=None)
    assert connection.workspace_id == ws_a.pk
    verified = verify_in_request(body["access_token"])
    assert verified is not None and verified.claims
    assert verified.claims["workspace_id"] == ws_a.pk
    assert verified.claims["connection_id"] == connection.pk
    done = person.get(f"/o/device/weft-cli/{pair['user_code']}/done/")
    assert b"signed in" in done.content


def test_a_device_code_is_exchanged_once(alice: User, ws_a: Workspace) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    _approve(person, pair["user_code"], ws_a.slug)
    assert _poll(device, pair["device_code"])[0] == 200
    status, body = _poll(device, pair["device_code"])
    assert status == 400, body
    assert AccessToken.objects.filter(application__client_id="weft-cli").count() == 1


def test_a_device_polling_faster_than_its_interval_is_told_to_slow_down(alice: User, ws_a: Workspace) -> None:
    device = Client()
    pair = _pair(device)
    assert _poll(device, pair["device_code"]) == (400, {"error": "authorization_pending"})
    early = _form(
        device,
        "/o/token/",
        {"grant_type": DEVICE, "device_code": pair["device_code"], "client_id": "weft-cli"},
    )
    assert early.json() == {"error": "slow_down"}


def test_a_device_code_of_another_client_is_unknown(alice: User, ws_a: Workspace) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    _approve(person, pair["user_code"], ws_a.slug)
    DeviceGrant.objects.update(client_id="someone-else")
    status, body = _poll(device, pair["device_code"])
    assert (status, body["error"]) == (400, "invalid_grant")
    assert not AccessToken.objects.exists()


def test_a_missing_device_code_is_an_invalid_request(db: None) -> None:
    _pair(Client())
    response = _form(Client(), "/o/token/", {"grant_type": DEVICE, "client_id": "weft-cli"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_a_denied_device_gets_no_token(alice: User, ws_a: Workspace) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    assert _approve(person, pair["user_code"], ws_a.slug, action="deny") == 302
    assert _poll(device, pair["device_code"]) == (400, {"error": "access_denied"})
    assert not AgentConnection.objects.filter(user=alice, application__client_id="weft-cli").exists()


def test_a_foreign_workspace_is_refused_and_the_code_stays_pending(
    alice: User, ws_a: Workspace, ws_b: Workspace
) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    assert _approve(person, pair["user_code"], ws_b.slug) == 400
    assert not AgentConnection.objects.filter(workspace=ws_b).exists()
    assert _poll(device, pair["device_code"]) == (400, {"error": "authorization_pending"})
    # The same code can still be approved for the person's own workspace.
    assert (
        person.post(
            f"/o/device/weft-cli/{pair['user_code']}/", {"action": "accept", "workspace": ws_a.slug}
        ).status_code
        == 302
    )


def test_another_person_cannot_open_a_code_someone_else_entered(
    alice: User, carol: User, ws_a: Workspace
) -> None:
    device, person, other = Client(), Client(), Client()
    person.force_login(alice)
    other.force_login(carol)
    pair = _pair(device)
    person.post("/o/device/", {"user_code": pair["user_code"]})
    url = f"/o/device/weft-cli/{pair['user_code']}/"
    assert other.get(url).status_code == 404
    assert other.post(url, {"action": "accept", "workspace": ws_a.slug}).status_code == 404
    assert _poll(device, pair["device_code"]) == (400, {"error": "authorization_pending"})


def test_the_code_page_asks_a_signed_out_person_to_sign_in() -> None:
    response = Client().get("/o/device/?user_code=ABCD1234")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_an_expired_code_cannot_be_approved(alice: User, ws_a: Workspace) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    person.post("/o/device/", {"user_code": pair["user_code"]})
    DeviceGrant.objects.update(expires=timezone.now() - timedelta(seconds=1))
    response = person.post(
        f"/o/device/weft-cli/{pair['user_code']}/", {"action": "accept", "workspace": ws_a.slug}
    )
    assert response.status_code == 409
    assert not AgentConnection.objects.filter(application__client_id="weft-cli").exists()
    assert _poll(device, pair["device_code"])[1]["error"] == "expired_token"


def test_a_wrong_code_is_refused_on_the_page(alice: User) -> None:
    person = Client()
    person.force_login(alice)
    response = person.post("/o/device/", {"user_code": "NOTACODE"})
    assert response.status_code == 200
    assert b"Incorrect user code" in response.content


def test_an_unknown_device_code_is_an_oauth_error_not_a_crash(db: None) -> None:
    _pair(Client())
    status, body = _poll(Client(), "no-such-device-code")
    assert status == 400
    assert body["error"] in {"invalid_grant", "invalid_request"}


@pytest.mark.parametrize("client_id", ["", "no-such-client"])
def test_only_a_device_client_may_ask_for_a_code(client_id: str, db: None) -> None:
    response = _form(Client(), "/o/device-authorization/", {"client_id": client_id})
    assert response.status_code == 400
    assert DeviceGrant.objects.count() == 0


def test_a_client_registered_for_the_code_flow_may_not_start_a_device_sign_in(db: None) -> None:
    registered = (
        Client()
        .post(
            "/o/register/",
            {
                "client_name": "Claude Code",
                "redirect_uris": ["http://localhost/callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
            content_type="application/json",
        )
        .json()
    )
    response = _form(Client(), "/o/device-authorization/", {"client_id": registered["client_id"]})
    assert response.status_code == 400
    assert response.json()["error"] == "unauthorized_client"


@override_settings(WEFT_DEVICE_RATE_PER_HOUR=3)
def test_code_requests_are_limited_per_address_at_the_exact_edge(db: None) -> None:
    device = Client()
    for _ in range(3):
        _pair(device)
    refused = _form(device, "/o/device-authorization/", {"client_id": "weft-cli"})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert DeviceGrant.objects.count() == 3
    assert RateWindow.objects.filter(key__startswith="device:").count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_polls_of_an_approved_code_get_one_token(
    on_postgres: None, alice: User, ws_a: Workspace
) -> None:
    device, person = Client(), Client()
    person.force_login(alice)
    pair = _pair(device)
    _approve(person, pair["user_code"], ws_a.slug)
    DeviceGrant.objects.update(last_checked=timezone.now() - timedelta(seconds=60))
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def poll() -> None:
        barrier.wait()
        try:
            statuses.append(
                _form(
                    Client(),
                    "/o/token/",
                    {"grant_type": DEVICE, "device_code": pair["device_code"], "client_id": "weft-cli"},
                ).status_code
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=poll) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == [200, 400, 400, 400]
    assert AccessToken.objects.filter(application__client_id="weft-cli").count() == 1
