"""A person who moves or trashes a task whose review waits decides that review by doing so."""

from __future__ import annotations

import pytest

from boards.models import Approval, Column, Decision, InboxState
from boards.selectors import attention_status
from boards.services import inbox_decide, task_claim, task_move, task_restore, task_trash
from tests.boards.helpers import complete, refused
from weft.models import Event


@pytest.fixture
def waiting_review(make_task, agent):
    task = make_task("Ship the importer", review_required=True)
    result = complete(task_claim(task_id=task.pk, connection=agent), next_step="deploy to staging")
    assert result.inbox_item is not None
    return task, result.inbox_item


@pytest.mark.parametrize("column", [Column.DONE, Column.TODO, Column.DROPPED, Column.BACKLOG])
def test_moving_the_task_closes_its_review(ws_a, alice, waiting_review, column):
    task, item = waiting_review
    assert attention_status(workspace=ws_a).waiting == 1
    task_move(task=task, column=column, by_user=alice)
    item.refresh_from_db()
    assert (item.state, item.decision, item.decided_by) == (InboxState.DECIDED, Decision.MOVED, alice)
    assert attention_status(workspace=ws_a).waiting == 0
    assert Event.objects.filter(type="inbox.item_decided", entity_id=str(item.pk)).count() == 1
    # The stale review can no longer move the task or approve its step.
    refused("already_decided", inbox_decide, item=item, user=alice, decision="accept")
    task.refresh_from_db()
    assert task.column == column
    assert not Approval.objects.exists()


def test_a_task_moved_back_and_claimed_again_is_not_accepted_by_its_old_review(alice, agent2, waiting_review):
    task, item = waiting_review
    task_move(task=task, column=Column.TODO, by_user=alice)
    task_claim(task_id=task.pk, connection=agent2)
    refused("already_decided", inbox_decide, item=item, user=alice, decision="accept")
    task.refresh_from_db()
    assert task.column == Column.DOING


def test_trashing_the_task_closes_its_review_and_restoring_does_not_reopen_it(ws_a, alice, waiting_review):
    task, item = waiting_review
    task_trash(task=task, by_user=alice)
    item.refresh_from_db()
    assert item.decision == Decision.MOVED
    task_restore(task=task, by_user=alice)
    assert attention_status(workspace=ws_a).waiting == 0


def test_a_move_without_a_waiting_review_writes_no_inbox_event(alice, task):
    task_move(task=task, column=Column.BACKLOG, by_user=alice)
    assert not Event.objects.filter(type="inbox.item_decided").exists()
