"""GET /api/mcp opens no idle stream: Weft offers none, so it answers 405 at once."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.mcp.harness import ACCEPT, MCP, PROTOCOL, agent_token, in_process

pytestmark = pytest.mark.django_db(transaction=True)


async def _get(client: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
    # The in-process transport reads the whole body: an opened stream would never return.
    return await asyncio.wait_for(client.get("/api/mcp", headers=headers), 5)


async def test_it_answers_405_to_a_get_instead_of_an_idle_stream(alice, ws_a):
    token, _ = await asyncio.to_thread(agent_token, alice, ws_a)
    async with in_process() as client:
        headers = {"accept": "text/event-stream", "mcp-protocol-version": PROTOCOL}
        for auth in ({"authorization": f"Bearer {token}"}, {}):
            response = await _get(client, {**headers, **auth})
            assert response.status_code == 405
            assert response.headers["allow"] == "POST"


async def test_it_lets_a_browser_client_read_the_405(alice, ws_a):
    token, _ = await asyncio.to_thread(agent_token, alice, ws_a)
    async with in_process() as client:
        origin = "http://localhost:6274"
        response = await _get(
            client, {"accept": ACCEPT, "authorization": f"Bearer {token}", "origin": origin}
        )
        assert response.status_code == 405
        assert response.headers["access-control-allow-origin"] == origin


async def test_it_still_serves_posts_and_the_resource_metadata(alice, ws_a):
    token, _ = await asyncio.to_thread(agent_token, alice, ws_a)
    async with in_process() as client:
        tools = await MCP(client, token).tools()
        assert any(tool["name"] == "get_my_work" for tool in tools)
        metadata = await client.get("/.well-known/oauth-protected-resource/api/mcp")
        assert metadata.status_code == 200 and metadata.json()["resource"].endswith("/api/mcp")
