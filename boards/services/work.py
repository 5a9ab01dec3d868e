"""An agent's own work: work_for_connection (get_my_work) — a write, since it hands answers and
approvals over once; a service, not a selector.

An expired lease is expired here too: a run counts as held only while `lease_expires_at > now`
(`queries.held`), whether or not the sweep has run. `work_for_connection` also hands over
answers and approvals, which is a write (delivered exactly once), so it runs in one
transaction and locks what it delivers (SKIP LOCKED on PostgreSQL; SQLite serialises writers).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection as db_connection
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, F, OuterRef, Q, Subquery

from accounts.models import AgentConnection
from boards import attention as attention_rules
from boards import clock, queries
from boards.models import Approval, Board, Column, InboxItem, Question, QuestionState, Run, RunState, Task
from boards.news import News, news_for
from boards.payloads import iso
from boards.results import AttentionStatus, WorkResult
from boards.services.common import attention_now, attention_wait, lease_token_for
from boards.services.delivery import deliver_answers, deliver_approvals, pending_answers, valid_approvals
from weft.hints import DONE, Hint, next_, wait

DUE_SOON = timedelta(hours=24)
OPEN_COLUMNS = (Column.BACKLOG, Column.TODO, Column.DOING)
RUN_FIELDS = [f.name for f in Run._meta.concrete_fields]


_ON_LIVE_BOARD = Subquery(
    Board.objects.filter(pk=OuterRef("board_id")).values(
        live=ExpressionWrapper(Q(archived_at=None), output_field=BooleanField())
    )
)


def _best_next(workspace_id: int, *, skip_locked: bool = False) -> Task | None:
    """The task to start next: highest priority, soonest due, then board order.

    `skip_locked` (start_next) locks the task it picks and passes over tasks another claim holds
    locked, where the database can (PostgreSQL): agents that finish at once each get a different
    task instead of all racing for the first and all but one answering already_claimed.
    """
    # An archived board's tasks are never offered: each task's board is read by its key as the scan
    # walks the `task_best_next` index in order, until the first live one. A check, not a join:
    # joined to boards without statistics (a workspace's few boards never reach autovacuum's
    # threshold), the pick was estimated to keep a few rows and sorted the workspace's tasks
    # (tests/boards/test_pick_plan.py).
    rows = Task.objects.filter(workspace_id=workspace_id, column=Column.TODO).filter(_ON_LIVE_BOARD)
    if skip_locked and db_connection.features.has_select_for_update_skip_locked:
        rows = rows.select_for_update(skip_locked=True, of=("self",))
    return rows.order_by("-priority", F("due_at").asc(nulls_last=True), "position", "pk").first()


def _held(connection: AgentConnection, at: datetime) -> list[Run]:
    """The connection's live runs. Of each task only its title is read, and the connection is the
    caller's own, attached rather than joined: a held run costs one narrow row."""
    runs = list(
        Run.objects.select_related("task")
        .only(*RUN_FIELDS, "task__title")
        .filter(queries.held(at), connection=connection)
        .order_by("lease_expires_at", "pk")
    )
    for run in runs:
        run.connection = connection
    return runs


def _waiting(connection: AgentConnection, at: datetime) -> list[InboxItem]:
    return list(
        InboxItem.objects.select_related("task")
        .filter(queries.waiting(at), workspace_id=connection.workspace_id, run__connection=connection)
        .order_by("created_at", "pk")
    )


def _work_hint(
    *,
    held: list[Run],
    open_questions: dict[int, list[int]],
    approvals: list[Approval],
    answers: list[Question],
    attention: attention_rules.Attention,
    best: Task | None,
    waiting: list[InboxItem],
    news: list[News],
) -> Hint:
    """One state → one hint, in a fixed order of precedence."""
    for run in held:
        if run.state == RunState.ACTIVE:
            return next_("start_task", {"id": run.task_id})
    for run in held:
        asked = open_questions.get(run.pk, [])
        if asked:
            return wait(
                f"a person answers question {asked[0]} on task {run.task_id} in the Inbox"
                f" (the claim holds until {iso(run.lease_expires_at)})",
                "get_my_work",
            )
    if approvals:
        return next_("start_task", {"id": approvals[0].task_id})
    for question in answers:
        if question.task.column in (Column.TODO, Column.BACKLOG) and question.task.board.archived_at is None:
            return next_("start_task", {"id": question.task_id})
    if attention.full:
        return attention_wait(attention)
    if best is not None:
        return next_("start_task", {"id": best.pk})
    if news:
        return next_(news[0].read.tool, news[0].read.args)
    if waiting:
        return wait(f"a person decides {len(waiting)} item(s) of yours in the Inbox", "get_my_work")
    return DONE


def work_for_connection(*, connection: AgentConnection, now: datetime | None = None) -> WorkResult:
    """What this connection holds, what waits on people for it, answers and approvals (delivered
    once), overdue and due-soon tasks, capacity, and the best next task."""
    workspace_id = connection.workspace_id
    with transaction.atomic():
        at = now or clock.db_now()
        held = _held(connection, at)
        open_questions = _open_questions(held)
        waiting = _waiting(connection, at)
        answers = deliver_answers(connection=connection, now=at)
        valid, approvals = deliver_approvals(connection=connection, now=at)
        due = _due(workspace_id, at)
        attention = attention_now(workspace_id, at)
        best = _best_next(workspace_id)
        news = news_for(connection)
    hint = _work_hint(
        held=held,
        open_questions=open_questions,
        approvals=valid,
        answers=answers,
        attention=attention,
        best=best,
        waiting=waiting,
        news=news,
    )
    capacity = AttentionStatus.of(attention, attention_wait(attention) if attention.full else DONE)
    return WorkResult(
        held=held,
        waiting=waiting,
        answers=answers,
        approvals=approvals,
        overdue=[t for t in due if t.due_at is not None and t.due_at <= at],
        due_soon=[t for t in due if t.due_at is not None and t.due_at > at],
        capacity=capacity,
        best=best,
        now=at,
        hint=hint,
        open_questions=open_questions,
        news=news,
        # The connection's own runs: their tokens are its already (start_task returns them too).
        lease_tokens={run.pk: lease_token_for(run_id=run.run_id, epoch=run.epoch) for run in held},
    )


def next_start(*, connection: AgentConnection, at: datetime) -> tuple[Hint, attention_rules.Attention]:
    """get_my_work's next action for this connection at `at`, read without handing anything over
    (answers and approvals stay undelivered for the claim to deliver), and the attention it saw.

    Call it inside the transaction of the claim it leads to: the best next task is locked (SKIP
    LOCKED, see `_best_next`) until that claim commits.
    """
    held = _held(connection, at)
    attention = attention_now(connection.workspace_id, at)
    best = _best_next(connection.workspace_id, skip_locked=True)
    hint = _work_hint(
        held=held,
        open_questions=_open_questions(held),
        approvals=list(valid_approvals(connection, at)),
        answers=list(pending_answers(connection)),
        attention=attention,
        best=best,
        waiting=[],
        news=[],
    )
    if hint.marker == "Done":
        # Nothing to start: the rest of get_my_work's order (news, items waiting on a person).
        waiting, news = _waiting(connection, at), news_for(connection)
        hint = _work_hint(
            held=[],
            open_questions={},
            approvals=[],
            answers=[],
            attention=attention,
            best=None,
            waiting=waiting,
            news=news,
        )
    return hint, attention


def _open_questions(held: list[Run]) -> dict[int, list[int]]:
    """The open questions of the held runs, oldest first, by run (no query when none waits)."""
    open_questions: dict[int, list[int]] = {}
    if any(run.state == RunState.WAITING_INPUT for run in held):
        for run_pk, question_pk in (
            Question.objects.filter(run__in=held, state=QuestionState.OPEN)
            .order_by("created_at", "pk")
            .values_list("run_id", "pk")
        ):
            open_questions.setdefault(run_pk, []).append(question_pk)
    return open_questions


def _due(workspace_id: int, at: datetime) -> list[Task]:
    """Open tasks overdue or due within DUE_SOON, soonest first (at most 20)."""
    return list(
        Task.objects.filter(
            workspace_id=workspace_id,
            column__in=OPEN_COLUMNS,
            board__archived_at=None,
            due_at__isnull=False,
            due_at__lte=at + DUE_SOON,
        ).order_by("due_at", "pk")[:20]
    )
