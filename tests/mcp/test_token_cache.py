"""The verified-token cache: fast for a live token, never an excuse for a revoked one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.db import connection as db_connection
from django.utils import timezone
from mcp.server.auth.provider import AccessToken

from accounts.connections import connection_revoke, token_checksum
from accounts.models import AgentConnection, Seat, User, Workspace
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.mcp import verifier
from weft.mcp.verifier import ConnectionTokenVerifier, VerifiedTokens, verified_tokens

pytestmark = pytest.mark.django_db(transaction=True)


def _token(name: str = "t") -> AccessToken:
    return AccessToken(token=name, client_id="c", scopes=["mcp"])


def test_a_verified_token_is_answered_without_the_database(alice, ws_a, monkeypatch):
    token, _ = agent_token(alice, ws_a)
    first = asyncio.run(ConnectionTokenVerifier().verify_token(token))
    assert first is not None

    def no_database(_: str) -> None:
        raise AssertionError("a cached token went to the database")

    monkeypatch.setattr(verifier, "verify", no_database)
    assert asyncio.run(ConnectionTokenVerifier().verify_token(token)) == first


def test_an_unknown_token_is_not_cached(ws_a):
    assert asyncio.run(ConnectionTokenVerifier().verify_token("not-a-token")) is None
    assert verified_tokens.get(token_checksum("not-a-token")) is None


def _call_after(token: str, change: Callable[[], object]) -> dict[str, Any]:
    """Verify the token, make `change` as another process would (this cache keeps it), call a tool."""
    cached = asyncio.run(ConnectionTokenVerifier().verify_token(token))
    assert cached is not None
    change()
    verified_tokens.put(token_checksum(token), cached, verified_tokens.generation)

    async def call() -> dict[str, Any]:
        async with in_process() as client:
            return await MCP(client, token).call("get_my_work")

    return asyncio.run(call())


def test_a_connection_revoked_in_another_process_stops_the_next_tool_call(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    result = _call_after(
        token,
        lambda: AgentConnection.objects.filter(pk=connection.pk).update(revoked_at=timezone.now()),
    )
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "unauthenticated"


def test_a_seat_removed_in_another_process_stops_the_next_tool_call(alice, bob, ws_a):
    token, _ = agent_token(bob, ws_a)
    result = _call_after(token, lambda: Seat.objects.filter(workspace=ws_a, user=bob).delete())
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "unauthenticated"
    assert "Wait:" in text_of(result)


def test_a_lookup_that_raced_a_revocation_is_not_kept():
    cache = VerifiedTokens()
    generation = cache.generation
    cache.clear()  # a revocation lands while the lookup is in flight
    cache.put("sum", _token(), generation)
    assert cache.get("sum") is None


def test_entries_expire_and_the_cache_stays_bounded():
    expired = VerifiedTokens(ttl=0.0)
    expired.put("sum", _token(), expired.generation)
    assert expired.get("sum") is None

    small = VerifiedTokens(max_entries=2)
    for name in ("a", "b", "c"):
        small.put(name, _token(name), small.generation)
    assert small.get("a") is None
    assert small.get("b") is not None and small.get("c") is not None


async def _use_then(token: str, change: Callable[[], object]) -> tuple[httpx.Response, httpx.Response, bool]:
    """One tool call (which caches the token), `change` in this process, then the very next request.

    Returns both responses and whether the token was still cached just before the second.
    """
    call = {"name": "get_my_work", "arguments": {}}
    async with in_process() as client:
        mcp = MCP(client, token)
        first = await mcp.post("tools/call", call)
        assert verified_tokens.get(token_checksum(token)) is not None, "the first request did not cache"
        await sync_to_async(change)()
        still_cached = verified_tokens.get(token_checksum(token)) is not None
        second = await mcp.post("tools/call", call)
    return first, second, still_cached


def _ok(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert not response.json()["result"].get("isError"), response.text


def _unauthenticated(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "unauthenticated"


def test_it_refuses_a_used_token_on_the_next_request_once_its_seat_is_removed(alice, bob, ws_a):
    token, _ = agent_token(bob, ws_a)
    first, second, cached = asyncio.run(
        _use_then(token, lambda: Seat.objects.filter(workspace=ws_a, user=bob).delete())
    )
    _ok(first)
    assert not cached
    assert second.status_code == 401, second.text


def test_it_refuses_a_used_token_on_the_next_request_once_its_connection_is_revoked(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    first, second, cached = asyncio.run(_use_then(token, lambda: connection_revoke(connection=connection)))
    _ok(first)
    assert not cached
    assert second.status_code == 401, second.text


def _delete_seat_without_signals(ws: Workspace, user: User) -> None:
    """As another process would: this process's cache hears nothing."""
    seat = Seat.objects.get(workspace=ws, user=user)
    with db_connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Seat._meta.db_table} WHERE id = %s", [seat.pk])


def test_it_refuses_a_used_and_still_cached_token_once_its_seat_is_removed_elsewhere(alice, bob, ws_a):
    token, _ = agent_token(bob, ws_a)
    first, second, cached = asyncio.run(_use_then(token, lambda: _delete_seat_without_signals(ws_a, bob)))
    _ok(first)
    assert cached, "the change was meant to bypass this process's cache"
    _unauthenticated(second)


def test_it_refuses_a_used_and_still_cached_token_once_its_connection_is_revoked_elsewhere(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    first, second, cached = asyncio.run(
        _use_then(
            token,
            lambda: AgentConnection.objects.filter(pk=connection.pk).update(revoked_at=timezone.now()),
        )
    )
    _ok(first)
    assert cached, "the change was meant to bypass this process's cache"
    _unauthenticated(second)
