"""Helpers for the issue tests: MCP calls in one in-process session, and direct submissions."""

from __future__ import annotations

import asyncio
from typing import Any

from accounts.models import AgentConnection
from issues.services import Submission, issue_submit
from tests.mcp.harness import MCP, in_process, text_of

Call = tuple[str, dict[str, Any]]


async def _calls(token: str, calls: list[Call], initialize: dict[str, Any] | None) -> list[dict[str, Any]]:
    async with in_process() as client:
        mcp = MCP(client, token)
        if initialize is not None:
            await mcp.rpc("initialize", initialize)
        return [await mcp.call(tool, args) for tool, args in calls]


def mcp_calls(token: str, *calls: Call, initialize: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each call's tools/call result, in one session (after `initialize` with these params, if given)."""
    return asyncio.run(_calls(token, list(calls), initialize))


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), text_of(result)
    return result["structuredContent"]


def refused(result: dict[str, Any], code: str) -> dict[str, Any]:
    assert result.get("isError"), text_of(result)
    error = result["structuredContent"]["error"]
    assert error["code"] == code, (error, text_of(result))
    return result["structuredContent"]


def submit(connection: AgentConnection, **fields: Any) -> Any:
    """issue_submit with a valid submission, fields overridden."""
    args: dict[str, Any] = {"title": "Board is slow", "body": "get_board_state takes 4 s.", "kind": "bug"}
    args.setdefault("reporter_app_version", "1.4.2")
    args.update(fields)
    return issue_submit(connection=connection, call=Submission(**args))
