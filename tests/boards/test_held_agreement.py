"""People and agents agree on who holds a task: an expired run that no sweep has ended yet
holds nothing on the web board, its held-only filter, the task page, get_my_work and the
board state alike."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from boards.models import Run, RunState
from boards.selectors import board_state
from boards.services import task_claim, work_for_connection

pytestmark = pytest.mark.usefixtures("moved_clock")

HOLDER = 'title="Who holds the task"'


def _seen(client, ws, task, agent):
    """Whether each surface shows the task as held: board card, held-only filter, task page, MCP reads."""
    board_url = reverse("boards:board", kwargs={"slug": ws.slug})
    board = client.get(board_url).content.decode()
    held_only = client.get(board_url, {"held": "on"}).content.decode()
    page = client.get(reverse("boards:task", kwargs={"slug": ws.slug, "task_id": task.pk})).content.decode()
    state = board_state(workspace=ws).payload()
    doing = {row["id"]: row for row in state["columns"]["doing"]}
    return {
        "board card": HOLDER in board and 'class="lease' in board,
        "held-only filter": task.title in held_only,
        "task page": "lease until" in page,
        "get_my_work": [run.task_id for run in work_for_connection(connection=agent).held] == [task.pk],
        "board state": doing[task.pk]["heldBy"] is not None,
    }


def test_an_expired_unswept_run_is_held_nowhere(alice, ws_a, agent, task):
    client = Client()
    client.force_login(alice)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        run = task_claim(task_id=task.pk, connection=agent).run
        assert set(_seen(client, ws_a, task, agent).values()) == {True}

        traveller.move_to(run.lease_expires_at + timedelta(seconds=1))
        seen = _seen(client, ws_a, task, agent)

    assert Run.objects.get(pk=run.pk).state == RunState.ACTIVE  # no sweep ran
    assert seen == dict.fromkeys(seen, False)
