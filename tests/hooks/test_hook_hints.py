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
from asgiref.sync import sync_to_async

from accounts.models import Seat, User, Workspace
from hooks.models import Subscription
from hooks.rules import MAX_PER_WORKSPACE
from hooks.services import subscription_create
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


def _fill(workspace: Workspace, user: User, count: int) -> None:
    """Subscriptions up to `count` in the workspace, made directly (the audit needs only the edge)."""
    seat = Seat.objects.select_related("workspace", "user").get(workspace=workspace, user=user)
    with _public_dns():
        for n in range(Subscription.objects.filter(workspace=workspace).count(), count):
            url = f"https://hooks.example.com/fill/{n}"
            subscription_create(workspace=workspace, url=url, event_types=["task.created"], by_seat=seat)


async def audit_the_refusals_of_a_full_or_retried_subscribe(mcp: MCP, member: MCP, fill: Any) -> None:
    """A retried subscribe (conflict), the 51st (subscription_limit_reached), a member's agent."""
    spec: dict[str, Any] = {"url": "https://hooks.example.com/twice", "eventTypes": ["run.completed"]}
    with _public_dns():
        await audit(mcp, "subscribe", await mcp.call("subscribe", spec), error=False)
        retried = await mcp.call("subscribe", spec)
        assert retried["structuredContent"]["error"]["code"] == "conflict"
        await audit(mcp, "subscribe", retried, error=True)
        await sync_to_async(fill)()
        full = await mcp.call("subscribe", {**spec, "url": "https://hooks.example.com/51st"})
        assert full["structuredContent"]["error"]["code"] == "subscription_limit_reached"
        await audit(mcp, "subscribe", full, error=True)
        member_calls: list[tuple[str, dict[str, Any]]] = [
            ("subscribe", spec), ("list_subscriptions", {}), ("unsubscribe", {"id": 1}),
        ]  # fmt: skip
        for tool, arguments in member_calls:
            refused = await member.call(tool, arguments)
            assert refused["structuredContent"]["error"]["code"] in {"permission_denied", "not_found"}
            await audit(member, tool, refused, error=True)


async def _session(token: str, suspended_token: str, member_token: str, fill: Any) -> None:
    async with in_process() as client:
        mcp = MCP(client, token)
        await audit_hook_tools(mcp, MCP(client, suspended_token))
        await audit_the_refusals_of_a_full_or_retried_subscribe(mcp, MCP(client, member_token), fill)


def test_the_webhook_tools_keep_the_hint_contract(alice, bob, carol, ws_a, ws_b):
    token, _ = agent_token(alice, ws_a)
    member_token, _ = agent_token(bob, ws_a)
    suspended_token, _ = agent_token(carol, ws_b)
    ws_b.is_suspended = True
    ws_b.save(update_fields=["is_suspended"])
    asyncio.run(_session(token, suspended_token, member_token, lambda: _fill(ws_a, alice, MAX_PER_WORKSPACE)))
    for tool in HOOK_TOOLS:
        assert {"success", "error"} <= AUDIT[tool], (tool, AUDIT[tool])
        assert EXECUTED[tool], f"{tool}: no hint was run"
