"""The shared service pieces at the points the first mutation run found untested: what a sweep
records, what lease_lost and already_claimed tell the agent, the attention refusal and count."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from boards.models import Column, Run, Task
from boards.services import (
    lease_sweep,
    run_heartbeat,
    task_claim,
    task_create,
    task_move,
    work_for_connection,
)
from boards.services.common import already_claimed, attention_now, expire_run
from tests.boards.helpers import ask, beat, complete, refused
from weft.models import Event

pytestmark = pytest.mark.usefixtures("moved_clock")


def test_a_silent_run_is_swept_stale_with_its_reason_time_and_event(agent, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=20))
        swept_at = timezone.now()
        assert lease_sweep() == 1
    run = Run.objects.get(pk=claim.run.pk)
    assert (run.state, run.end_reason, run.ended_at, run.lease_token_hash) == (
        "stale",
        "no heartbeat for 20 minutes",
        swept_at,
        "",
    )
    event = Event.objects.get(type="run.stale")
    assert (event.entity_type, event.entity_id, event.epoch) == ("run", str(run.run_id), run.epoch + 1)
    assert event.payload == {
        "runId": str(run.run_id),
        "taskId": task.pk,
        "reason": "no heartbeat for 20 minutes",
    }
    task.refresh_from_db()
    assert (task.column, task.epoch, task.updated_at) == (Column.TODO, run.epoch + 1, swept_at)
    assert (task.assignee_connection_id, task.assignee_user_id) == (None, None)


def test_a_question_hold_that_ran_out_is_swept_released(agent, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        ask(claim)
        traveller.shift(timedelta(minutes=60))
        assert lease_sweep() == 1
    run = Run.objects.get(pk=claim.run.pk)
    assert (run.state, run.end_reason) == ("released", "question hold ran out")
    assert Event.objects.get(type="run.released").payload["reason"] == "question hold ran out"


def test_expiring_changes_only_the_named_run_and_only_once_it_has_expired(agent, agent2, task, make_task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        first = task_claim(task_id=task.pk, connection=agent)
        other = task_claim(task_id=make_task("Other").pk, connection=agent2)
        run = Run.objects.get(pk=first.run.pk)
        assert expire_run(run, timezone.now()) is False  # still live: nothing changes
        traveller.shift(timedelta(minutes=20))
        assert expire_run(run, timezone.now()) is True
        assert Run.objects.get(pk=other.run.pk).state == "active"
        # A second expiry of the same (now stale) run changes nothing and emits nothing.
        assert expire_run(run, timezone.now()) is False
    assert Event.objects.filter(type="run.stale").count() == 1
    assert Task.objects.get(pk=task.pk).epoch == run.epoch + 1


def test_lease_lost_names_the_run_task_and_epoch_and_offers_the_task_again(agent, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=20))
        lease_sweep()
        error = refused("lease_lost", beat, claim)
    run_id = claim.run.run_id
    assert error.message == (
        f"run {run_id} no longer holds task {task.pk} (expired, released or superseded); nothing was changed"
    )
    assert error.details == {"runId": str(run_id), "taskId": task.pk, "epoch": claim.run.epoch + 1}
    assert error.fix.lines() == [f'Fix: start_task {{"id": {task.pk}}}']


def test_lease_lost_on_a_finished_task_sends_the_agent_to_its_work_list(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    complete(claim)
    assert refused("lease_lost", beat, claim).fix.lines() == ["Fix: get_my_work {}"]


def test_already_claimed_names_the_holder_and_until_when(agent, agent2, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent2)
    until = claim.run.lease_expires_at.isoformat()
    assert error.message == f"task {task.pk} is held by Claude Code until {until}; do not duplicate the work"
    assert error.details == {"taskId": task.pk, "holder": "Claude Code", "until": until}
    assert error.fix.lines() == ["Fix: get_my_work {}"]


def test_already_claimed_without_a_known_holder_says_another_claimer(task):
    error = already_claimed(task, None)
    assert error.message == f"task {task.pk} is held by another claimer; do not duplicate the work"
    assert error.details == {"taskId": task.pk, "holder": "another claimer", "until": None}


def test_attention_of_an_empty_workspace_counts_nothing(ws_a):
    now = timezone.now()
    state = attention_now(ws_a.pk, now)
    assert (state.waiting, state.minutes, state.oldest_age, state.limit, state.full) == (0, 0, None, 5, False)


def test_attention_counts_a_review_with_its_minutes_and_age(agent, make_task):
    review = make_task("Review me", review_required=True, estimated_review_minutes=7)
    complete(task_claim(task_id=review.pk, connection=agent))
    state = attention_now(agent.workspace_id, timezone.now() + timedelta(minutes=3))
    assert (state.waiting, state.minutes) == (1, 7)
    assert state.oldest_age is not None and timedelta(minutes=3) <= state.oldest_age < timedelta(minutes=4)


def test_a_full_queue_refuses_with_the_count_and_a_wait_on_get_my_work(agent, make_task):
    for i in range(5):
        review = make_task(f"Review {i}", review_required=True, estimated_review_minutes=1)
        complete(task_claim(task_id=review.pk, connection=agent))
    error = refused("attention_queue_full", task_claim, task_id=make_task("Blocked").pk, connection=agent)
    assert error.message == "5 items wait on people (oldest 0m, ~5 min of review)"
    wait_line = (
        "Wait: a person clears the Inbox below 5 items, in about 10 minutes; check again with get_my_work {}"
    )
    assert error.fix.lines() == [wait_line]
    # get_my_work says the same while the queue is full: its next action and its capacity.
    work = work_for_connection(connection=agent)
    assert work.hint.lines() == [wait_line]
    assert work.capacity.hint.lines() == [wait_line]


@pytest.mark.parametrize("foreign", [True, False])
def test_a_run_of_another_workspace_or_no_run_at_all_holds_no_lease(agent, agent_b, make_task, foreign):
    theirs = task_claim(task_id=make_task("Theirs", workspace=agent_b.workspace).pk, connection=agent_b)
    run_id = str(theirs.run.run_id) if foreign else "not-a-run"
    error = refused(
        "lease_lost",
        run_heartbeat,
        workspace=agent.workspace,
        run_id=run_id,
        lease_token=theirs.lease_token,
        note="hi",
    )
    assert error.message == f"run {run_id} holds no lease in this workspace"
    assert error.details == {"runId": run_id}
    assert error.fix.lines() == ["Fix: get_my_work {}"]


def test_an_agent_moving_a_task_to_done_is_refused_as_a_persons_act(agent, task):
    error = refused("forbidden", task_move, task=task, column=Column.DONE, by_connection=agent)
    assert error.message == (
        f"agents move tasks only between backlog and todo; moving task {task.pk} from todo to done"
        " is a person's act (finish with complete_task, give it back with release_task)"
    )
    assert error.details == {"taskId": task.pk, "column": "todo"}
    assert error.fix.lines() == [
        f"Wait: a person moves task {task.pk} to done if they decide to;"
        f' check again with get_task {{"id": {task.pk}}}'
    ]


def test_a_value_past_its_limit_is_invalid_argument_naming_field_problem_and_limit(ws_a):
    error = refused("invalid_argument", task_create, workspace=ws_a, title="x" * 500)
    assert error.message == "title: at most 200 characters (got 500)"
    assert error.details == {
        "field": "title",
        "reason": "at most 200 characters (got 500)",
        "problem": "too_long",
        "limit": 200,
    }
    assert error.fix.lines() == ["Fix: get_board_state {}"]
    empty = refused("invalid_argument", task_create, workspace=ws_a, title=" ")
    assert empty.details == {"field": "title", "reason": "must not be empty", "problem": "empty"}
