"""Labels: a workspace's labels (at most 40 characters, a palette colour, one name whatever its
case), at most 10 on a task, only the task's own workspace's, seen and set by agents."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import User, Workspace
from boards import clock, limits
from boards.models import Label, Task
from boards.payloads import task_payload
from boards.selectors import BoardFilter, board_columns, board_for_read, board_state
from boards.services import (
    label_create,
    task_claim,
    task_create,
    task_edit,
    task_label_new,
    task_update,
)
from tests.boards.helpers import codes, complete, race, refused
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.models import Event


def _labels(workspace: Workspace, *names: str) -> list[Label]:
    return [label_create(workspace=workspace, name=name) for name in names]


def _names(task: Task) -> list[str]:
    return sorted(Task.objects.get(pk=task.pk).labels.values_list("name", flat=True))


def test_the_limits_are_40_characters_and_10_labels() -> None:
    assert (limits.LABEL_NAME, limits.TASK_LABELS) == (40, 10)


def test_a_name_of_40_characters_is_taken_and_41_refused(ws_a):
    assert label_create(workspace=ws_a, name="x" * 40).name == "x" * 40
    error = refused("invalid_argument", label_create, workspace=ws_a, name="y" * 41)
    assert error.details["problem"] == "too_long" and error.details["field"] == "name"
    assert not Label.objects.filter(name="y" * 41).exists()


def test_a_name_with_nul_an_empty_name_and_an_unknown_colour_are_refused(ws_a):
    assert (
        refused("invalid_argument", label_create, workspace=ws_a, name="bad\x00").details["problem"] == "nul"
    )
    refused("invalid_argument", label_create, workspace=ws_a, name="   ")
    refused("invalid_argument", label_create, workspace=ws_a, name="Bug", colour="chartreuse")
    assert not Label.objects.exists()


def test_a_name_is_unique_in_its_workspace_whatever_its_case(ws_a, ws_b):
    label_create(workspace=ws_a, name="Bug", colour="red")
    error = refused("conflict", label_create, workspace=ws_a, name="bUG")
    assert error.fix is not None
    assert Label.objects.filter(workspace=ws_a).count() == 1
    assert label_create(workspace=ws_b, name="bug").workspace_id == ws_b.pk


@pytest.mark.django_db(transaction=True)
def test_two_people_creating_one_name_at_once_make_one_label(on_postgres, ws_a, monkeypatch):
    # Every creator is held between its check for the name and its insert, so all of them pass
    # the check before any inserts: only the database's unique index keeps the name single.
    def slow_now() -> datetime:
        time.sleep(0.3)
        return timezone.now()

    monkeypatch.setattr(clock, "db_now", slow_now)
    names = ["Release", "RELEASE", "release", "Release"]
    outcomes = race(names, lambda name: label_create(workspace=ws_a, name=name))
    assert codes(outcomes) == {"Label": 1, "conflict": 3}, outcomes
    assert Label.objects.filter(workspace=ws_a).count() == 1


def test_ten_labels_on_a_task_are_taken_and_eleven_refused(ws_a, task):
    names = [label.name for label in _labels(ws_a, *(f"L{i}" for i in range(11)))]
    assert task_update(task=task, labels=names[:10]).action == "updated"
    assert len(_names(task)) == 10
    error = refused("invalid_argument", task_update, task=task, labels=names)
    assert error.details["problem"] == "too_long" and error.details["field"] == "labels"
    assert len(_names(task)) == 10
    refused("invalid_argument", task_create, workspace=ws_a, title="Eleven", labels=names)
    assert not Task.objects.filter(title="Eleven").exists()


def test_labels_are_named_in_any_case_once_and_without_nul(ws_a, task):
    _labels(ws_a, "Bug", "UI")
    task_update(task=task, labels=["bug", "ui"])
    assert _names(task) == ["Bug", "UI"]
    refused("invalid_argument", task_update, task=task, labels=["Bug", "BUG"])
    refused("invalid_argument", task_update, task=task, labels=["Bug\x00"])
    refused("invalid_argument", task_update, task=task, labels="Bug")
    assert _names(task) == ["Bug", "UI"]


def test_a_label_of_another_workspace_is_refused_and_never_stored(ws_a, ws_b, task):
    _labels(ws_b, "Secret")
    error = refused("invalid_argument", task_update, task=task, labels=["Secret"])
    assert "no label named 'Secret'" in error.message
    assert _names(task) == []
    refused("invalid_argument", task_create, workspace=ws_a, title="Leaky", labels=["Secret"])
    assert not Task.objects.filter(title="Leaky").exists()


def test_the_payload_and_the_event_carry_the_labels(ws_a, task):
    _labels(ws_a, "ux", "Backend")
    result = task_update(task=task, labels=["UX", "backend"])
    assert task_payload(result.task)["labels"] == ["Backend", "ux"]
    event = Event.objects.filter(type="task.updated", entity_id=str(task.pk)).latest("pk")
    assert event.payload == {"taskId": task.pk, "fields": ["labels"], "labels": ["Backend", "ux"]}
    assert task_update(task=task, labels=["ux", "BACKEND"]).action == "unchanged"
    assert task_update(task=task, labels=[]).action == "updated"
    assert task_payload(Task.objects.get(pk=task.pk))["labels"] == []


def test_the_board_state_shows_each_tasks_labels(ws_a, alice):
    _labels(ws_a, "Bug")
    labelled = task_create(workspace=ws_a, title="Labelled", labels=["bug"], by_user=alice).task
    task_create(workspace=ws_a, title="Plain", by_user=alice)
    rows = {row["title"]: row for row in board_state(workspace=ws_a).payload()["columns"]["todo"]}
    assert rows["Labelled"]["labels"] == ["Bug"] and rows["Plain"]["labels"] == []
    assert rows["Labelled"]["id"] == labelled.pk


def test_the_label_filter_finds_the_labelled_task_only(ws_a, alice, bob):
    _labels(ws_a, "Bug", "Docs")
    bug = task_create(workspace=ws_a, title="Crash", labels=["Bug"], by_user=alice).task
    task_create(workspace=ws_a, title="Guide", labels=["Docs"], by_user=alice)
    task_create(workspace=ws_a, title="Nothing", by_user=alice)
    board = board_for_read(ws_a)

    def found(filters: BoardFilter) -> list[int]:
        columns = board_columns(workspace=ws_a, board=board, filters=filters, now=bug.created_at)
        return [card.task.pk for column in columns for card in column.cards]

    assert found(BoardFilter(label="BUG")) == [bug.pk]
    assert found(BoardFilter(label="Nope")) == []
    assert len(found(BoardFilter())) == 3


def test_a_new_label_from_the_task_page_is_both_or_neither(ws_a, task):
    _labels(ws_a, *(f"L{i}" for i in range(10)))
    task_update(task=task, labels=[f"L{i}" for i in range(10)])
    refused("invalid_argument", task_label_new, task=task, name="Eleventh", colour="blue")
    assert not Label.objects.filter(name="Eleventh").exists()
    task_update(task=task, labels=[])
    assert task_label_new(task=task, name="Eleventh", colour="blue").colour == "blue"
    assert _names(task) == ["Eleventh"]


def test_an_agent_sets_labels_but_not_while_a_person_decides(ws_a, agent, task):
    _labels(ws_a, "Bug")
    assert task_edit(task=task, by_connection=agent, labels=["bug"]).action == "updated"
    task.review_required = True
    task.save(update_fields=["review_required"])
    complete(task_claim(task_id=task.pk, connection=agent))
    refused("forbidden", task_edit, task=task, by_connection=agent, labels=[])
    assert _names(task) == ["Bug"]


def _session(user: User, workspace: Workspace, body: Callable[[MCP], Awaitable[None]]) -> None:
    token, _ = agent_token(user, workspace)

    async def run() -> None:
        async with in_process() as client:
            await body(MCP(client, token))

    asyncio.run(run())


def _code(result: dict[str, Any]) -> str | None:
    return result["structuredContent"]["error"]["code"] if result.get("isError") else None


@pytest.mark.django_db(transaction=True)
def test_agents_set_and_read_labels_over_mcp_up_to_ten(alice, ws_a):
    names = [label.name for label in _labels(ws_a, *(f"L{i}" for i in range(11)))]

    async def body(mcp: MCP) -> None:
        schemas = {tool["name"]: tool["inputSchema"]["properties"] for tool in await mcp.tools()}
        assert schemas["create_task"]["labels"]["maxItems"] == 10
        created = await mcp.call("create_task", {"title": "Tagged", "labels": ["l1", "L2"]})
        assert _code(created) is None, text_of(created)
        task_id = created["structuredContent"]["task"]["id"]
        assert created["structuredContent"]["task"]["labels"] == ["L1", "L2"]
        over = await mcp.call("update_task", {"id": task_id, "labels": names})
        assert _code(over) == "invalid_argument", text_of(over)
        ten = await mcp.call("update_task", {"id": task_id, "labels": names[:10]})
        assert _code(ten) is None, text_of(ten)
        unknown = await mcp.call("update_task", {"id": task_id, "labels": ["Nope"]})
        assert _code(unknown) == "invalid_argument" and "L0" in text_of(unknown)
        got = await mcp.call("get_task", {"id": task_id})
        assert got["structuredContent"]["task"]["labels"] == sorted(names[:10], key=str.lower)

    _session(alice, ws_a, body)
