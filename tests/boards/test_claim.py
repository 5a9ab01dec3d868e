"""task_claim: the lease, the context, idempotent resume, refusals."""

import pytest

from boards.models import Column, Run
from boards.services import run_release, task_claim, task_move
from tests.boards.helpers import beat, complete, refused


def test_it_claims_with_a_twenty_minute_lease(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    payload = claim.payload()
    assert payload["renewEverySeconds"] == 300
    assert payload["epoch"] == 1
    assert payload["leaseToken"] == claim.lease_token
    assert (claim.run.lease_expires_at - claim.run.started_at).total_seconds() == 20 * 60
    assert payload["context"]["description"] == "It loops."
    run = Run.objects.get()
    assert run.lease_token_hash != claim.lease_token and len(run.lease_token_hash) == 64
    task.refresh_from_db()
    assert task.column == Column.DOING and task.assignee_connection_id == agent.pk and task.epoch == 1


def test_a_second_claimer_is_told_who_holds_it_until_when(agent, agent2, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent2)
    assert error.details["holder"] == "Claude Code"
    assert error.details["until"] == claim.run.lease_expires_at.isoformat()
    assert error.fix.marker == "Fix"
    assert Run.objects.count() == 1


def test_the_same_connection_gets_its_live_run_back_with_the_same_token(agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    again = task_claim(task_id=task.pk, connection=agent)
    assert again.resumed and again.run.run_id == first.run.run_id
    assert again.run.epoch == first.run.epoch
    assert again.lease_token == first.lease_token
    assert Run.objects.count() == 1
    # Both answers carry the one token of the run, and it stays valid.
    beat(first)
    beat(again)


def test_a_new_claim_of_the_task_gets_a_new_token(agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    run_release(workspace=agent.workspace, run_id=first.run.run_id, lease_token=first.lease_token, reason="x")
    second = task_claim(task_id=task.pk, connection=agent)
    assert second.run.run_id != first.run.run_id
    assert second.lease_token != first.lease_token
    refused("lease_lost", beat, first)
    beat(second)


def test_foreign_and_missing_tasks_are_not_found(agent_b, task):
    refused("not_found", task_claim, task_id=task.pk, connection=agent_b)
    refused("not_found", task_claim, task_id=999999, connection=agent_b)
    refused("not_found", task_claim, task_id="abc", connection=agent_b)


def test_done_and_dropped_tasks_cannot_be_started(agent, alice, task):
    task_move(task=task, column=Column.DONE, by_user=alice)
    refused("invalid_argument", task_claim, task_id=task.pk, connection=agent)


def test_a_suspended_workspace_refuses_agents(agent, task, ws_a):
    ws_a.is_suspended = True
    ws_a.save()
    agent.workspace.is_suspended = True
    refused("workspace_suspended", task_claim, task_id=task.pk, connection=agent)
    assert not Run.objects.exists()


def test_a_person_can_claim_too(alice, ws_a, task):
    claim = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    assert claim.run.user_id == alice.pk
    complete(claim)


def test_claim_needs_exactly_one_claimer(agent, alice, task):
    with pytest.raises(ValueError):
        task_claim(task_id=task.pk)
    with pytest.raises(ValueError):
        task_claim(task_id=task.pk, connection=agent, user=alice)
