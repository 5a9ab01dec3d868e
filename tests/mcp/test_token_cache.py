"""The verified-token cache: fast for a live token, never an excuse for a revoked one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone
from mcp.server.auth.provider import AccessToken

from accounts.connections import token_checksum
from accounts.models import AgentConnection, Seat
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
