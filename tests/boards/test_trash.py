"""The trash keeps a task recoverable for 30 days, then the hourly purge deletes it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from boards.models import Column, Task
from boards.services import task_restore, task_trash, trash_purge
from boards.tasks import purge_trash
from weft.errors import WeftError
from weft.models import Event


def test_it_keeps_a_trashed_task_for_30_days(alice, task, moved_clock, time_machine):
    time_machine.move_to(timezone.now(), tick=False)
    task_trash(task=task, by_user=alice)
    time_machine.shift(timedelta(days=30) - timedelta(minutes=1))
    assert trash_purge() == 0
    assert task_restore(task=task, by_user=alice).task.column == Column.TODO


def test_it_purges_after_30_days_with_one_event(alice, task, moved_clock, time_machine, ws_a):
    time_machine.move_to(timezone.now(), tick=False)
    task_trash(task=task, by_user=alice)
    time_machine.shift(timedelta(days=30, minutes=1))
    with pytest.raises(WeftError):
        task_restore(task=task, by_user=alice)
    assert purge_trash.apply().get() == 1
    assert not Task.objects.filter(pk=task.pk).exists()
    assert Event.objects.filter(workspace=ws_a, type="task.purged", entity_id=str(task.pk)).count() == 1
    assert trash_purge() == 0


def test_it_leaves_other_columns_alone(alice, task, moved_clock, time_machine):
    time_machine.move_to(timezone.now(), tick=False)
    time_machine.shift(timedelta(days=90))
    assert trash_purge() == 0
    assert Task.objects.filter(pk=task.pk, column=Column.TODO).exists()
