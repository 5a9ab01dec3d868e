"""The webhook MCP tools end to end: the secret once, a foreign id like a missing one, B sees nothing of A."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hooks.models import Subscription
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

URL = "https://hooks.example.com/weft"


async def _calls(token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    async with in_process() as client:
        mcp = MCP(client, token)
        return [await mcp.call(tool, args) for tool, args in calls]


def test_subscribe_list_unsubscribe(alice, ws_a, public_dns):
    token, _ = agent_token(alice, ws_a)
    created, listed = asyncio.run(
        _calls(
            token, [("subscribe", {"url": URL, "eventTypes": ["run.completed"]}), ("list_subscriptions", {})]
        )
    )
    assert not created.get("isError"), text_of(created)
    secret = created["structuredContent"]["secret"]
    assert secret.startswith("whsec_") and secret in text_of(created)
    assert created["structuredContent"]["_next_action"] == "Next: list_subscriptions {}"
    sub = created["structuredContent"]["subscription"]
    assert sub["filter"] == {"eventTypes": ["run.completed"], "entityType": None, "entityId": None}
    assert [s["id"] for s in listed["structuredContent"]["subscriptions"]] == [sub["id"]]
    assert secret not in text_of(listed) and secret not in json.dumps(listed["structuredContent"])
    assert listed["structuredContent"]["_next_action"] == "Done."
    [gone] = asyncio.run(_calls(token, [("unsubscribe", {"id": sub["id"]})]))
    assert not gone.get("isError") and gone["structuredContent"]["_next_action"] == "Done."
    assert not Subscription.objects.exists()
    assert [e.type for e in Event.objects.filter(entity_type="subscription").order_by("pk")] == [
        "subscription.created",
        "subscription.deleted",
    ]


def test_a_refusal_names_the_corrected_call(alice, ws_a, public_dns):
    token, _ = agent_token(alice, ws_a)
    [refused] = asyncio.run(
        _calls(
            token,
            [("subscribe", {"url": "http://hooks.example.com/in", "entityType": "task", "entityId": "7"})],
        )
    )
    assert refused["isError"]
    assert refused["structuredContent"]["error"]["code"] == "invalid_argument"
    assert refused["structuredContent"]["_next_action"] == (
        'Fix: subscribe {"entityId": "7", "entityType": "task", "url": "https://hooks.example.com/in"}'
    )


def test_a_foreign_subscription_id_answers_like_a_missing_one(alice, ws_a, carol, ws_b, public_dns):
    a_token, _ = agent_token(alice, ws_a)
    b_token, _ = agent_token(carol, ws_b)
    [created] = asyncio.run(_calls(a_token, [("subscribe", {"url": URL, "entityType": "task"})]))
    a_id = created["structuredContent"]["subscription"]["id"]
    before = list(Subscription.objects.values())
    events = Event.objects.filter(workspace=ws_a).count()
    foreign, missing, listed = asyncio.run(
        _calls(
            b_token,
            [("unsubscribe", {"id": a_id}), ("unsubscribe", {"id": 987654321}), ("list_subscriptions", {})],
        )
    )
    assert foreign["isError"] and missing["isError"]
    f_error, m_error = foreign["structuredContent"]["error"], missing["structuredContent"]["error"]
    assert f_error["code"] == m_error["code"] == "not_found"
    assert f_error["message"].replace(str(a_id), "ID") == m_error["message"].replace("987654321", "ID")
    assert foreign["structuredContent"]["_next_action"] == missing["structuredContent"]["_next_action"]
    assert listed["structuredContent"]["subscriptions"] == []
    assert URL not in text_of(listed)
    assert list(Subscription.objects.values()) == before
    assert Event.objects.filter(workspace=ws_a).count() == events


def test_a_members_agent_is_told_to_wait_for_an_admin(alice, ws_a, bob, public_dns):
    token, _ = agent_token(bob, ws_a)
    [refused] = asyncio.run(_calls(token, [("subscribe", {"url": URL, "entityType": "task"})]))
    assert refused["structuredContent"]["error"]["code"] == "permission_denied"
    assert refused["structuredContent"]["_next_action"] == (
        f"Wait: an owner or admin of workspace {ws_a.slug} manages its webhooks;"
        " check again with get_my_work {}"
    )
    assert not Subscription.objects.exists()


@pytest.mark.parametrize(
    "arguments",
    [
        {"url": "https://hooks.example.com/a\x00b", "entityType": "task"},
        {"url": "https://hooks.example.com/" + "x" * 100_000, "entityType": "task"},
        {"url": URL, "eventTypes": ["task.created\x00"]},
        {"url": URL, "eventTypes": ["task." + "x" * 10_000]},
        {"url": URL, "eventTypes": ["task.exploded"]},
        {"url": URL, "entityType": "task", "entityId": "7\x00"},
        {"url": URL, "entityType": "tasks"},
        {"url": URL, "eventTypes": [f"task.created{n}" for n in range(100)]},
        {"url": "https://2130706433/in", "entityType": "task"},
        {"url": "https://[::ffff:127.0.0.1]/in", "entityType": "task"},
    ],
)
def test_hostile_subscribe_arguments_are_coded_refusals_with_a_fix(alice, ws_a, arguments):
    token, _ = agent_token(alice, ws_a)
    [refused] = asyncio.run(_calls(token, [("subscribe", arguments)]))
    assert refused["isError"]
    structured = refused["structuredContent"]
    assert structured["error"]["code"] == "invalid_argument"
    assert structured["_next_action"].startswith("Fix: ")
    assert len(text_of(refused)) < 5_000, "a huge argument is not echoed back whole"
    assert not Subscription.objects.exists()
