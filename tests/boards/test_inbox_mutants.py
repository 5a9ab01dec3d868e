"""The Inbox's answers, pinned whole: each refusal's message, details and hint; the item, task,
question and run after Accept / Rework / Later / Drop and after an answer; the event each
decision emits; the snooze and lease arithmetic at its edges; and who is recorded as deciding."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from accounts.models import AgentConnection, User
from boards.models import Approval, Column, InboxItem, InboxKind, Question, Run, Task
from boards.results import ClaimResult
from boards.services import inbox_decide, question_answer, task_claim
from tests.boards.helpers import ask, complete, refused, release
from tests.web.factories import make_review
from weft.hints import DONE, fix, wait
from weft.models import Event

pytestmark = pytest.mark.usefixtures("moved_clock")


@pytest.fixture
def frozen() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


def reviewed(make_task: Any, agent: AgentConnection, next_step: str = "") -> InboxItem:
    task = make_task("Ship the importer", review_required=True)
    item = complete(task_claim(task_id=task.pk, connection=agent), next_step=next_step).inbox_item
    assert item is not None
    return item


def asking(task: Task, agent: AgentConnection) -> tuple[ClaimResult, InboxItem]:
    claim = task_claim(task_id=task.pk, connection=agent)
    return claim, ask(claim).item


def events(type: str = "inbox.item_decided") -> list[tuple[str, str, dict[str, Any], int | None]]:
    return [(e.entity_type, e.entity_id, e.payload, e.epoch) for e in Event.objects.filter(type=type)]


def decided(item: InboxItem, decision: str, column: str, approval_id: int | None = None) -> list[Any]:
    """The one inbox.item_decided event a decision emits."""
    payload = {
        "itemId": item.pk,
        "decision": decision,
        "taskId": item.task_id,
        "column": column,
        "approvalId": approval_id,
    }
    return [("inbox_item", str(item.pk), payload, None)]


def item_row(item: InboxItem) -> tuple[Any, ...]:
    item = InboxItem.objects.get(pk=item.pk)
    return (item.state, item.decision, item.note, item.snoozed_until, item.decided_by_id, item.decided_at)


def close(how: str, item: InboxItem, user: User) -> None:
    """Close a question the two ways a person can: answer it, or drop it in the Inbox."""
    if how == "answered":
        question_answer(question=Question.objects.get(inbox_item=item), user=user, answer="Postgres")
    else:
        inbox_decide(item=item, user=user, decision="drop")


CLOSERS = pytest.mark.parametrize("how", ["answered", "dropped"])


# inbox_decide: what it refuses


@pytest.mark.parametrize("decision", ["maybe", "", "ACCEPT", "answered", "moved"])
def test_a_decision_outside_the_four_is_refused_and_changes_nothing(agent, alice, make_task, decision):
    item = reviewed(make_task, agent)
    error = refused("invalid_argument", inbox_decide, item=item, user=alice, decision=decision)
    assert error.message == "decision: one of accept, rework, later, drop"
    assert error.details == {"field": "decision", "reason": "one of accept, rework, later, drop"}
    assert error.fix == fix("get_my_work")
    assert item_row(item) == ("open", "", "", None, None, None)
    assert events() == []


@pytest.mark.parametrize("decision", ["accept", "rework"])
def test_a_question_is_not_accepted_or_reworked(agent, alice, task, decision):
    _, item = asking(task, agent)
    error = refused("invalid_argument", inbox_decide, item=item, user=alice, decision=decision)
    assert error.message == "decision: a question is answered, snoozed (later) or dropped"
    reason = "a question is answered, snoozed (later) or dropped"
    assert error.details == {"field": "decision", "reason": reason}
    assert error.fix == fix("get_my_work")
    assert item_row(item) == ("open", "", "", None, None, None)
    assert Question.objects.get().state == "open"
    assert Run.objects.get().state == "waiting_input"


@pytest.mark.parametrize("second", ["accept", "rework", "later", "drop"])
def test_deciding_a_decided_item_again_names_it_and_keeps_the_first_decision(
    agent, alice, bob, make_task, frozen, second
):
    item = reviewed(make_task, agent, next_step="deploy")
    inbox_decide(item=item, user=bob, decision="accept", note="Looks right.")
    decided_at = timezone.now()
    frozen.shift(timedelta(minutes=5))
    error = refused("already_decided", inbox_decide, item=item, user=alice, decision=second, note="No.")
    assert error.message == f"inbox item {item.pk} was already decided"
    assert error.details == {"itemId": item.pk}
    assert error.fix == wait(f"inbox item {item.pk} is already decided; reload the Inbox to see its state")
    assert item_row(item) == ("decided", "accept", "Looks right.", None, bob.pk, decided_at)
    assert Task.objects.get(pk=item.task_id).column == Column.DONE
    assert Approval.objects.count() == 1
    assert len(events()) == 1


# inbox_decide: a review


@pytest.mark.parametrize(
    ("decision", "column"),
    [("accept", Column.DONE), ("rework", Column.TODO), ("drop", Column.DROPPED)],
)
def test_a_review_decision_records_the_person_and_moves_the_task(
    agent, bob, make_task, frozen, decision, column
):
    item = reviewed(make_task, agent)
    frozen.shift(timedelta(minutes=7))
    now = timezone.now()
    result = inbox_decide(item=item, user=bob, decision=decision, note="Handle empty files too.")
    assert item_row(item) == ("decided", decision, "Handle empty files too.", None, bob.pk, now)
    task = Task.objects.get(pk=item.task_id)
    assert (task.column, task.updated_at) == (column, now)
    assert (result.item.pk, result.item.state, result.item.decision) == (item.pk, "decided", decision)
    assert (result.task.pk, result.task.column) == (task.pk, column)
    assert (result.approval, result.question, result.hint) == (None, None, DONE)
    assert events() == decided(item, decision, column)


def test_accept_approves_the_reports_next_step_for_the_connection_that_ran_it(
    agent, agent2, bob, make_task, frozen
):
    item = reviewed(make_task, agent2, next_step="deploy to staging")
    frozen.shift(timedelta(minutes=3))
    now = timezone.now()
    result = inbox_decide(item=item, user=bob, decision="accept")
    approval = Approval.objects.get()
    assert result.approval == approval
    assert (
        approval.workspace_id,
        approval.task_id,
        approval.inbox_item_id,
        approval.connection_id,
        approval.step,
        approval.approved_by_id,
        approval.created_at,
        approval.expires_at,
        approval.delivered_at,
        approval.used_at,
    ) == (
        item.workspace_id,
        item.task_id,
        item.pk,
        agent2.pk,
        "deploy to staging",
        bob.pk,
        now,
        now + timedelta(hours=72),
        None,
        None,
    )
    assert events() == decided(item, "accept", Column.DONE, approval.pk)


@pytest.mark.parametrize("decision", ["rework", "drop", "later"])
def test_only_accept_approves_a_next_step(agent, alice, make_task, decision):
    item = reviewed(make_task, agent, next_step="deploy to staging")
    assert inbox_decide(item=item, user=alice, decision=decision).approval is None
    assert not Approval.objects.exists()


@pytest.mark.parametrize(
    ("next_step", "approved"),
    [("  deploy to staging \n", ["deploy to staging"]), ("   ", []), ("", [])],
    ids=["padded", "blank", "empty"],
)
def test_accept_approves_the_step_trimmed_and_nothing_for_a_blank_one(
    ws_a, agent, alice, next_step, approved
):
    item = make_review(ws_a, agent, next_step=next_step)
    result = inbox_decide(item=item, user=alice, decision="accept")
    assert [a.step for a in Approval.objects.all()] == approved
    assert (result.approval is not None) == bool(approved)


def test_accepting_a_review_without_a_report_approves_nothing(ws_a, agent, alice):
    review = make_review(ws_a, agent, next_step="deploy")
    item = InboxItem.objects.create(
        workspace=ws_a, kind=InboxKind.REVIEW, task_id=review.task_id, run_id=review.run_id, report=None
    )
    assert inbox_decide(item=item, user=alice, decision="accept").approval is None
    assert not Approval.objects.exists()


# inbox_decide: later


def test_later_snoozes_for_24_hours_leaving_the_task_where_it_waits(agent, bob, make_task, frozen):
    item = reviewed(make_task, agent)
    updated_at = Task.objects.get(pk=item.task_id).updated_at
    frozen.shift(timedelta(minutes=2))
    now = timezone.now()
    until = now + timedelta(hours=24)
    result = inbox_decide(item=item, user=bob, decision="later", note="After the release.")
    assert item_row(item) == ("snoozed", "later", "After the release.", until, bob.pk, now)
    task = Task.objects.get(pk=item.task_id)
    assert (task.column, task.updated_at) == (Column.DOING, updated_at)
    assert (result.item.state, result.item.snoozed_until) == ("snoozed", until)
    assert result.task.column == Column.DOING
    assert result.hint == wait(f"inbox item {item.pk} comes back to the Inbox at {until.isoformat()}")
    assert events() == decided(item, "later", Column.DOING)


def test_later_until_a_chosen_time_snoozes_until_then(agent, alice, make_task, frozen):
    item = reviewed(make_task, agent)
    until = timezone.now() + timedelta(hours=3, minutes=10)
    result = inbox_decide(item=item, user=alice, decision="later", snooze_until=until)
    assert InboxItem.objects.get(pk=item.pk).snoozed_until == until
    assert result.hint == wait(f"inbox item {item.pk} comes back to the Inbox at {until.isoformat()}")


@pytest.mark.parametrize(
    "offset",
    [timedelta(0), -timedelta(microseconds=1), -timedelta(days=1)],
    ids=["now", "just_past", "a_day_ago"],
)
def test_later_refuses_a_snooze_that_is_not_in_the_future(agent, alice, make_task, frozen, offset):
    item = reviewed(make_task, agent)
    until = timezone.now() + offset
    error = refused(
        "invalid_argument", inbox_decide, item=item, user=alice, decision="later", snooze_until=until
    )
    assert error.message == "snooze_until: must be in the future"
    assert error.details == {"field": "snooze_until", "reason": "must be in the future"}
    assert error.fix == fix("get_my_work")
    assert item_row(item) == ("open", "", "", None, None, None)
    assert events() == []


def test_later_accepts_a_snooze_one_microsecond_ahead(agent, alice, make_task, frozen):
    item = reviewed(make_task, agent)
    until = timezone.now() + timedelta(microseconds=1)
    inbox_decide(item=item, user=alice, decision="later", snooze_until=until)
    assert InboxItem.objects.get(pk=item.pk).snoozed_until == until


def test_a_snoozed_review_is_decided_later_with_its_snooze_kept(agent, alice, make_task, frozen):
    item = reviewed(make_task, agent)
    until = inbox_decide(item=item, user=alice, decision="later").item.snoozed_until
    frozen.shift(timedelta(hours=1))
    result = inbox_decide(item=item, user=alice, decision="drop")
    assert item_row(item) == ("decided", "drop", "", until, alice.pk, timezone.now())
    assert result.hint == DONE


# inbox_decide: a question


def test_later_on_a_question_keeps_it_open_and_the_agent_waiting(agent, bob, task, frozen):
    _, item = asking(task, agent)
    hold = Run.objects.get().lease_expires_at
    now = timezone.now()
    result = inbox_decide(item=item, user=bob, decision="later")
    until = now + timedelta(hours=24)
    assert item_row(item) == ("snoozed", "later", "", until, bob.pk, now)
    question = Question.objects.get()
    assert question.state == "open"
    assert result.question is not None
    assert (result.question.pk, result.question.state) == (question.pk, "open")
    run = Run.objects.get()
    assert (run.state, run.lease_expires_at) == ("waiting_input", hold)
    assert result.hint == wait(f"inbox item {item.pk} comes back to the Inbox at {until.isoformat()}")
    assert events() == decided(item, "later", Column.DOING)


def test_dropping_a_question_cancels_it_and_leaves_the_task_in_doing(agent, bob, task, frozen):
    _, item = asking(task, agent)
    updated_at = Task.objects.get().updated_at
    frozen.shift(timedelta(minutes=4))
    now = timezone.now()
    result = inbox_decide(item=item, user=bob, decision="drop", note="Not needed.")
    assert item_row(item) == ("decided", "drop", "Not needed.", None, bob.pk, now)
    question = Question.objects.get()
    assert (question.state, question.answer, question.answered_by_id) == ("cancelled", "", None)
    assert result.question is not None
    assert (result.question.pk, result.question.state) == (question.pk, "cancelled")
    assert (result.task.column, result.approval, result.hint) == (Column.DOING, None, DONE)
    saved = Task.objects.get()
    assert (saved.column, saved.updated_at) == (Column.DOING, updated_at)
    assert events() == decided(item, "drop", Column.DOING)


def test_dropping_an_item_whose_question_is_no_longer_open_keeps_the_question_as_it_was(agent, alice, task):
    _, item = asking(task, agent)
    Question.objects.update(state="answered", answer="Postgres")
    result = inbox_decide(item=item, user=alice, decision="drop")
    assert (Question.objects.get().state, Question.objects.get().answer) == ("answered", "Postgres")
    assert item_row(item)[:2] == ("decided", "drop")
    assert result.question is not None


def test_dropping_one_question_leaves_the_others_open(agent, agent2, alice, task, make_task):
    _, first = asking(task, agent)
    _, other = asking(make_task("Another"), agent2)
    inbox_decide(item=first, user=alice, decision="drop")
    assert Question.objects.get(inbox_item=other).state == "open"
    assert InboxItem.objects.get(pk=other.pk).state == "open"
    assert Run.objects.get(pk=other.run_id).state == "waiting_input"


# Closing a question puts its run back to work


@CLOSERS
def test_closing_a_question_asked_at_once_keeps_the_longer_question_hold(agent, alice, task, frozen, how):
    _, item = asking(task, agent)
    hold = Run.objects.get().lease_expires_at
    assert hold == timezone.now() + timedelta(minutes=60)
    frozen.shift(timedelta(minutes=10))
    close(how, item, alice)
    run = Run.objects.get()
    assert (run.state, run.lease_expires_at) == ("active", hold)


@CLOSERS
def test_closing_a_question_late_in_its_hold_leaves_20_minutes_to_pick_it_up(agent, alice, task, frozen, how):
    _, item = asking(task, agent)
    frozen.shift(timedelta(minutes=50))
    close(how, item, alice)
    run = Run.objects.get()
    assert (run.state, run.lease_expires_at) == ("active", timezone.now() + timedelta(minutes=20))


@CLOSERS
def test_closing_a_question_a_microsecond_before_the_hold_ends_still_resumes(agent, alice, task, frozen, how):
    _, item = asking(task, agent)
    frozen.shift(timedelta(minutes=60) - timedelta(microseconds=1))
    close(how, item, alice)
    run = Run.objects.get()
    assert (run.state, run.lease_expires_at) == ("active", timezone.now() + timedelta(minutes=20))


@CLOSERS
def test_closing_a_question_when_the_hold_has_just_ended_revives_nothing(agent, alice, task, frozen, how):
    _, item = asking(task, agent)
    hold = Run.objects.get().lease_expires_at
    frozen.shift(timedelta(minutes=60))
    close(how, item, alice)
    run = Run.objects.get()
    assert (run.state, run.lease_expires_at) == ("waiting_input", hold)


@CLOSERS
def test_a_run_with_another_open_question_keeps_waiting_until_the_last_is_closed(agent, alice, task, how):
    claim, first = asking(task, agent)
    second = ask(claim, "And which region?").item
    close(how, first, alice)
    assert Run.objects.get().state == "waiting_input"
    close(how, second, alice)
    assert Run.objects.get().state == "active"


@pytest.mark.parametrize("ended", ["completed", "released"])
@CLOSERS
def test_closing_a_question_of_a_run_that_ended_leaves_the_run_ended(agent, alice, task, how, ended):
    claim, item = asking(task, agent)
    if ended == "completed":
        complete(claim)
    else:
        release(claim)
    before = Run.objects.get()
    close(how, item, alice)
    run = Run.objects.get()
    assert (run.state, run.lease_expires_at) == (ended, before.lease_expires_at)


@CLOSERS
def test_closing_a_question_resumes_only_its_own_run(agent, agent2, alice, task, make_task, how):
    _, item = asking(task, agent)
    _, other = asking(make_task("Another"), agent2)
    close(how, item, alice)
    assert Run.objects.get(pk=item.run_id).state == "active"
    assert Run.objects.get(pk=other.run_id).state == "waiting_input"


# question_answer


@pytest.mark.parametrize("answer", ["", "  \n\t ", None], ids=["empty", "blank", "none"])
def test_an_empty_answer_is_refused_and_the_question_stays_open(agent, alice, task, answer):
    _, item = asking(task, agent)
    question = Question.objects.get()
    error = refused("invalid_argument", question_answer, question=question, user=alice, answer=answer)
    assert error.message == "answer: must not be empty"
    assert error.details == {"field": "answer", "reason": "must not be empty"}
    assert error.fix == fix("get_my_work")
    assert Question.objects.get().state == "open"
    assert item_row(item) == ("open", "", "", None, None, None)


def test_an_answer_is_kept_trimmed_with_who_answered_and_when(agent, bob, task, frozen):
    _, item = asking(task, agent)
    question = Question.objects.get()
    frozen.shift(timedelta(minutes=6))
    now = timezone.now()
    result = question_answer(question=question, user=bob, answer="  Postgres, version 16\n")
    saved = Question.objects.get()
    assert (saved.state, saved.answer, saved.answered_by_id, saved.answered_at, saved.delivered_at) == (
        "answered",
        "Postgres, version 16",
        bob.pk,
        now,
        None,
    )
    assert item_row(item) == ("decided", "answered", "", None, bob.pk, now)
    assert result.question is not None
    assert (result.question.state, result.question.answer) == ("answered", "Postgres, version 16")
    assert (result.item.pk, result.item.state, result.item.decision) == (item.pk, "decided", "answered")
    assert (result.task.pk, result.task.column) == (task.pk, Column.DOING)
    assert (result.approval, result.hint) == (None, DONE)
    payload = {"questionId": question.pk, "taskId": task.pk, "itemId": item.pk}
    assert events("question.answered") == [("question", str(question.pk), payload, None)]


def test_a_snoozed_question_can_still_be_answered(agent, alice, task):
    _, item = asking(task, agent)
    inbox_decide(item=item, user=alice, decision="later")
    question_answer(question=Question.objects.get(), user=alice, answer="Postgres")
    assert (Question.objects.get().state, InboxItem.objects.get(pk=item.pk).state) == ("answered", "decided")


@pytest.mark.parametrize("first", ["answered", "dropped"])
def test_answering_a_closed_question_names_it_and_changes_nothing(agent, alice, bob, task, frozen, first):
    _, item = asking(task, agent)
    question = Question.objects.get()
    close(first, item, bob)
    before = (Question.objects.get().state, Question.objects.get().answer, item_row(item))
    frozen.shift(timedelta(minutes=1))
    error = refused("already_decided", question_answer, question=question, user=alice, answer="SQLite")
    assert error.message == f"question {question.pk} is no longer open"
    assert error.details == {"questionId": question.pk}
    assert error.fix == wait(f"question {question.pk} is already closed; reload the Inbox to see its state")
    assert (Question.objects.get().state, Question.objects.get().answer, item_row(item)) == before
    assert Event.objects.filter(type="question.answered").count() == (1 if first == "answered" else 0)


def test_a_question_no_longer_open_behind_an_undecided_item_is_refused_and_the_item_kept(agent, alice, task):
    _, item = asking(task, agent)
    question = Question.objects.get()
    Question.objects.filter(pk=question.pk).update(state="cancelled")
    error = refused("already_decided", question_answer, question=question, user=alice, answer="SQLite")
    assert error.message == f"question {question.pk} is no longer open"
    assert item_row(item) == ("open", "", "", None, None, None)
    assert Run.objects.get().state == "waiting_input"
    assert not Event.objects.filter(type="question.answered").exists()


def test_an_open_question_behind_a_decided_item_is_refused_and_both_kept(agent, alice, bob, task, frozen):
    _, item = asking(task, agent)
    question = Question.objects.get()
    InboxItem.objects.filter(pk=item.pk).update(state="decided", decision="drop", decided_by=bob)
    before = item_row(item)
    frozen.shift(timedelta(minutes=1))
    error = refused("already_decided", question_answer, question=question, user=alice, answer="SQLite")
    assert error.message == f"question {question.pk} is no longer open"
    assert error.details == {"questionId": question.pk}
    assert item_row(item) == before
    assert (Question.objects.get().state, Question.objects.get().answer) == ("open", "")
    assert Run.objects.get().state == "waiting_input"
    assert not Event.objects.filter(type="question.answered").exists()
