"""Attention limits through task_claim, at their edges."""

import pytest

from boards.services import inbox_decide, task_claim
from tests.boards.helpers import ask, complete, refused


def fill(make_task, agent, n, minutes=1):
    """n review items, each of `minutes` estimated minutes."""
    for i in range(n):
        task = make_task(f"Review {i}", review_required=True, estimated_review_minutes=minutes)
        complete(task_claim(task_id=task.pk, connection=agent))


def test_solo_workspace_refuses_at_5_not_at_4(agent, make_task):
    fill(make_task, agent, 4)
    ok = make_task("fifth")
    complete(task_claim(task_id=ok.pk, connection=agent))  # not review_required: nothing added
    fill(make_task, agent, 1)
    blocked = make_task("blocked")
    error = refused("attention_queue_full", task_claim, task_id=blocked.pk, connection=agent)
    assert error.details["size"] == 5 and error.details["limit"] == 5
    assert error.details["minutes"] == 5
    assert error.details["oldestAgeSeconds"] >= 0
    assert "report_progress" in error.details["allowedCalls"]
    assert error.fix.marker == "Wait"
    assert "below 5 items" in error.fix.condition


def test_team_workspace_refuses_at_10_not_at_9(agent, bob, make_task):
    fill(make_task, agent, 9)
    complete(task_claim(task_id=make_task("tenth").pk, connection=agent))
    fill(make_task, agent, 1)
    error = refused("attention_queue_full", task_claim, task_id=make_task("x").pk, connection=agent)
    assert error.details["size"] == 10 and error.details["limit"] == 10


def test_minutes_refuse_at_45_not_at_44(agent, bob, make_task):
    fill(make_task, agent, 1, minutes=44)
    complete(task_claim(task_id=make_task("fits").pk, connection=agent))
    fill(make_task, agent, 1, minutes=1)
    error = refused("attention_queue_full", task_claim, task_id=make_task("x").pk, connection=agent)
    assert error.details["minutes"] == 45 and error.details["reason"] == "minutes"
    assert "45 minutes" in error.fix.condition


def test_questions_count_and_snoozed_items_do_not(agent, alice, make_task):
    fill(make_task, agent, 3)
    ask(task_claim(task_id=make_task("asks").pk, connection=agent))
    fill(make_task, agent, 1)
    blocked = make_task("blocked")
    refused("attention_queue_full", task_claim, task_id=blocked.pk, connection=agent)
    from boards.models import InboxItem

    review = InboxItem.objects.filter(kind="review").first()
    assert review is not None
    inbox_decide(item=review, user=alice, decision="later")
    task_claim(task_id=blocked.pk, connection=agent)


@pytest.mark.parametrize("call", ["resume"])
def test_work_already_held_is_always_allowed(agent, make_task, call):
    held = task_claim(task_id=make_task("held").pk, connection=agent)
    fill(make_task, agent, 5)
    assert task_claim(task_id=held.task.pk, connection=agent).resumed
    complete(task_claim(task_id=held.task.pk, connection=agent))
