"""The MCP 2025-03-26 default endpoints at the site root are the discovered endpoints' views."""

from __future__ import annotations

from django.test import Client
from django.urls import resolve

from tests.oauth.test_flow import _authorize_params, _pkce, _register, _tokens


def test_it_serves_the_same_views_at_the_root():
    for legacy, discovered in [
        ("/token", "/o/token/"),
        ("/authorize", "/o/authorize/"),
        ("/register", "/o/register/"),
    ]:
        assert resolve(legacy).func is resolve(discovered).func


def test_it_refreshes_through_post_token_at_the_root(db, alice, ws_a):
    client_id, first = _tokens(Client(), alice, ws_a)
    response = Client().post(
        "/token",
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client_id},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["access_token"] and body["access_token"] != first["access_token"]
    assert body["refresh_token"] != first["refresh_token"]
    # The rotated-out token is refused at the discovered endpoint too, once the grace window is over
    # it would revoke the family; inside it, the same pair comes back from either path.
    again = Client().post(
        "/o/token/",
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client_id},
    )
    assert again.json()["access_token"] == body["access_token"]


def test_it_registers_and_authorizes_at_the_root(db, alice, ws_a):
    client = Client()
    response = client.post(
        "/register",
        {
            "client_name": "fastmcp",
            "redirect_uris": ["http://localhost/callback"],
            "token_endpoint_auth_method": "none",
        },
        content_type="application/json",
    )
    assert response.status_code == 201
    client.force_login(alice)
    _, challenge = _pkce()
    page = client.get("/authorize", _authorize_params(response.json()["client_id"], challenge))
    assert page.status_code == 200
    assert ws_a.name in page.content.decode()


def test_it_keeps_discovery_on_the_o_endpoints(db):
    body = Client().get("/.well-known/oauth-authorization-server").json()
    assert body["token_endpoint"].endswith("/o/token/")
    assert _register(Client())["client_id"]
