"""Who may call /api/mcp: every rejection answers before any tool runs."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import AccessToken

from accounts.connections import connection_revoke
from accounts.oauth_tokens import stored_checksum
from tests.mcp.harness import MCP, agent_token, in_process
from weft.mcp.verifier import verified_tokens

pytestmark = pytest.mark.django_db(transaction=True)


async def _post(token: str | None, method: str = "tools/list", **headers: str):
    async with in_process() as client:
        return await MCP(client, token).post(method, None, **headers)


def test_it_answers_401_with_resource_metadata_without_a_token(ws_a):
    response = asyncio.run(_post(None))
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert (
        f'resource_metadata="{settings.WEFT_BASE_URL}/.well-known/oauth-protected-resource/api/mcp"'
        in challenge
    )


def test_it_serves_protected_resource_metadata(ws_a):
    async def fetch():
        async with in_process() as client:
            return await client.get("/.well-known/oauth-protected-resource/api/mcp")

    response = asyncio.run(fetch())
    assert response.status_code == 200
    body = response.json()
    assert body["resource"] == settings.WEFT_MCP_URL
    assert body["authorization_servers"] == [settings.WEFT_BASE_URL + "/"] or body[
        "authorization_servers"
    ] == [settings.WEFT_BASE_URL]
    assert "mcp" in body["scopes_supported"]


def test_it_refuses_an_unknown_token(ws_a):
    assert asyncio.run(_post("not-a-token")).status_code == 401


def test_it_refuses_a_token_for_another_resource(alice, ws_a):
    token, _ = agent_token(alice, ws_a, resource=["https://elsewhere.example/api/mcp"])
    assert asyncio.run(_post(token)).status_code == 401


@pytest.mark.parametrize(
    "resource",
    [
        settings.WEFT_BASE_URL,
        settings.WEFT_BASE_URL + "/",
        settings.WEFT_BASE_URL + "/api",
        settings.WEFT_BASE_URL + "/api/other",
        settings.WEFT_BASE_URL + "/api/mcp-evil",
        settings.WEFT_MCP_URL + "/other",
        settings.WEFT_MCP_URL + "//",
        settings.WEFT_MCP_URL.replace("http", "https", 1),
        settings.WEFT_MCP_URL.upper(),
    ],
)
def test_it_refuses_a_token_for_a_resource_that_is_not_exactly_the_mcp_endpoint(alice, ws_a, resource):
    token, _ = agent_token(alice, ws_a, resource=[resource])
    assert asyncio.run(_post(token)).status_code == 401


@pytest.mark.parametrize("resource", [settings.WEFT_MCP_URL, settings.WEFT_MCP_URL + "/"])
def test_it_accepts_a_token_for_the_mcp_endpoint(alice, ws_a, resource):
    token, _ = agent_token(alice, ws_a, resource=[resource])
    assert asyncio.run(_post(token)).status_code == 200


def test_it_refuses_an_expired_token(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    assert asyncio.run(_post(token)).status_code == 200
    verified_tokens.clear()  # another process, or this one after the cache entry ended
    AccessToken.objects.filter(token_checksum=stored_checksum(token)).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    assert asyncio.run(_post(token)).status_code == 401


def test_it_refuses_the_raw_token_column_even_if_it_were_filled(alice, ws_a):
    """Lookup is by checksum only: a row whose `token` holds a value but whose checksum differs is unknown."""
    token, _ = agent_token(alice, ws_a)
    AccessToken.objects.filter(token_checksum=stored_checksum(token)).update(
        token="planted-raw-token", token_checksum=stored_checksum("something-else")
    )
    assert asyncio.run(_post("planted-raw-token")).status_code == 401
    assert asyncio.run(_post(token)).status_code == 401


def test_it_accepts_a_token_issued_without_resource(alice, ws_a):
    token, _ = agent_token(alice, ws_a, resource=[])
    assert asyncio.run(_post(token)).status_code == 200


def test_it_refuses_a_token_without_the_mcp_scope_with_403(alice, ws_a):
    token, _ = agent_token(alice, ws_a, scope="offline_access")
    response = asyncio.run(_post(token))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]


def test_it_refuses_a_bad_origin_with_403(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    assert asyncio.run(_post(token, origin="https://evil.example")).status_code == 403


def test_it_allows_a_loopback_origin_with_cors(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    response = asyncio.run(_post(token, origin="http://localhost:6274"))
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "http://localhost:6274"


def test_it_refuses_a_revoked_connection_at_once(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    assert asyncio.run(_post(token)).status_code == 200
    connection_revoke(connection=connection)
    assert asyncio.run(_post(token)).status_code == 401


def test_it_refuses_a_person_who_lost_the_seat(alice, bob, ws_a):
    token, _ = agent_token(bob, ws_a)
    ws_a.seats.filter(user=bob).delete()
    assert asyncio.run(_post(token)).status_code == 401


def test_it_lists_every_tool_with_schemas_and_annotations(alice, ws_a):
    token, _ = agent_token(alice, ws_a)

    async def tools():
        async with in_process() as client:
            return await MCP(client, token).tools()

    listed = {tool["name"]: tool for tool in asyncio.run(tools())}
    assert set(listed) == {
        "get_my_work", "start_task", "report_progress", "request_input", "complete_task",
        "release_task", "get_board_state", "get_task", "search", "create_task", "update_task",
        "subscribe", "unsubscribe", "list_subscriptions",
        "submit_issue", "add_issue_message", "get_issue_status", "triage_issue", "list_issues",
    }  # fmt: skip
    for tool in listed.values():
        assert tool["description"]
        assert "_next_action" in tool["outputSchema"]["properties"]
        assert set(tool["annotations"]) >= {"readOnlyHint", "destructiveHint", "idempotentHint"}
        for name, schema in tool["inputSchema"].get("properties", {}).items():
            assert schema.get("description"), f"{tool['name']}.{name} has no description"
    assert set(listed["complete_task"]["inputSchema"]["properties"]) == {
        "runId", "leaseToken", "outcome", "artifacts", "claims", "notDone", "unknowns", "nextStep",
        "startNext",
    }  # fmt: skip
