"""task_edit changes a task's fields and moves it in one transaction."""

from __future__ import annotations

from boards.models import Column, Task
from boards.services import task_edit
from tests.boards.helpers import refused
from weft.models import Event


def test_it_leaves_the_fields_unwritten_when_the_move_is_refused(agent, task):
    error = refused(
        "forbidden", task_edit, task=task, column=Column.DONE, by_connection=agent, title="Renamed"
    )
    assert "is a person's act" in error.message
    assert Task.objects.get(pk=task.pk).title == "Fix the login redirect"
    assert not Event.objects.filter(type="task.updated", entity_id=str(task.pk)).exists()


def test_it_writes_the_fields_and_the_move_together(agent, task):
    result = task_edit(task=task, column=Column.BACKLOG, by_connection=agent, title="Renamed")
    stored = Task.objects.get(pk=task.pk)
    assert (result.task.column, stored.column, stored.title) == (Column.BACKLOG, Column.BACKLOG, "Renamed")


def test_it_updates_alone_without_a_column(agent, task):
    assert task_edit(task=task, by_connection=agent, priority=2).action == "updated"
    assert Task.objects.get(pk=task.pk).priority == 2
