"""Redirect URIs per OAuth 2.1: https anywhere, http only to loopback, `cursor`; nothing else."""

from __future__ import annotations

import json

import pytest
from django.contrib import admin
from django.test import Client
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.models import Application

from accounts.oauth_admin import WeftApplicationAdmin
from accounts.oauth_redirects import RedirectCheckingMetadataFetcher, redirect_uri_problem
from tests.oauth.test_flow import _authorize_params, _pkce

GOOD = [
    "https://claude.ai/api/mcp/auth_callback",
    "https://chatgpt.com/connector_platform_oauth_redirect",
    "https://example.com:8443/cb?x=1",
    "http://localhost/callback",
    "http://localhost:53682/callback",
    "http://127.0.0.1/callback",
    "http://127.0.0.1:49152/oauth/callback",
    "http://[::1]/callback",
    "http://[::1]:33418/callback",
    "cursor://anysphere.cursor-mcp/oauth/callback",
]

BAD = {
    "plain http": "http://example.com/callback",
    "look-alike subdomain": "http://localhost.evil.com/callback",
    "look-alike ip host": "http://127.0.0.1.nip.io/callback",
    "userinfo localhost": "http://localhost@evil.com/callback",
    "userinfo with port": "http://localhost:80@evil.com/callback",
    "userinfo on https": "https://user:pw@example.com/callback",
    "fragment": "http://evil.com#localhost",
    "fragment on https": "https://example.com/cb#frag",
    "unspecified address": "http://0.0.0.0:8080/callback",
    "mapped ipv4": "http://[::ffff:127.0.0.1]/callback",
    "short loopback": "http://127.1/callback",
    "other loopback": "http://127.0.0.2/callback",
    "trailing dot": "http://localhost./callback",
    "encoded host": "http://localhost%2eevil.com/callback",
    "backslash": "http://localhost\\@evil.com/callback",
    "whitespace": "http://localhost /callback",
    "javascript": "javascript:alert(1)",
    "data": "data:text/html,<script>alert(1)</script>",
    "file": "file:///etc/passwd",
    "ftp": "ftp://example.com/cb",
    "other private scheme": "vscode://anthropic.claude/cb",
    "no scheme": "//example.com/cb",
    "relative": "/callback",
    "bad port": "http://localhost:99999/callback",
    "broken ipv6": "http://[::1/callback",
    "https without host": "https:///callback",
}


def _register(client: Client, uris: list[str], path: str = "/o/register/"):
    body = {"client_name": "Cursor", "redirect_uris": uris, "token_endpoint_auth_method": "none"}
    return client.post(path, body, content_type="application/json")


@pytest.mark.parametrize("uri", GOOD)
def test_it_accepts_a_good_redirect_uri(db, uri):
    assert redirect_uri_problem(uri) is None
    response = _register(Client(), [uri])
    assert response.status_code == 201, response.content
    assert response.json()["redirect_uris"] == [uri]


@pytest.mark.parametrize("uri", BAD.values(), ids=BAD.keys())
def test_it_refuses_a_bad_redirect_uri(db, uri):
    assert redirect_uri_problem(uri) is not None
    response = _register(Client(), [uri])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    assert not Application.objects.exists()


def test_it_accepts_cursors_three_uris_in_one_request(db):
    uris = [
        "cursor://anysphere.cursor-mcp/oauth/callback",
        "http://localhost:5173/callback",
        "https://cursor.com/oauth/callback",
    ]
    response = _register(Client(), uris)
    assert response.status_code == 201, response.content
    assert Application.objects.get().redirect_uris.split() == uris


def test_it_refuses_the_whole_request_for_one_bad_uri_and_names_it(db):
    uris = [
        "cursor://anysphere.cursor-mcp/oauth/callback",
        "http://localhost.evil.com/cb",
        "https://a.example/cb",
    ]
    response = _register(Client(), uris)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_redirect_uri"
    assert "http://localhost.evil.com/cb" in body["error_description"]
    assert not Application.objects.exists()


def test_it_refuses_a_bad_uri_on_the_root_register_alias(db):
    response = _register(Client(), ["http://evil.example/cb"], path="/register")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


def test_it_refuses_a_bad_uri_in_a_registration_update(db):
    registered = _register(Client(), ["http://localhost/callback"]).json()
    update = {
        "client_id": registered["client_id"],
        "redirect_uris": ["http://localhost/callback", "http://evil.example/cb"],
        "token_endpoint_auth_method": "none",
    }
    response = Client().put(
        f"/o/register/{registered['client_id']}/",
        json.dumps(update),
        content_type="application/json",
        headers={"authorization": f"Bearer {registered['registration_access_token']}"},
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    assert Application.objects.get().redirect_uris == "http://localhost/callback"


def test_it_refuses_an_update_without_the_registration_token_before_reading_it(db):
    registered = _register(Client(), ["http://localhost/callback"]).json()
    response = Client().put(
        f"/o/register/{registered['client_id']}/",
        json.dumps({"redirect_uris": ["http://evil.example/cb"]}),
        content_type="application/json",
    )
    assert response.status_code == 401


def test_it_refuses_a_client_metadata_document_with_a_bad_uri(monkeypatch):
    client_id = "https://client.example/meta.json"
    document: dict[str, object] = {"client_id": client_id, "redirect_uris": ["http://evil.example/cb"]}
    monkeypatch.setattr(SafeMetadataFetcher, "fetch", lambda self, client_id: (document, 300))
    with pytest.raises(CIMDError, match="not loopback"):
        RedirectCheckingMetadataFetcher().fetch(client_id)
    document["redirect_uris"] = ["http://127.0.0.1/cb"]
    assert RedirectCheckingMetadataFetcher().fetch(client_id) == (document, 300)


def test_it_refuses_a_bad_uri_in_the_admin_form(db, rf):
    application_admin = admin.site._registry[Application]
    assert isinstance(application_admin, WeftApplicationAdmin)
    form_class = application_admin.get_form(rf.get("/admin/"))
    data = {
        "name": "Manual",
        "client_id": "manual-client",
        "client_type": Application.CLIENT_PUBLIC,
        "authorization_grant_type": Application.GRANT_AUTHORIZATION_CODE,
        "redirect_uris": "https://ok.example/cb http://localhost.evil.com/cb",
        "algorithm": "",
    }
    form = form_class(data=data)
    assert not form.is_valid()
    assert "localhost.evil.com" in str(form.errors["redirect_uris"])


def test_it_refuses_at_authorization_a_bad_uri_stored_before_the_rule(db, alice, ws_a):
    app = Application.objects.create(
        name="Old client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://legacy.example/cb",
    )
    client = Client()
    client.force_login(alice)
    _, challenge = _pkce()
    params = _authorize_params(app.client_id, challenge, redirect_uri="http://legacy.example/cb")
    response = client.get("/o/authorize/", params)
    assert response.status_code == 400
    assert "invalid_request" in response.content.decode()
