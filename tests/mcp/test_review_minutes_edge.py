"""The review estimate has one limit (boards.limits), held at its edge by every surface: the MCP
schema, the service and the people's form accept 480 minutes and refuse 481."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from accounts.models import User, Workspace
from boards import limits
from boards.forms import TaskCreateForm, TaskForm
from boards.models import Task
from boards.services import task_create, task_update
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.errors import WeftError

EDGE = 480


def test_the_edge_is_480_minutes() -> None:
    assert (limits.REVIEW_MINUTES_MIN, limits.REVIEW_MINUTES_MAX) == (1, EDGE)


def _session(user: User, workspace: Workspace, body: Callable[[MCP], Awaitable[None]]) -> None:
    token, _ = agent_token(user, workspace)

    async def run() -> None:
        async with in_process() as client:
            await body(MCP(client, token))

    asyncio.run(run())


def _error_code(result: dict[str, Any]) -> str | None:
    if not result.get("isError"):
        return None
    return result["structuredContent"]["error"]["code"]


@pytest.mark.django_db(transaction=True)
def test_it_takes_480_minutes_and_refuses_481_over_mcp(alice, ws_a):
    async def body(mcp: MCP) -> None:
        schemas = {tool["name"]: tool["inputSchema"]["properties"] for tool in await mcp.tools()}
        assert schemas["create_task"]["estimatedReviewMinutes"]["maximum"] == EDGE
        # Optional on update: a nullable integer, written compactly (weft/mcp/schemas.py).
        assert schemas["update_task"]["estimatedReviewMinutes"]["maximum"] == EDGE
        assert schemas["update_task"]["estimatedReviewMinutes"]["type"] == ["integer", "null"]
        over = await mcp.call("create_task", {"title": "Review-heavy", "estimatedReviewMinutes": EDGE + 1})
        assert _error_code(over) == "invalid_argument", text_of(over)
        created = await mcp.call("create_task", {"title": "Review-heavy", "estimatedReviewMinutes": EDGE})
        assert _error_code(created) is None, text_of(created)
        task_id = created["structuredContent"]["task"]["id"]
        other = await mcp.call("create_task", {"title": "Review-light"})
        other_id = other["structuredContent"]["task"]["id"]
        raised = await mcp.call("update_task", {"id": other_id, "estimatedReviewMinutes": EDGE})
        assert _error_code(raised) is None, text_of(raised)
        past = await mcp.call("update_task", {"id": task_id, "estimatedReviewMinutes": EDGE + 1})
        assert _error_code(past) == "invalid_argument", text_of(past)

    _session(alice, ws_a, body)
    minutes = dict(Task.objects.filter(workspace=ws_a).values_list("title", "estimated_review_minutes"))
    assert minutes == {"Review-heavy": EDGE, "Review-light": EDGE}


@pytest.mark.django_db
def test_it_takes_480_minutes_and_refuses_481_in_the_service(ws_a, alice):
    created_task = task_create(workspace=ws_a, title="Heavy", estimated_review_minutes=EDGE, by_user=alice)
    task = created_task.task
    assert task.estimated_review_minutes == EDGE
    with pytest.raises(WeftError) as created:
        task_create(workspace=ws_a, title="Too long", estimated_review_minutes=EDGE + 1, by_user=alice)
    with pytest.raises(WeftError) as updated:
        task_update(task=task, by_user=alice, estimated_review_minutes=EDGE + 1)
    assert (created.value.code, updated.value.code) == ("invalid_argument", "invalid_argument")
    assert updated.value.details["field"] == "estimatedReviewMinutes"
    task.refresh_from_db()
    assert task.estimated_review_minutes == EDGE
    assert list(Task.objects.filter(workspace=ws_a).values_list("title", flat=True)) == ["Heavy"]


@pytest.mark.parametrize("form_class", [TaskForm, TaskCreateForm])
def test_it_takes_480_minutes_and_refuses_481_in_the_form(form_class):
    fields = {"title": "Review-heavy", "priority": "1", "column": "todo"}
    at_edge = form_class({**fields, "estimated_review_minutes": str(EDGE)})
    past = form_class({**fields, "estimated_review_minutes": str(EDGE + 1)})
    assert at_edge.is_valid(), at_edge.errors
    assert at_edge.cleaned_data["estimated_review_minutes"] == EDGE
    assert not past.is_valid()
    assert list(past.errors) == ["estimated_review_minutes"]
