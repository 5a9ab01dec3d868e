"""The free plan's monthly caps at their exact edge: the last allowed unit passes, the next is refused.

Details are compared whole, never by substring: "0 of 200" is also inside "0 of 2000".
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Usage, month_start
from accounts.services import usage_consume
from boards.models import Task
from boards.services import task_create
from tests.mcp.harness import MCP, agent_token, in_process
from weft.errors import WeftError
from weft.models import Event

MAY_31 = datetime(2030, 5, 31, 23, 59, 59, tzinfo=UTC)
JUNE_1 = datetime(2030, 6, 1, 0, 0, 0, tzinfo=UTC)


def _count(ws, kind: str, now: datetime) -> int:
    return Usage.objects.get(workspace=ws, kind=kind, period=month_start(now.date())).count


def _refusal(ws, kind: str, now: datetime) -> WeftError:
    with pytest.raises(WeftError) as exc:
        usage_consume(workspace=ws, kind=kind, now=now)
    return exc.value


def test_it_admits_the_200th_agent_call_and_refuses_the_201st(ws_a):
    for n in range(1, 201):
        usage_consume(workspace=ws_a, kind=Usage.AGENT_CALLS, now=MAY_31)
        assert _count(ws_a, Usage.AGENT_CALLS, MAY_31) == n
    error = _refusal(ws_a, Usage.AGENT_CALLS, MAY_31)
    assert error.code == "plan_limit_reached"
    assert error.details == {
        "kind": "agent_calls",
        "used": 200,
        "limit": 200,
        "resets_at": "2030-06-01",
        "upgrade": "pro",
    }
    assert error.message == (
        "the Free plan allows 200 agent calls a month; 200 used, resets 2030-06-01."
        " Upgrade to Pro for no cap."
    )
    assert error.fix.marker == "Wait"
    # A refused call is not counted.
    assert _count(ws_a, Usage.AGENT_CALLS, MAY_31) == 200


def test_it_admits_again_on_the_first_of_the_next_month(ws_a):
    Usage.objects.create(workspace=ws_a, kind=Usage.AGENT_CALLS, period=month_start(MAY_31.date()), count=200)
    assert _refusal(ws_a, Usage.AGENT_CALLS, MAY_31).details["used"] == 200
    usage_consume(workspace=ws_a, kind=Usage.AGENT_CALLS, now=JUNE_1)
    assert _count(ws_a, Usage.AGENT_CALLS, JUNE_1) == 1
    assert _count(ws_a, Usage.AGENT_CALLS, MAY_31) == 200


def test_it_creates_the_50th_task_and_refuses_the_51st(ws_a, alice):
    for n in range(1, 51):
        task_create(workspace=ws_a, title=f"Task {n}", by_user=alice)
    assert Task.objects.filter(workspace=ws_a).count() == 50
    events = Event.objects.count()
    with pytest.raises(WeftError) as exc:
        task_create(workspace=ws_a, title="Task 51", by_user=alice)
    resets = exc.value.details["resets_at"]
    assert exc.value.code == "plan_limit_reached"
    assert exc.value.details == {
        "kind": "tasks",
        "used": 50,
        "limit": 50,
        "resets_at": resets,
        "upgrade": "pro",
    }
    assert exc.value.message == (
        f"the Free plan allows 50 tasks created a month; 50 used, resets {resets}. Upgrade to Pro for no cap."
    )
    # Nothing of the refused task exists: no row, no event, no count.
    assert Task.objects.filter(workspace=ws_a).count() == 50
    assert not Task.objects.filter(title="Task 51").exists()
    assert Event.objects.count() == events
    assert _count(ws_a, Usage.TASKS, timezone.now()) == 50


async def _two_calls(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    async with in_process() as client:
        mcp = MCP(client, token)
        return await mcp.call("get_my_work"), await mcp.call("get_my_work")


@pytest.mark.django_db(transaction=True)
def test_it_serves_the_200th_tool_call_and_refuses_the_201st(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    period = month_start(timezone.now().date())
    Usage.objects.create(workspace=ws_a, kind=Usage.AGENT_CALLS, period=period, count=199)
    call_200, call_201 = asyncio.run(_two_calls(token))
    assert not call_200.get("isError"), call_200
    assert call_201["isError"] is True
    error = call_201["structuredContent"]["error"]
    assert error["code"] == "plan_limit_reached"
    assert {k: error["details"][k] for k in ("kind", "used", "limit")} == {
        "kind": "agent_calls",
        "used": 200,
        "limit": 200,
    }
    assert Usage.objects.get(workspace=ws_a, kind=Usage.AGENT_CALLS, period=period).count == 200
