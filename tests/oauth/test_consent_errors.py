"""The consent form posted with a client or redirect it may not use: a 400 page, never a 500."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from django.test import Client

from accounts.models import AgentConnection
from tests.oauth.test_flow import REDIRECT, _authorize_params, _pkce, _register


def _consent_data(client: Client, alice, ws) -> dict[str, str]:
    app = _register(client)
    client.force_login(alice)
    _, challenge = _pkce()
    page = client.get("/o/authorize/", _authorize_params(app["client_id"], challenge))
    form = page.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data.update(allow="Authorize", workspace=ws.slug)
    return data


def test_it_answers_400_for_an_unknown_client(db, alice, ws_a):
    client = Client()
    data = _consent_data(client, alice, ws_a)
    data["client_id"] = "no-such-client"
    response = client.post("/o/authorize/", data)
    assert response.status_code == 400
    assert "This connection request cannot be completed" in response.content.decode()
    assert not AgentConnection.objects.exists()


def test_it_answers_400_for_an_unknown_client_that_is_denied(db, alice, ws_a):
    client = Client()
    data = _consent_data(client, alice, ws_a)
    data["client_id"] = "no-such-client"
    del data["allow"]
    assert client.post("/o/authorize/", data).status_code == 400


def test_it_answers_400_for_an_unregistered_redirect_and_never_redirects(db, alice, ws_a):
    client = Client()
    data = _consent_data(client, alice, ws_a)
    data["redirect_uri"] = "https://evil.example/cb"
    response = client.post("/o/authorize/", data)
    assert response.status_code == 400
    assert "Location" not in response
    assert not AgentConnection.objects.exists()


def test_it_answers_400_for_a_forbidden_redirect_even_if_registered(db, alice, ws_a):
    client = Client()
    data = _consent_data(client, alice, ws_a)
    data["redirect_uri"] = "http://localhost.evil.com/cb"
    assert client.post("/o/authorize/", data).status_code == 400


def test_it_redirects_an_oauth_error_to_a_known_good_redirect(db, alice, ws_a):
    client = Client()
    data = _consent_data(client, alice, ws_a)
    data["code_challenge"] = ""
    data["code_challenge_method"] = ""
    response = client.post("/o/authorize/", data)
    assert response.status_code == 302
    assert response["Location"].startswith(REDIRECT)
    assert parse_qs(urlsplit(response["Location"]).query)["error"] == ["invalid_request"]


def test_it_answers_400_when_the_client_id_is_missing(db, alice, ws_a):
    client = Client()
    data = _consent_data(client, alice, ws_a)
    del data["client_id"]
    assert client.post("/o/authorize/", data).status_code == 400
