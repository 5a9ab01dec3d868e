"""get_board_state over the wire, a page at a time: the first page's `Or:` line is the call that
reads the rest, run as written; a cursor no page gave and one past its length are refused with a
Fix:, and another workspace's board is refused after a cursor as without one."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from boards import limits
from boards.models import Column, Task
from boards.services import board_default
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft import hints

pytestmark = pytest.mark.django_db(transaction=True)


def _run_line(line: str) -> tuple[str, dict[str, Any]]:
    """A hint's call, parsed exactly as an agent reads it."""
    match = hints._CALL.match(line.split(": ", 1)[1])
    assert match, line
    return match["tool"], json.loads(match["args"])


def test_an_agent_reads_a_long_column_to_its_end_by_the_hinted_calls(alice, ws_a, carol, ws_b):
    board = board_default(workspace=ws_a)
    todo = Task.objects.bulk_create(
        Task(workspace=ws_a, board=board, title=f"T{i}", column=Column.TODO, position=float(i))
        for i in range(limits.BOARD_PAGE + 1)
    )
    token, _ = agent_token(alice, ws_a)
    token_b, _ = agent_token(carol, ws_b)

    async def session() -> None:
        async with in_process() as client:
            mcp, other = MCP(client, token), MCP(client, token_b)
            first = await mcp.call("get_board_state")
            content = first["structuredContent"]
            assert not hints.problems(text_of(first), content)
            assert [t["id"] for t in content["columns"]["todo"]] == [t.pk for t in todo[:-1]]
            assert content["counts"] == {"backlog": 0, "todo": limits.BOARD_PAGE + 1, "doing": 0, "done": 0}
            assert content["_next_action"] == "Next: get_my_work {}"
            tool, args = _run_line(content["_or_action"])
            assert (tool, args) == ("get_board_state", {"boardId": board.pk, "cursor": args["cursor"]})
            rest = await mcp.call(tool, args)
            assert not hints.problems(text_of(rest), rest["structuredContent"])
            assert [t["id"] for t in rest["structuredContent"]["columns"]["todo"]] == [todo[-1].pk]
            assert rest["structuredContent"]["_next_action"] == "Next: get_my_work {}"

            for arguments in ({"cursor": "beef"}, {"cursor": "a" * (limits.BOARD_CURSOR + 1)}):
                refused = await mcp.call("get_board_state", arguments)
                assert refused.get("isError"), text_of(refused)
                assert refused["structuredContent"]["error"]["code"] == "invalid_argument"
                assert refused["structuredContent"]["_next_action"].startswith("Fix: get_board_state")
            foreign = await other.call("get_board_state", args)
            assert foreign.get("isError") and foreign["structuredContent"]["error"]["code"] == "not_found"

    asyncio.run(session())
