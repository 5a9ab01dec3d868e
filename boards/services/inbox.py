"""A person's answers: inbox_decide (accept / rework / later / drop) and question_answer."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from accounts.models import User
from boards import clock, lease
from boards.models import (
    Approval,
    Column,
    Decision,
    InboxItem,
    InboxKind,
    InboxState,
    Question,
    QuestionState,
    Run,
    RunState,
    Task,
)
from boards.queries import undecided
from boards.results import InboxResult
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import DONE, Hint, wait

APPROVAL_VALIDITY = timedelta(hours=72)
DEFAULT_SNOOZE = timedelta(hours=24)
DECISIONS = (Decision.ACCEPT, Decision.REWORK, Decision.LATER, Decision.DROP)
# Where a decided review puts its task; "later" leaves it where it waits.
REVIEW_COLUMNS = {Decision.ACCEPT: Column.DONE, Decision.REWORK: Column.TODO, Decision.DROP: Column.DROPPED}


def _already_decided(item: InboxItem) -> WeftError:
    return WeftError(
        "already_decided",
        f"inbox item {item.pk} was already decided",
        details={"itemId": item.pk},
        fix=wait(f"inbox item {item.pk} is already decided; reload the Inbox to see its state"),
    )


def _question_closed(question: Question) -> WeftError:
    return WeftError(
        "already_decided",
        f"question {question.pk} is no longer open",
        details={"questionId": question.pk},
        fix=wait(f"question {question.pk} is already closed; reload the Inbox to see its state"),
    )


def inbox_decide(
    *, item: InboxItem, user: User, decision: str, note: str = "", snooze_until: datetime | None = None
) -> InboxResult:
    """Decide a review: accept (approving its nextStep for 72 h), rework with a note, later (snooze), drop.

    A question item may only be snoozed or dropped here (answer it with question_answer). The
    decision is a conditional UPDATE on the item's undecided state, so deciding twice — even at
    the same moment from two browsers — refuses the second with already_decided.
    """
    if decision not in DECISIONS:
        raise invalid_argument("decision", "one of accept, rework, later, drop")
    if item.kind == InboxKind.QUESTION and decision in (Decision.ACCEPT, Decision.REWORK):
        raise invalid_argument("decision", "a question is answered, snoozed (later) or dropped")
    approval = question = None
    with transaction.atomic():
        now = clock.db_now()
        # The task row first, as task_move and task_trash take it: a person moving the task on
        # the board and another deciding its review queue here instead of deadlocking.
        task = Task.objects.select_for_update().get(pk=item.task_id)
        _record_decision(
            item=item, user=user, decision=decision, note=note, snooze_until=snooze_until, now=now
        )
        if item.kind == InboxKind.QUESTION:
            question = _close_dropped_question(item=item, decision=decision, now=now)
        elif decision != Decision.LATER:
            approval = _apply_review(item=item, task=task, decision=Decision(decision), user=user, now=now)
        _emit_decided(item=item, task=task, decision=decision, approval=approval)
    return InboxResult(item=item, task=task, approval=approval, question=question, hint=_decided_hint(item))


def _record_decision(
    *, item: InboxItem, user: User, decision: str, note: str, snooze_until: datetime | None, now: datetime
) -> None:
    """Write the decision on the item if nobody has decided it yet; a snooze also records its end."""
    fields: dict[str, Any] = {
        "state": InboxState.DECIDED,
        "decision": decision,
        "note": note,
        "decided_by": user,
        "decided_at": now,
    }
    if decision == Decision.LATER:
        until = snooze_until or now + DEFAULT_SNOOZE
        if until <= now:
            raise invalid_argument("snooze_until", "must be in the future")
        fields.update(state=InboxState.SNOOZED, snoozed_until=until)
    if InboxItem.objects.filter(undecided(), pk=item.pk).update(**fields) != 1:
        raise _already_decided(item)
    item.refresh_from_db()


def _close_dropped_question(*, item: InboxItem, decision: str, now: datetime) -> Question:
    """A question item's question; dropping the item cancels it and puts its run back to work."""
    question = Question.objects.get(inbox_item=item)
    if decision == Decision.DROP:
        Question.objects.filter(pk=question.pk, state=QuestionState.OPEN).update(
            state=QuestionState.CANCELLED
        )
        question.state = QuestionState.CANCELLED
        _back_to_work(question.run_id, now)
    return question


def _apply_review(
    *, item: InboxItem, task: Task, decision: Decision, user: User, now: datetime
) -> Approval | None:
    """Move a decided review's task to its column; accepting approves the report's next step."""
    column = REVIEW_COLUMNS[decision]
    Task.objects.filter(pk=task.pk).update(column=column, updated_at=now)
    task.column = column
    step = item.report.next_step.strip() if item.report is not None else ""
    if decision != Decision.ACCEPT or not step:
        return None
    run = Run.objects.get(pk=item.run_id)
    return Approval.objects.create(
        workspace_id=item.workspace_id,
        task=task,
        inbox_item=item,
        connection_id=run.connection_id,
        step=step,
        approved_by=user,
        created_at=now,
        expires_at=now + APPROVAL_VALIDITY,
    )


def _emit_decided(*, item: InboxItem, task: Task, decision: str, approval: Approval | None) -> None:
    emit(
        workspace_id=item.workspace_id,
        type="inbox.item_decided",
        entity_type="inbox_item",
        entity_id=item.pk,
        payload={
            "itemId": item.pk,
            "decision": decision,
            "taskId": task.pk,
            "column": task.column,
            "approvalId": approval.pk if approval else None,
        },
    )


def _decided_hint(item: InboxItem) -> Hint:
    """A snoozed item says when it comes back; any other decision is done."""
    if item.state == InboxState.SNOOZED and item.snoozed_until is not None:
        return wait(f"inbox item {item.pk} comes back to the Inbox at {item.snoozed_until.isoformat()}")
    return DONE


def _back_to_work(run_id: int, now: datetime) -> None:
    """A run whose last open question is closed works again, with at least 20 minutes of lease."""
    if Question.objects.filter(run_id=run_id, state=QuestionState.OPEN).exists():
        return
    Run.objects.filter(pk=run_id, state=RunState.WAITING_INPUT, lease_expires_at__gt=now).update(
        state=RunState.ACTIVE,
        lease_expires_at=Greatest(F("lease_expires_at"), Value(lease.claim_expiry(now))),
    )


def question_answer(*, question: Question, user: User, answer: str) -> InboxResult:
    """Answer an open question; the asking connection gets it, once, on its next get_my_work or start_task.

    If the run still waits on this question and its lease is live, it becomes active again with
    at least 20 minutes left to pick the answer up.
    """
    text = (answer or "").strip()
    if not text:
        raise invalid_argument("answer", "must not be empty")
    with transaction.atomic():
        now = clock.db_now()
        # The Inbox item first, then the question: the same lock order as inbox_decide (which
        # drops a question through its item). Answering and dropping at once then queue on the
        # item's row and the second is refused; the other order deadlocked the two.
        decided = InboxItem.objects.filter(undecided(), question=question).update(
            state=InboxState.DECIDED, decision=Decision.ANSWERED, decided_by=user, decided_at=now
        )
        if decided != 1:
            raise _question_closed(question)
        changed = Question.objects.filter(pk=question.pk, state=QuestionState.OPEN).update(
            state=QuestionState.ANSWERED, answer=text, answered_by=user, answered_at=now
        )
        if changed != 1:
            raise _question_closed(question)
        question.refresh_from_db()
        item = InboxItem.objects.get(question=question)
        _back_to_work(question.run_id, now)
        task = Task.objects.get(pk=question.task_id)
        emit(
            workspace_id=question.workspace_id,
            type="question.answered",
            entity_type="question",
            entity_id=question.pk,
            payload={"questionId": question.pk, "taskId": task.pk, "itemId": item.pk},
        )
    return InboxResult(item=item, task=task, question=question, hint=DONE)


# How long after a drop its Undo still re-opens the review.
UNDO_DROP_WINDOW = timedelta(seconds=30)


def _undo_too_late(item: InboxItem) -> WeftError:
    return WeftError(
        "already_decided",
        f"inbox item {item.pk} can no longer be re-opened: undo works for "
        f"{int(UNDO_DROP_WINDOW.total_seconds())} seconds after a drop",
        details={"itemId": item.pk},
        fix=wait(f"inbox item {item.pk} stays dropped; move its task on the board to work on it again"),
    )


def inbox_undo_drop(*, item: InboxItem, user: User) -> InboxResult:
    """Re-open a review dropped less than UNDO_DROP_WINDOW ago: the item waits again, its task back in Doing.

    Only a review's drop is undone: a dropped question has already put its run back to work. The
    re-open is a conditional UPDATE on the drop and its time, and the task must still be Dropped,
    so an undo after someone moved the task on (or a second undo) is refused.
    """
    with transaction.atomic():
        now = clock.db_now()
        task = Task.objects.select_for_update().get(pk=item.task_id)
        reopened = InboxItem.objects.filter(
            pk=item.pk,
            kind=InboxKind.REVIEW,
            state=InboxState.DECIDED,
            decision=Decision.DROP,
            decided_at__gte=now - UNDO_DROP_WINDOW,
        ).update(state=InboxState.OPEN, decision="", note="", decided_by=None, decided_at=None)
        if reopened != 1 or task.column != Column.DROPPED:
            raise _undo_too_late(item)
        Task.objects.filter(pk=task.pk).update(column=Column.DOING, updated_at=now)
        task.column = Column.DOING
        item.refresh_from_db()
        emit(
            workspace_id=item.workspace_id,
            type="inbox.item_reopened",
            entity_type="inbox_item",
            entity_id=item.pk,
            payload={"itemId": item.pk, "taskId": task.pk, "column": task.column, "userId": user.pk},
        )
    return InboxResult(item=item, task=task, hint=DONE)
