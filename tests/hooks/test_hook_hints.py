"""Hint audit of the webhook tools: each success and refusal keeps the five rules, and every hinted
call (Next:, Fix:, the call of a Wait:) is run at once and accepted.

`audit_hook_tools(mcp, suspended)` runs inside the audit session of tests/mcp/test_hint_audit.py
too, so that audit reaches every tool of tools/list.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest

from tests.mcp.conftest import AUDIT, EXECUTED
from tests.mcp.harness import MCP, agent_token, in_process
from tests.mcp.test_hint_audit import MISSING, audit

pytestmark = pytest.mark.django_db(transaction=True)

HOOK_TOOLS = {"subscribe", "unsubscribe", "list_subscriptions"}


@contextmanager
def _public_dns() -> Iterator[None]:
    """Every host name resolves to one public address, so the audit asks no real resolver."""

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]

    with mock.patch.object(socket, "getaddrinfo", getaddrinfo):
        yield


async def audit_hook_tools(mcp: MCP, suspended: MCP) -> None:
    """Success and error paths of subscribe, unsubscribe and list_subscriptions."""
    call = mcp.call
    with _public_dns():
        created = await call(
            "subscribe", {"url": "https://hooks.example.com/audit", "eventTypes": ["task.created"]}
        )
        await audit(mcp, "subscribe", created, error=False)
        await audit(mcp, "list_subscriptions", await call("list_subscriptions"), error=False)
        sub_id = created["structuredContent"]["subscription"]["id"]
        await audit(mcp, "unsubscribe", await call("unsubscribe", {"id": sub_id}), error=False)
        # Refusals: http outside loopback (fixed to https), no filter (fixed to a filter), a missing id.
        await audit(
            mcp,
            "subscribe",
            await call("subscribe", {"url": "http://hooks.example.com/audit", "entityType": "task"}),
            error=True,
        )
        await audit(
            mcp, "subscribe", await call("subscribe", {"url": "https://hooks.example.com/x"}), error=True
        )
        await audit(mcp, "unsubscribe", await call("unsubscribe", {"id": MISSING}), error=True)
        await audit(suspended, "list_subscriptions", await suspended.call("list_subscriptions"), error=True)


async def _session(token: str, suspended_token: str) -> None:
    async with in_process() as client:
        await audit_hook_tools(MCP(client, token), MCP(client, suspended_token))


def test_the_webhook_tools_keep_the_hint_contract(alice, carol, ws_a, ws_b):
    token, _ = agent_token(alice, ws_a)
    suspended_token, _ = agent_token(carol, ws_b)
    ws_b.is_suspended = True
    ws_b.save(update_fields=["is_suspended"])
    asyncio.run(_session(token, suspended_token))
    for tool in HOOK_TOOLS:
        assert {"success", "error"} <= AUDIT[tool], (tool, AUDIT[tool])
        assert EXECUTED[tool], f"{tool}: no hint was run"
