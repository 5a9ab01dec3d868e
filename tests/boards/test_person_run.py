"""A person's own run (boards/services/person.py): start, stop, finish; agents see it as held; it
expires after PERSON_LEASE; it does not count against attention; the approved next step is named
in get_my_work until started; and on PostgreSQL a person and an agent racing to start the same
task give exactly one winner."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from boards import lease
from boards.models import Column, InboxItem, Run, RunState, Task
from boards.news import approved_steps
from boards.services import (
    PERSON_LEASE,
    inbox_decide,
    lease_sweep,
    person_move,
    person_start,
    person_stop,
    task_claim,
    task_create,
    work_for_connection,
)
from boards.services.common import attention_now
from tests.boards.helpers import codes, complete, race, refused
from weft.hints import next_
from weft.models import Event


def _types(task: Task) -> list[str]:
    """The events about the task and its runs, oldest first (task.created left out)."""
    runs = [str(r) for r in Run.objects.filter(task=task).values_list("run_id", flat=True)]
    rows = Event.objects.filter(entity_type="task", entity_id=str(task.pk)) | Event.objects.filter(
        entity_type="run", entity_id__in=runs
    )
    return [t for t in rows.order_by("pk").values_list("type", flat=True) if t != "task.created"]


def test_a_person_starts_a_task_with_a_lease_of_their_own(alice, ws_a, task):
    started = person_start(task=task, user=alice)
    run = Run.objects.get(task=task)
    assert (run.user_id, run.connection_id, run.state, run.epoch) == (alice.pk, None, RunState.ACTIVE, 1)
    assert run.lease_expires_at - run.started_at == PERSON_LEASE
    task.refresh_from_db()
    assert (task.column, task.epoch, task.assignee_user_id, task.assignee_connection_id) == (
        Column.DOING,
        1,
        alice.pk,
        None,
    )
    assert not started.resumed
    started_event = Event.objects.get(type="run.started")
    assert started_event.payload["userId"] == alice.pk and started_event.epoch == 1


def test_starting_again_renews_the_same_run(alice, ws_a, task, moved_clock):
    first = person_start(task=task, user=alice)
    with time_machine.travel(timezone.now() + timedelta(days=3), tick=False):
        again = person_start(task=task, user=alice)
        assert again.resumed and again.run.pk == first.run.pk
        assert Run.objects.get().lease_expires_at == timezone.now() + PERSON_LEASE
    task.refresh_from_db()
    assert task.epoch == 1, "a renewal is not a new claim"


def test_a_person_finishes_their_task_with_run_completed_and_the_move(alice, ws_a, task):
    person_start(task=task, user=alice)
    person_move(task=task, column=Column.DONE, by_user=alice)
    run = Run.objects.get(task=task)
    assert run.state == RunState.COMPLETED and run.lease_token_hash == ""
    task.refresh_from_db()
    assert (task.column, task.assignee_user_id) == (Column.DONE, None)
    assert _types(task) == ["run.started", "run.completed", "task.moved"]
    moved = Event.objects.get(type="task.moved")
    assert (moved.payload["from"], moved.payload["to"]) == ("doing", "done")
    assert Event.objects.get(type="run.completed").payload == {
        "runId": str(run.run_id),
        "taskId": task.pk,
        "review": False,
        "reportId": None,
    }
    assert not InboxItem.objects.exists(), "a person's own work waits on nobody"


@pytest.mark.parametrize("column", [Column.TODO, Column.BACKLOG])
def test_moving_it_back_releases_the_run(alice, ws_a, task, column):
    person_start(task=task, user=alice)
    person_move(task=task, column=column, by_user=alice)
    assert Run.objects.get(task=task).state == RunState.RELEASED
    task.refresh_from_db()
    assert (task.column, task.epoch, task.assignee_user_id) == (column, 2, None)
    assert _types(task) == ["run.started", "run.released", "task.moved"]


def test_stop_releases_the_run_and_puts_the_task_back_in_todo(alice, ws_a, task):
    person_start(task=task, user=alice)
    stopped = person_stop(task=task, user=alice)
    assert stopped.state == RunState.RELEASED and stopped.end_reason.startswith("stopped by")
    task.refresh_from_db()
    assert (task.column, task.epoch, task.assignee_user_id) == (Column.TODO, 2, None)
    assert _types(task) == ["run.started", "run.released"]


def test_stop_by_someone_who_does_not_hold_it_changes_nothing(alice, bob, ws_a, task):
    refused("lease_lost", person_stop, task=task, user=alice)  # nobody holds it
    person_start(task=task, user=alice)
    refused("lease_lost", person_stop, task=task, user=bob)
    assert Run.objects.get(task=task).state == RunState.ACTIVE


def test_a_person_moving_someone_elses_run_to_done_releases_it(alice, bob, ws_a, task):
    person_start(task=task, user=alice)
    person_move(task=task, column=Column.DONE, by_user=bob)
    assert Run.objects.get(task=task).state == RunState.RELEASED, "only the holder finishes a run"


def test_an_agent_cannot_claim_a_task_a_person_holds(alice, ws_a, agent, task):
    person_start(task=task, user=alice)
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent)
    assert alice.display_name in error.message and "do not duplicate the work" in error.message
    assert error.details["holder"] == alice.display_name
    assert error.fix is not None and error.fix.call is not None and error.fix.call.tool == "get_my_work"
    assert Run.objects.filter(task=task).count() == 1


def test_a_second_person_cannot_start_a_held_task(alice, bob, ws_a, task):
    person_start(task=task, user=alice)
    error = refused("already_claimed", person_start, task=task, user=bob)
    assert alice.display_name in error.message
    assert Run.objects.filter(task=task).count() == 1


def test_a_person_cannot_start_a_task_an_agent_holds(alice, ws_a, agent, task):
    task_claim(task_id=task.pk, connection=agent)
    refused("already_claimed", person_start, task=task, user=alice)


@pytest.mark.parametrize("column", [Column.DONE, Column.DROPPED])
def test_only_backlog_and_todo_tasks_can_be_started(alice, ws_a, task, column):
    person_move(task=task, column=column, by_user=alice)
    refused("invalid_argument", person_start, task=task, user=alice)
    assert not Run.objects.exists()


def test_a_persons_lease_expires_after_a_week(alice, ws_a, agent, task, moved_clock):
    person_start(task=task, user=alice)
    with time_machine.travel(timezone.now() + PERSON_LEASE - timedelta(seconds=1), tick=False):
        refused("already_claimed", task_claim, task_id=task.pk, connection=agent)
    with time_machine.travel(timezone.now() + PERSON_LEASE + timedelta(seconds=1), tick=False):
        assert lease_sweep() == 1
        assert Run.objects.get(task=task).end_reason == "the person's 7-day lease ran out"
        task.refresh_from_db()
        assert (task.column, task.assignee_user_id) == (Column.TODO, None)
        assert task_claim(task_id=task.pk, connection=agent).run.connection_id == agent.pk


def test_a_person_starts_even_when_the_inbox_is_full_and_adds_nothing_to_it(alice, ws_a, agent, make_task):
    for n in range(5):
        complete(task_claim(task_id=make_task(f"Review {n}", review_required=True).pk, connection=agent))
    before = attention_now(ws_a.pk, timezone.now())
    assert before.full
    refused("attention_queue_full", task_claim, task_id=make_task("Agent's").pk, connection=agent)
    person_start(task=make_task("Mine"), user=alice)
    assert attention_now(ws_a.pk, timezone.now()).waiting == before.waiting


# --- the approved next step in get_my_work --------------------------------------------------------


def _accepted_with_step(make_task: Any, agent: Any, alice: Any, step: str = "deploy to staging") -> Task:
    task = make_task("Ship the importer", review_required=True)
    result = complete(task_claim(task_id=task.pk, connection=agent), next_step=step)
    inbox_decide(item=result.inbox_item, user=alice, decision="accept")
    return task


def test_get_my_work_names_the_approved_step_until_it_is_started(agent, alice, ws_a, make_task):
    task = _accepted_with_step(make_task, agent, alice)
    for _ in range(2):  # handed over once in `approvals`, named in `news` every time
        work = work_for_connection(connection=agent)
        assert work.hint == next_("start_task", {"id": task.pk})
        (item,) = [n for n in work.payload()["news"] if n["kind"] == "approvedStep"]
        assert item["id"] == task.pk and item["read"] == f'start_task {{"id": {task.pk}}}'
        assert "approved exactly this step" in item["summary"] and "deploy to staging" in item["summary"]
        assert "News: Approved next step on task" in work.summary()
    claim = task_claim(task_id=task.pk, connection=agent)
    work = work_for_connection(connection=agent)
    assert [n for n in work.payload()["news"] if n["kind"] == "approvedStep"] == []
    (held,) = work.payload()["held"]
    assert held["approvedStep"] == "deploy to staging"
    complete(claim)
    assert approved_steps(agent) == [], "a used approval is not named again"


def test_an_ordinary_run_has_no_approved_step(agent, task):
    task_claim(task_id=task.pk, connection=agent)
    (held,) = work_for_connection(connection=agent).payload()["held"]
    assert held["approvedStep"] is None


def test_another_connection_is_not_told_of_the_approval(agent, agent2, alice, make_task):
    _accepted_with_step(make_task, agent, alice)
    assert approved_steps(agent2) == []
    assert len(approved_steps(agent)) == 1


# --- PostgreSQL: a person and an agent race to start the same task ----------------------------------

ROUNDS = 10


@pytest.mark.django_db(transaction=True)
def test_a_person_and_an_agent_racing_to_start_give_one_winner(on_postgres, pro, alice, agent):
    winners: dict[str, int] = {"person": 0, "agent": 0}
    for round_no in range(ROUNDS):
        task = task_create(workspace=pro, title=f"Contended {round_no}", by_user=alice).task

        def start(who: str, t: Task = task) -> Any:
            if who == "person":
                return person_start(task=t, user=alice)
            return task_claim(task_id=t.pk, connection=agent)

        outcomes = race(["person", "agent"], start)
        got = codes(outcomes)
        assert got["already_claimed"] == 1 and sum(got.values()) == 2, outcomes
        live = list(Run.objects.filter(task=task, state__in=lease.LIVE_STATES))
        assert len(live) == 1
        task.refresh_from_db()
        assert task.column == Column.DOING and task.epoch == 1
        by_person = live[0].connection_id is None
        assert (task.assignee_user_id, task.assignee_connection_id) == (
            (alice.pk, None) if by_person else (None, agent.pk)
        )
        winners["person" if by_person else "agent"] += 1
        Event.objects.filter(type="run.started", entity_id=str(live[0].run_id)).get()
        # Out of the way of the next round (and of the attention meter).
        Run.objects.filter(task=task).update(state=RunState.RELEASED)
        Task.objects.filter(pk=task.pk).update(column=Column.DONE)
    assert sum(winners.values()) == ROUNDS


def test_a_person_cannot_start_a_task_of_an_archived_board(alice, ws_a):
    from accounts.models import Seat
    from boards.services import board_archive, board_create, board_default
    from weft.errors import WeftError

    seat = Seat.objects.get(workspace=ws_a, user=alice)
    board_default(workspace=ws_a)
    spare = board_create(workspace=ws_a, name="Spare", by_seat=seat)
    task = task_create(workspace=ws_a, title="On the spare board", by_user=alice, board=spare).task
    board_archive(board=spare, by_seat=seat)
    with pytest.raises(WeftError) as refused:
        person_start(task=Task.objects.get(pk=task.pk), user=alice)
    assert refused.value.code == "invalid_argument" and "archived" in str(refused.value)
    assert Task.objects.get(pk=task.pk).column == Column.TODO
