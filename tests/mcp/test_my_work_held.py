"""get_my_work's cost per held run: every run is still listed with its lease and token (the
contract), and a held run adds no query, through the whole MCP path including the rendering."""

from __future__ import annotations

import asyncio

import pytest

from boards.models import Task
from boards.services import board_default, task_claim
from tests.mcp.harness import MCP, agent_token, in_process
from tests.mcp.test_query_counts import all_queries

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_held_run_is_listed_and_none_costs_a_query(alice, ws_a):
    board = board_default(workspace=ws_a)
    tasks = [Task.objects.create(workspace=ws_a, board=board, title=f"Held {i}") for i in range(4)]
    one_token, one = agent_token(alice, ws_a, name="One")
    many_token, many = agent_token(alice, ws_a, name="Many")
    task_claim(task_id=tasks[0].pk, connection=one)
    runs = [task_claim(task_id=t.pk, connection=many).run for t in tasks[1:]]

    async def held(token: str) -> tuple[int, list[dict[str, object]]]:
        async with in_process() as client:
            mcp = MCP(client, token)
            await mcp.call("get_my_work")  # the token verified, the month's usage row made
            with all_queries() as seen:
                result = await mcp.call("get_my_work")
            assert not result.get("isError"), result
            return len(seen), result["structuredContent"]["held"]

    one_queries, _ = asyncio.run(held(one_token))
    many_queries, listed = asyncio.run(held(many_token))
    assert many_queries == one_queries
    assert [row["runId"] for row in listed] == [str(run.run_id) for run in runs]
    assert {row["holder"] for row in listed} == {"Many"}
    assert [row["title"] for row in listed] == ["Held 1", "Held 2", "Held 3"]
    assert all(row["leaseToken"] and row["leaseExpiresAt"] for row in listed)
