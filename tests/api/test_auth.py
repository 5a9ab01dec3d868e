"""Who may call: the agents' OAuth tokens, refused with 401, WWW-Authenticate and a Fix: line when
they are missing, expired, revoked or for another resource; every call is metered like MCP's."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken

from accounts.connections import connection_revoke
from accounts.models import AgentConnection, Seat, Usage
from tests.api.conftest import Api, signed_in
from tests.mcp.harness import in_process

pytestmark = pytest.mark.django_db

SIGN_IN = "Fix: GET /.well-known/oauth-protected-resource/api/mcp"


def _refused(answer, error: str | None = "invalid_token") -> None:
    assert answer.status == 401, answer.body
    assert answer.body["error"]["code"] == "unauthenticated"
    assert answer.body["_next_action"] == SIGN_IN
    challenge = answer.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
    if error:
        assert f'error="{error}"' in challenge


def test_no_token(db):
    _refused(Api(Client(), None).get("work"), error=None)


def test_not_a_bearer_token(db):
    api = Api(Client(), None)
    _refused(api.call("GET", "work", headers={"Authorization": "Basic YWxpY2U6cHc="}))


def test_an_unknown_token(db):
    _refused(Api(Client(), "not-a-token").get("work"))


def test_an_expired_token(api):
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    _refused(api.get("work"))


def test_a_revoked_connection(api):
    assert api.get("work").status == 200
    connection_revoke(connection=api.connection)
    _refused(api.get("work"))


def test_a_lost_seat(api, alice, ws_a):
    assert api.get("work").status == 200
    Seat.objects.filter(user=alice, workspace=ws_a).delete()
    _refused(api.get("work"))


def test_a_token_for_another_resource(alice, ws_a):
    _refused(signed_in(alice, ws_a, resource=["https://elsewhere.example/api"]).get("work"))


def test_a_token_without_the_mcp_scope(alice, ws_a):
    answer = signed_in(alice, ws_a, scope="offline_access").get("work")
    assert answer.status == 403 and answer.body["error"]["code"] == "permission_denied"
    assert 'error="insufficient_scope"' in answer.headers["WWW-Authenticate"]


def test_every_call_is_metered_like_an_mcp_call(api, ws_a):
    api.get("work")
    api.post("tasks", {"title": "Counted"})
    assert Usage.objects.get(workspace=ws_a, kind=Usage.AGENT_CALLS).count == 2


def test_the_plan_cap_answers_429_with_retry_after(api, ws_a):
    Usage.objects.create(
        workspace=ws_a,
        kind=Usage.AGENT_CALLS,
        count=ws_a.plan.cap_for(Usage.AGENT_CALLS),
        period=timezone.now().date().replace(day=1),
    )
    answer = api.get("work")
    assert answer.status == 429 and answer.body["error"]["code"] == "plan_limit_reached"
    assert int(answer.headers["Retry-After"]) > 0
    assert answer.body["_next_action"].startswith("Wait: ")


def test_the_sign_in_fix_is_served_and_the_stream_keeps_its_route(db):
    async def both() -> tuple[int, int, str]:
        async with in_process() as client:
            metadata = await client.get("/.well-known/oauth-protected-resource/api/mcp")
            stream = await client.get("/api/v1/events/stream")
            return metadata.status_code, stream.status_code, stream.text

    metadata, stream, text = asyncio.run(both())
    assert metadata == 200
    # The stream's own refusal (weft/stream/app.py), not the REST API's error body.
    assert stream == 401 and "invalid_token" in text and "_next_action" not in text


def test_a_connection_revoked_elsewhere_stops_the_next_call_despite_the_token_cache(api):
    """Another process revoked the connection: this process's verified-token cache still holds the
    token, and the gate's own live-connection check refuses the call."""
    assert api.get("work").status == 200
    AgentConnection.objects.filter(pk=api.connection.pk).update(revoked_at=timezone.now())
    _refused(api.get("work"))
