"""get_my_work (boards/services/work.py) as a contract: which task is offered next, what counts as
overdue or due soon, which runs and Inbox items are this connection's, and the one hint each state
gives — each rule at its edge, with another connection and another workspace present."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import clock
from boards.models import Column, InboxItem, Priority, Question, Run, Task
from boards.services import inbox_decide, question_answer, task_claim, task_create, work_for_connection
from boards.services.common import lease_token_for
from tests.boards.helpers import ask, complete
from weft.hints import DONE, next_, wait

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("moved_clock")]


@pytest.fixture
def tasks(ws_a: Any, alice: Any):
    def make(title: str, **kwargs: Any) -> Task:
        position = kwargs.pop("position", None)
        task = task_create(workspace=kwargs.pop("workspace", ws_a), title=title, by_user=alice, **kwargs).task
        if position is not None:
            Task.objects.filter(pk=task.pk).update(position=position)
        return task

    return make


def start(agent: Any, task: Task) -> Any:
    return task_claim(task_id=task.pk, connection=agent)


# The task offered next --------------------------------------------------------------------------


def test_the_best_next_task_is_the_highest_priority_in_todo(agent, tasks):
    tasks("Normal", priority=Priority.NORMAL, position=1)
    urgent = tasks("Urgent", priority=Priority.URGENT, position=9)
    tasks("Backlog, urgent", priority=Priority.URGENT, column=Column.BACKLOG, position=0)
    work = work_for_connection(connection=agent)
    assert work.best == urgent
    assert work.hint == next_("start_task", {"id": urgent.pk})


def test_at_equal_priority_the_soonest_due_comes_first_and_no_due_date_comes_last(agent, tasks):
    now = clock.db_now()
    tasks("No due date", position=0)
    tasks("Due in a week", due_at=now + timedelta(days=7), position=1)
    soon = tasks("Due tomorrow", due_at=now + timedelta(days=1), position=2)
    assert work_for_connection(connection=agent).best == soon


def test_at_equal_priority_and_due_date_the_board_order_then_the_id_decide(agent, tasks):
    tasks("Lower on the board", position=5)
    first_a = tasks("Top, first made", position=1)
    tasks("Top, made later", position=1)
    assert work_for_connection(connection=agent).best == first_a


def test_another_workspace_s_task_is_never_offered(agent, tasks, ws_b):
    tasks("Theirs", workspace=ws_b, priority=Priority.URGENT)
    mine = tasks("Mine", priority=Priority.LOW)
    assert work_for_connection(connection=agent).best == mine
    Task.objects.filter(pk=mine.pk).delete()
    work = work_for_connection(connection=agent)
    assert work.best is None and work.hint == DONE


# Overdue and due soon -----------------------------------------------------------------------------


def test_due_exactly_now_is_overdue_and_a_moment_later_is_due_soon(agent, tasks):
    now = clock.db_now()
    at_now = tasks("Due now", due_at=now)
    later = tasks("Due a moment later", due_at=now + timedelta(microseconds=1))
    work = work_for_connection(connection=agent, now=now)
    assert work.overdue == [at_now]
    assert work.due_soon == [later]


def test_due_soon_reaches_exactly_24_hours_ahead(agent, tasks):
    now = clock.db_now()
    edge = tasks("Due in 24 h", due_at=now + timedelta(hours=24))
    tasks("Due in 24 h and a moment", due_at=now + timedelta(hours=24, microseconds=1))
    tasks("Due in a week", due_at=now + timedelta(days=7))
    assert work_for_connection(connection=agent, now=now).due_soon == [edge]


def test_due_lists_open_tasks_of_this_workspace_only_soonest_first(agent, tasks, ws_b):
    now = clock.db_now()
    late = tasks("Late", due_at=now + timedelta(hours=3), column=Column.BACKLOG)
    early = tasks("Early", due_at=now + timedelta(hours=1))
    same_time = tasks("Early too", due_at=now + timedelta(hours=1))
    tasks("Done already", due_at=now + timedelta(hours=2), column=Column.DONE)
    tasks("Theirs", due_at=now + timedelta(hours=2), workspace=ws_b)
    tasks("No due date")
    assert work_for_connection(connection=agent, now=now).due_soon == [early, same_time, late]


def test_due_lists_at_most_20_tasks(agent, tasks, pro):
    now = clock.db_now()
    made = [tasks(f"Due {n}", due_at=now + timedelta(minutes=n + 1)) for n in range(21)]
    assert work_for_connection(connection=agent, now=now).due_soon == made[:20]


# What this connection holds and what waits for it ------------------------------------------------------


def test_held_runs_are_this_connection_s_only_soonest_expiry_first(agent, agent2, tasks):
    first, second, other = tasks("First"), tasks("Second"), tasks("Other's")
    start(agent, first)
    start(agent, second)
    start(agent2, other)
    Run.objects.filter(task=first).update(lease_expires_at=clock.db_now() + timedelta(minutes=30))
    work = work_for_connection(connection=agent)
    assert [run.task for run in work.held] == [second, first]
    assert work.hint == next_("start_task", {"id": second.pk})


def test_held_runs_carry_the_lease_token_start_task_gave(agent, tasks):
    claim = start(agent, tasks("Held"))
    work = work_for_connection(connection=agent)
    assert work.lease_tokens == {claim.run.pk: claim.lease_token}
    assert claim.lease_token == lease_token_for(run_id=claim.run.run_id, epoch=claim.run.epoch)
    assert work.payload()["held"][0]["leaseToken"] == claim.lease_token


def test_open_questions_are_listed_by_run_oldest_first_open_ones_only(agent, agent2, alice, tasks):
    claim = start(agent, tasks("Asking"))
    first = ask(claim, "Which database?").question
    second = ask(claim, "Which region?").question
    third = ask(claim, "Which port?").question
    ask(start(agent2, tasks("Other's")), "Theirs?")
    Question.objects.filter(pk=third.pk).update(created_at=first.created_at - timedelta(seconds=1))
    work = work_for_connection(connection=agent)
    assert work.open_questions == {claim.run.pk: [third.pk, first.pk, second.pk]}
    question_answer(question=Question.objects.get(pk=first.pk), user=alice, answer="Postgres")
    assert work_for_connection(connection=agent).open_questions == {claim.run.pk: [third.pk, second.pk]}


def test_a_run_waiting_on_a_question_says_who_decides_and_until_when(agent, tasks):
    claim = start(agent, tasks("Asking"))
    question = ask(claim).question
    run = Run.objects.get(pk=claim.run.pk)
    work = work_for_connection(connection=agent)
    assert work.hint == wait(
        f"a person answers question {question.pk} on task {claim.task.pk} in the Inbox"
        f" (the claim holds until {run.lease_expires_at.isoformat()})",
        "get_my_work",
    )


def test_an_answered_question_on_a_task_back_in_todo_says_start_that_task(agent, alice, tasks):
    claim = start(agent, tasks("Asked"))
    question = ask(claim).question
    Run.objects.filter(pk=claim.run.pk).update(lease_expires_at=clock.db_now() - timedelta(seconds=1))
    Task.objects.filter(pk=claim.task.pk).update(column=Column.TODO)
    tasks("Urgent other", priority=Priority.URGENT)
    question_answer(question=Question.objects.get(pk=question.pk), user=alice, answer="Postgres")
    work = work_for_connection(connection=agent)
    assert [q.pk for q in work.answers] == [question.pk]
    assert work.hint == next_("start_task", {"id": claim.task.pk})


def test_an_answer_on_a_task_no_longer_open_does_not_point_at_it(agent, alice, tasks):
    claim = start(agent, tasks("Asked"))
    question = ask(claim).question
    Run.objects.filter(pk=claim.run.pk).update(lease_expires_at=clock.db_now() - timedelta(seconds=1))
    Task.objects.filter(pk=claim.task.pk).update(column=Column.DONE)
    best = tasks("Next one")
    question_answer(question=Question.objects.get(pk=question.pk), user=alice, answer="Postgres")
    assert work_for_connection(connection=agent).hint == next_("start_task", {"id": best.pk})


def test_items_waiting_on_people_are_this_connection_s_oldest_first(agent, agent2, tasks):
    first = complete(start(agent, tasks("One", review_required=True))).inbox_item
    second = complete(start(agent, tasks("Two", review_required=True))).inbox_item
    complete(start(agent2, tasks("Other's", review_required=True)))
    InboxItem.objects.filter(pk=second.pk).update(created_at=first.created_at - timedelta(seconds=1))
    work = work_for_connection(connection=agent)
    assert [i.pk for i in work.waiting] == [second.pk, first.pk]
    assert work.hint == wait("a person decides 2 item(s) of yours in the Inbox", "get_my_work")


def test_items_of_another_workspace_are_not_this_connection_s(agent, agent_b, ws_b, carol, tasks):
    complete(start(agent_b, tasks("Theirs", workspace=ws_b, review_required=True)))
    work = work_for_connection(connection=agent)
    assert work.waiting == [] and work.hint == DONE


def test_an_approval_says_start_its_task(agent, alice, tasks):
    item = complete(start(agent, tasks("Ship", review_required=True)), next_step="deploy").inbox_item
    inbox_decide(item=item, user=alice, decision="accept")
    tasks("Urgent other", priority=Priority.URGENT)
    work = work_for_connection(connection=agent)
    assert work.hint == next_("start_task", {"id": item.task_id})


def test_with_room_for_review_the_capacity_hint_is_done(agent, tasks):
    work = work_for_connection(connection=agent)
    assert not work.capacity.full
    assert work.capacity.hint == DONE


def test_the_result_is_read_at_the_time_given(agent, tasks):
    now = clock.db_now() + timedelta(minutes=3)
    assert work_for_connection(connection=agent, now=now).now == now


def test_the_queries_do_not_grow_with_the_runs_and_items_listed(agent, tasks, pro):
    """Each held run comes with its task and holder, each waiting item with its task: no query per row."""

    def queries_for_payload() -> int:
        with CaptureQueriesContext(connection) as captured:
            work_for_connection(connection=agent).payload()
        return len(captured)

    start(agent, tasks("Held 1"))
    complete(start(agent, tasks("Waits 1", review_required=True)))
    one_each = queries_for_payload()
    for n in (2, 3):
        start(agent, tasks(f"Held {n}"))
        complete(start(agent, tasks(f"Waits {n}", review_required=True)))
    assert queries_for_payload() == one_each


# News from other apps -------------------------------------------------------------------------------


class FakeSource:
    """A news source that gives the items set here, and records for whom it was read."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.asked: list[Any] = []

    def __call__(self, connection: Any) -> list[Any]:
        self.asked.append(connection)
        return list(self.items)


@pytest.fixture
def news_source(monkeypatch) -> FakeSource:
    """The one registered source (other sources removed)."""
    from boards import news

    source = FakeSource()
    monkeypatch.setattr(news, "_SOURCES", [])
    news.register_news_source(source)
    return source


def _issue_news(issue_id: int) -> Any:
    from boards.news import News
    from weft.hints import Call

    return News(
        "issue", issue_id, f"issue {issue_id} has an answer", Call("get_issue_status", {"id": issue_id})
    )


def test_with_nothing_to_start_news_points_at_its_read_call(agent, news_source):
    news_source.items.extend([_issue_news(7), _issue_news(9)])
    work = work_for_connection(connection=agent)
    assert news_source.asked == [agent]
    assert work.hint == next_("get_issue_status", {"id": 7})
    assert work.payload()["news"] == [
        {"kind": "issue", "id": 7, "summary": "issue 7 has an answer", "read": 'get_issue_status {"id": 7}'},
        {"kind": "issue", "id": 9, "summary": "issue 9 has an answer", "read": 'get_issue_status {"id": 9}'},
    ]
    assert "News: issue 7 has an answer" in work.summary()


def test_a_task_to_start_comes_before_news(agent, tasks, news_source):
    news_source.items.append(_issue_news(7))
    best = tasks("Do this")
    assert work_for_connection(connection=agent).hint == next_("start_task", {"id": best.pk})


def test_news_comes_before_waiting_on_people(agent, tasks, news_source):
    complete(start(agent, tasks("Waits", review_required=True)))
    news_source.items.append(_issue_news(7))
    assert work_for_connection(connection=agent).hint == next_("get_issue_status", {"id": 7})


def test_a_source_registered_twice_gives_its_news_once(agent, news_source):
    from boards import news

    source = news._SOURCES[0]
    news.register_news_source(source)
    news_source.items.append(_issue_news(7))
    assert [item.id for item in work_for_connection(connection=agent).news] == [7]
