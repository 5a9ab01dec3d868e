"""OAuth 2.1 for agents: discovery, registration, consent with a workspace, tokens, refresh."""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import time_machine
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts.models import AgentConnection

REDIRECT = "http://localhost:53682/callback"


def _register(client: Client, **extra: object) -> dict:
    body = {
        "client_name": "Claude Code",
        "redirect_uris": ["http://localhost/callback", "cursor://anysphere.cursor-mcp/oauth/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **extra,
    }
    response = client.post("/o/register/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _authorize_params(client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s-123",
        "scope": "mcp offline_access",
        "resource": settings.WEFT_MCP_URL,
        **extra,
    }


def _sign_in_and_consent(client: Client, alice, ws, client_id: str, challenge: str) -> dict[str, list[str]]:
    client.force_login(alice)
    params = _authorize_params(client_id, challenge)
    page = client.get("/o/authorize/", params)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Claude Code" in html and "localhost" in html and ws.name in html
    form = page.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data.update(allow="Authorize", workspace=ws.slug)
    response = client.post("/o/authorize/", data)
    assert response.status_code == 302, response.content
    location = response["Location"]
    assert location.startswith(REDIRECT)
    return parse_qs(urlsplit(location).query)


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()


def test_it_publishes_authorization_server_metadata(db):
    body = Client().get("/.well-known/oauth-authorization-server").json()
    assert body["issuer"] == settings.WEFT_BASE_URL
    assert body["authorization_endpoint"] == f"{settings.WEFT_BASE_URL}/o/authorize/"
    assert body["token_endpoint"] == f"{settings.WEFT_BASE_URL}/o/token/"
    assert body["registration_endpoint"] == f"{settings.WEFT_BASE_URL}/o/register/"
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert "none" in body["token_endpoint_auth_methods_supported"]
    assert body["client_id_metadata_document_supported"] is True
    assert body["authorization_response_iss_parameter_supported"] is True
    assert {"mcp", "offline_access"} <= set(body["scopes_supported"])


def test_it_sends_an_anonymous_person_to_sign_in_and_back(db, ws_a):
    client = Client()
    app = _register(client)
    _, challenge = _pkce()
    response = client.get("/o/authorize/", _authorize_params(app["client_id"], challenge))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/o/authorize/")


def test_it_runs_the_whole_flow_and_binds_the_workspace(db, alice, ws_a):
    client = Client()
    app = _register(client)
    assert app["token_endpoint_auth_method"] == "none"
    verifier, challenge = _pkce()
    query = _sign_in_and_consent(client, alice, ws_a, app["client_id"], challenge)
    assert query["state"] == ["s-123"]
    assert query["iss"] == [settings.WEFT_BASE_URL]
    token = Client().post(
        "/o/token/",
        {
            "grant_type": "authorization_code",
            "code": query["code"][0],
            "redirect_uri": REDIRECT,
            "client_id": app["client_id"],
            "code_verifier": verifier,
            "resource": settings.WEFT_MCP_URL,
        },
    )
    assert token.status_code == 200, token.content
    body = token.json()
    assert set(body["scope"].split()) == {"mcp", "offline_access"}
    assert body["refresh_token"]
    connection = AgentConnection.objects.get(user=alice, revoked_at=None)
    assert connection.workspace == ws_a
    assert connection.name == "Claude Code"


def _tokens(db_client: Client, alice, ws) -> tuple[str, dict]:
    app = _register(db_client)
    verifier, challenge = _pkce()
    query = _sign_in_and_consent(db_client, alice, ws, app["client_id"], challenge)
    body = (
        Client()
        .post(
            "/o/token/",
            {
                "grant_type": "authorization_code",
                "code": query["code"][0],
                "redirect_uri": REDIRECT,
                "client_id": app["client_id"],
                "code_verifier": verifier,
            },
        )
        .json()
    )
    return app["client_id"], body


def _refresh(client_id: str, refresh_token: str):
    return Client().post(
        "/o/token/", {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    )


def test_it_rotates_refresh_tokens_with_a_grace_window_then_revokes_the_family(db, alice, ws_a):
    client_id, first = _tokens(Client(), alice, ws_a)
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        second = _refresh(client_id, first["refresh_token"])
        assert second.status_code == 200
        second_body = second.json()
        assert second_body["refresh_token"] != first["refresh_token"]
        # A concurrent client replays the old token inside the grace window: same new pair.
        replay = _refresh(client_id, first["refresh_token"])
        assert replay.status_code == 200
        assert replay.json()["access_token"] == second_body["access_token"]
    with time_machine.travel(start + timedelta(seconds=200), tick=False):
        late = _refresh(client_id, first["refresh_token"])
        assert late.status_code == 400
        assert late.json()["error"] == "invalid_grant"
        # Reuse after the window revokes the whole family, the newest token included.
        assert _refresh(client_id, second_body["refresh_token"]).status_code == 400


def test_it_refuses_pkce_plain(db, alice, ws_a):
    client = Client()
    app = _register(client)
    client.force_login(alice)
    response = client.get(
        "/o/authorize/", _authorize_params(app["client_id"], "x" * 43, code_challenge_method="plain")
    )
    assert response.status_code == 302
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["error"] == ["invalid_request"]


def test_it_refuses_a_missing_code_challenge(db, alice, ws_a):
    client = Client()
    app = _register(client)
    client.force_login(alice)
    params = _authorize_params(app["client_id"], "")
    del params["code_challenge"], params["code_challenge_method"]
    response = client.get("/o/authorize/", params)
    assert response.status_code == 302
    assert "error=invalid_request" in response["Location"]


def test_it_refuses_an_unregistered_redirect(db, alice, ws_a):
    client = Client()
    app = _register(client)
    client.force_login(alice)
    _, challenge = _pkce()
    response = client.get(
        "/o/authorize/",
        _authorize_params(app["client_id"], challenge, redirect_uri="https://evil.example/cb"),
    )
    assert response.status_code == 400


def test_it_accepts_any_port_on_127_0_0_1(db, alice, ws_a):
    client = Client()
    app = _register(client, redirect_uris=["http://127.0.0.1/callback"])
    client.force_login(alice)
    _, challenge = _pkce()
    params = _authorize_params(app["client_id"], challenge, redirect_uri="http://127.0.0.1:49152/callback")
    assert client.get("/o/authorize/", params).status_code == 200


def test_it_refuses_another_resource(db, alice, ws_a):
    client = Client()
    app = _register(client)
    client.force_login(alice)
    _, challenge = _pkce()
    params = _authorize_params(app["client_id"], challenge, resource="https://elsewhere.example/api")
    response = client.get("/o/authorize/", params)
    assert response.status_code == 302
    assert "error=invalid_target" in response["Location"]


def test_it_refuses_a_workspace_without_a_seat(db, alice, ws_a, ws_b):
    client = Client()
    app = _register(client)
    client.force_login(alice)
    _, challenge = _pkce()
    page = client.get("/o/authorize/", _authorize_params(app["client_id"], challenge))
    form = page.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data.update(allow="Authorize", workspace=ws_b.slug)
    assert client.post("/o/authorize/", data).status_code == 400
    assert not AgentConnection.objects.exists()


def test_it_rate_limits_registration_per_address(db, settings):
    settings.WEFT_DCR_RATE_PER_HOUR = 2
    client = Client()
    _register(client)
    _register(client)
    body = {"client_name": "x", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    assert client.post("/o/register/", body, content_type="application/json").status_code == 429


def test_a_new_person_signs_up_verifies_and_lands_back_on_consent(db):
    """The `next` round trip survives sign-up and mandatory email verification."""
    from urllib.parse import quote, unquote

    from django.core import mail

    client = Client()
    app = _register(client)
    _, challenge = _pkce()
    response = client.get("/o/authorize/", _authorize_params(app["client_id"], challenge))
    next_url = unquote(response["Location"].split("next=", 1)[1])
    assert next_url.startswith("/o/authorize/?")

    mail.outbox.clear()
    password = "a long and unusual passphrase 42"
    signup = client.post(
        "/accounts/signup/",
        {"email": "frank@example.com", "password1": password, "password2": password, "next": next_url},
    )
    assert signup.status_code == 302
    assert client.get(next_url).status_code == 302  # not verified yet: no consent page
    [message] = mail.outbox
    [link] = [word for word in str(message.body).split() if "/accounts/confirm-email/" in word]
    confirmed = client.post(link.split("://", 1)[1].split("/", 1)[1].join(["/", ""]))
    assert confirmed.status_code == 302
    assert confirmed["Location"] == next_url
    consent = client.get(confirmed["Location"])
    assert consent.status_code == 200
    html = consent.content.decode()
    assert "Claude Code" in html and "You have no workspace yet" in html

    # Creating the first workspace from the consent page comes back to consent, ready to allow.
    assert f"/workspaces/new/?next={quote(next_url, safe='/')}" in html
    back = client.post("/workspaces/new/", {"name": "Frank's lab", "next": next_url})
    assert back.status_code == 302 and back["Location"] == next_url
    assert "Frank&#x27;s lab" in client.get(next_url).content.decode()


def test_it_never_sends_a_new_workspace_off_site(db, alice):
    client = Client()
    client.force_login(alice)
    response = client.post("/workspaces/new/", {"name": "Elsewhere", "next": "https://evil.example/x"})
    assert response.status_code == 302
    assert response["Location"].startswith("/w/")
