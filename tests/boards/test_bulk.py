"""tasks_bulk: the list view's move, trash and set priority, all or none, one event per task."""

from __future__ import annotations

import pytest

from boards.models import Board, Column, Priority, Task
from boards.services import BULK_TASKS, task_claim, tasks_bulk
from boards.services import bulk as bulk_module
from weft.errors import WeftError
from weft.models import Event


def _tasks(ws, count: int, column: str = Column.BACKLOG) -> list[Task]:
    board = Board.objects.filter(workspace=ws).first() or Board.objects.create(workspace=ws, name="Main")
    Task.objects.bulk_create(
        Task(workspace=ws, board=board, title=f"Task {n}", column=column, position=n) for n in range(count)
    )
    return list(Task.objects.filter(workspace=ws, board=board).order_by("pk"))


def _events(ws, kind: str) -> int:
    return Event.objects.filter(workspace=ws, type=kind).count()


def test_it_moves_50_tasks_with_50_events(alice, ws_a):
    tasks = _tasks(ws_a, 50)
    result = tasks_bulk(
        workspace=ws_a, task_ids=[t.pk for t in tasks], action="move", column="todo", by_user=alice
    )
    assert result.count == 50
    assert set(Task.objects.filter(pk__in=[t.pk for t in tasks]).values_list("column", flat=True)) == {"todo"}
    assert _events(ws_a, "task.moved") == 50


def test_a_failure_at_the_50th_task_moves_none_and_emits_nothing(alice, ws_a, monkeypatch):
    tasks = _tasks(ws_a, 50)
    real, calls = bulk_module.task_move, []

    def failing(**kwargs):
        calls.append(kwargs["task"].pk)
        if len(calls) == 50:
            raise RuntimeError("the database went away")
        return real(**kwargs)

    monkeypatch.setattr(bulk_module, "task_move", failing)
    with pytest.raises(RuntimeError):
        tasks_bulk(
            workspace=ws_a, task_ids=[t.pk for t in tasks], action="move", column="done", by_user=alice
        )
    assert len(calls) == 50
    assert not Task.objects.filter(workspace=ws_a).exclude(column=Column.BACKLOG).exists()
    assert _events(ws_a, "task.moved") == 0


def test_it_trashes_and_sets_priority_with_the_single_writes_events(alice, ws_a):
    first, second, third = _tasks(ws_a, 3)
    tasks_bulk(workspace=ws_a, task_ids=[first.pk, second.pk], action="priority", priority=3, by_user=alice)
    assert list(Task.objects.filter(pk__in=[first.pk, second.pk]).values_list("priority", flat=True)) == [
        3,
        3,
    ]
    assert _events(ws_a, "task.updated") == 2
    tasks_bulk(workspace=ws_a, task_ids=[second.pk, third.pk], action="trash", by_user=alice)
    assert Task.objects.filter(column=Column.TRASH).count() == 2
    assert _events(ws_a, "task.trashed") == 2


def test_it_takes_200_tasks_and_refuses_201(alice, ws_a):
    tasks = _tasks(ws_a, BULK_TASKS + 1)
    assert BULK_TASKS == 200
    ids = [t.pk for t in tasks]
    with pytest.raises(WeftError) as refused:
        tasks_bulk(workspace=ws_a, task_ids=ids, action="priority", priority=Priority.HIGH, by_user=alice)
    assert refused.value.code == "invalid_argument"
    assert "at most 200 tasks" in refused.value.message
    assert _events(ws_a, "task.updated") == 0
    result = tasks_bulk(
        workspace=ws_a, task_ids=ids[:BULK_TASKS], action="priority", priority=Priority.HIGH, by_user=alice
    )
    assert result.count == 200
    assert _events(ws_a, "task.updated") == 200


def test_a_repeated_id_counts_once(alice, ws_a):
    (task,) = _tasks(ws_a, 1)
    result = tasks_bulk(workspace=ws_a, task_ids=[task.pk, str(task.pk)], action="trash", by_user=alice)
    assert result.count == 1


def test_a_foreign_id_refuses_the_whole_request(alice, carol, ws_a, ws_b):
    mine = _tasks(ws_a, 2)
    (theirs,) = _tasks(ws_b, 1)
    with pytest.raises(WeftError) as refused:
        tasks_bulk(
            workspace=ws_a, task_ids=[mine[0].pk, theirs.pk, mine[1].pk], action="trash", by_user=alice
        )
    assert refused.value.code == "not_found"
    assert not Task.objects.filter(column=Column.TRASH).exists()
    assert _events(ws_a, "task.trashed") == 0


@pytest.mark.parametrize("bad", ["\x00", "1" * 5000, "-3", "abc"])
def test_an_id_that_cannot_exist_is_not_found(alice, ws_a, bad):
    _tasks(ws_a, 1)
    with pytest.raises(WeftError) as refused:
        tasks_bulk(workspace=ws_a, task_ids=[bad], action="trash", by_user=alice)
    assert refused.value.code == "not_found"


def test_a_task_held_by_a_live_run_refuses_the_whole_request(alice, ws_a, agent):
    free, taken = _tasks(ws_a, 2, column=Column.TODO)
    task_claim(task_id=taken.pk, connection=agent)
    with pytest.raises(WeftError) as refused:
        tasks_bulk(workspace=ws_a, task_ids=[free.pk, taken.pk], action="move", column="done", by_user=alice)
    assert refused.value.code == "conflict"
    assert f"#{taken.pk}" in refused.value.message and f"#{free.pk}" not in refused.value.message
    assert Task.objects.get(pk=free.pk).column == Column.TODO
    assert Task.objects.get(pk=taken.pk).column == Column.DOING
    assert _events(ws_a, "task.moved") == 0


def test_a_trashed_task_refuses_the_whole_request(alice, ws_a):
    kept, trashed = _tasks(ws_a, 2)
    tasks_bulk(workspace=ws_a, task_ids=[trashed.pk], action="trash", by_user=alice)
    with pytest.raises(WeftError) as refused:
        tasks_bulk(
            workspace=ws_a, task_ids=[kept.pk, trashed.pk], action="move", column="todo", by_user=alice
        )
    assert refused.value.code == "conflict"
    assert Task.objects.get(pk=kept.pk).column == Column.BACKLOG


@pytest.mark.parametrize(
    ("action", "extra", "field"),
    [
        ("delete", {}, "action"),
        ("move", {"column": "doing"}, "column"),
        ("move", {}, "column"),
        ("priority", {"priority": 7}, "priority"),
        ("priority", {"priority": True}, "priority"),
    ],
)
def test_it_refuses_an_unknown_action_or_target(alice, ws_a, action, extra, field):
    (task,) = _tasks(ws_a, 1)
    with pytest.raises(WeftError) as refused:
        tasks_bulk(workspace=ws_a, task_ids=[task.pk], action=action, by_user=alice, **extra)
    assert refused.value.details["field"] == field


def test_it_refuses_an_empty_choice(alice, ws_a):
    with pytest.raises(WeftError) as refused:
        tasks_bulk(workspace=ws_a, task_ids=[], action="trash", by_user=alice)
    assert refused.value.details["field"] == "ids"
