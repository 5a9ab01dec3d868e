"""Board reads: work_for_connection (get_my_work), board_state, task_detail, search_tasks,
inbox_for_user, attention_status.

An expired lease is expired here too: a run counts as held only while `lease_expires_at > now`,
whether or not the sweep has run. `work_for_connection` also hands over answers and approvals,
which is a write (delivered exactly once), so it runs in one transaction and locks what it
delivers (SKIP LOCKED on PostgreSQL; SQLite serialises writers).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import connection as db_connection
from django.db import transaction
from django.db.models import F, Prefetch, Q

from accounts.models import AgentConnection, User, Workspace
from boards import attention as attention_rules
from boards import clock, lease, limits, queries
from boards.access import access_board, access_task
from boards.models import (
    BOARD_COLUMNS,
    Approval,
    Column,
    InboxItem,
    InboxKind,
    InboxState,
    ProgressReport,
    Question,
    QuestionState,
    Run,
    RunState,
    Task,
)
from boards.results import (
    AttentionStatus,
    BoardStateResult,
    InboxListResult,
    SearchResult,
    TaskDetailResult,
    WorkResult,
    iso,
)
from boards.services.board import board_default
from boards.services.common import (
    attention_now,
    attention_wait,
    lease_token_for,
    within_limits,
)
from boards.services.runs import mark_approval_delivered, mark_question_delivered
from weft.hints import DONE, Hint, next_, wait

DUE_SOON = timedelta(hours=24)
OPEN_COLUMNS = (Column.BACKLOG, Column.TODO, Column.DOING)


def _best_next(workspace_id: int) -> Task | None:
    """The task to start next: highest priority, soonest due, then board order."""
    return (
        Task.objects.filter(workspace_id=workspace_id, column=Column.TODO)
        .order_by("-priority", F("due_at").asc(nulls_last=True), "position", "pk")
        .first()
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
        if question.task.column in (Column.TODO, Column.BACKLOG):
            return next_("start_task", {"id": question.task_id})
    if attention.full:
        return attention_wait(attention)
    if best is not None:
        return next_("start_task", {"id": best.pk})
    if waiting:
        return wait(f"a person decides {len(waiting)} item(s) of yours in the Inbox", "get_my_work")
    return DONE


def work_for_connection(*, connection: AgentConnection, now: datetime | None = None) -> WorkResult:
    """What this connection holds, what waits on people for it, answers and approvals (delivered
    once), overdue and due-soon tasks, capacity, and the best next task."""
    workspace_id = connection.workspace_id
    skip_locked = db_connection.features.has_select_for_update_skip_locked
    with transaction.atomic():
        at = now or clock.db_now()
        held = list(
            Run.objects.select_related("task")
            .filter(queries.held(at), connection=connection)
            .order_by("lease_expires_at", "pk")
        )
        open_questions: dict[int, list[int]] = {}
        if any(run.state == RunState.WAITING_INPUT for run in held):
            for run_pk, question_pk in (
                Question.objects.filter(run__in=held, state=QuestionState.OPEN)
                .order_by("created_at", "pk")
                .values_list("run_id", "pk")
            ):
                open_questions.setdefault(run_pk, []).append(question_pk)
        waiting = list(
            InboxItem.objects.select_related("task")
            .filter(queries.waiting(at), workspace_id=workspace_id, run__connection=connection)
            .order_by("created_at", "pk")
        )
        pending = list(
            Question.objects.select_for_update(skip_locked=skip_locked, of=("self",))
            .select_related("task", "run")
            .filter(connection=connection, state=QuestionState.ANSWERED, delivered_at=None)
            .order_by("answered_at", "pk")
        )
        answers = [question for question in pending if mark_question_delivered(question, at)]
        # Valid, unused approvals: delivered (listed) once, but still the next thing to do.
        valid = list(
            Approval.objects.select_for_update(skip_locked=skip_locked, of=("self",))
            .filter(connection=connection, used_at=None, expires_at__gt=at)
            .order_by("created_at", "pk")
        )
        approvals = [a for a in valid if a.delivered_at is None and mark_approval_delivered(a, at)]
        due = list(
            Task.objects.filter(
                workspace_id=workspace_id,
                column__in=OPEN_COLUMNS,
                due_at__isnull=False,
                due_at__lte=at + DUE_SOON,
            ).order_by("due_at", "pk")[:20]
        )
        attention = attention_now(workspace_id, at)
        best = _best_next(workspace_id)
    hint = _work_hint(
        held=held,
        open_questions=open_questions,
        approvals=valid,
        answers=answers,
        attention=attention,
        best=best,
        waiting=waiting,
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
        # The connection's own runs: their tokens are its already (start_task returns them too).
        lease_tokens={run.pk: lease_token_for(run_id=run.run_id, epoch=run.epoch) for run in held},
    )


def _live_runs(tasks: list[Task], now: datetime) -> dict[int, Run]:
    runs = Run.objects.select_related("connection", "user").filter(queries.held(now), task__in=tasks)
    return {run.task_id: run for run in runs}


def board_state(*, workspace: Workspace, board_id: Any = None) -> BoardStateResult:
    """The board's four columns with who holds what (expired leases are not held)."""
    now = clock.db_now()
    board = access_board(workspace, board_id) if board_id is not None else board_default(workspace=workspace)
    tasks = list(Task.objects.filter(board=board, column__in=BOARD_COLUMNS).order_by("position", "pk"))
    columns: dict[str, list[Task]] = {str(c): [] for c in BOARD_COLUMNS}
    for task in tasks:
        columns[task.column].append(task)
    doing = columns[Column.DOING]
    holders = _live_runs(doing, now) if doing else {}
    in_review = (
        set(
            InboxItem.objects.filter(queries.undecided(), task__in=doing, kind=InboxKind.REVIEW).values_list(
                "task_id", flat=True
            )
        )
        if doing
        else set()
    )
    return BoardStateResult(
        board=board, columns=columns, holders=holders, in_review=in_review, hint=next_("get_my_work")
    )


def task_detail(*, workspace: Workspace, task_id: Any) -> TaskDetailResult:
    """One task with its run timeline (progress, questions, report) and Inbox items."""
    now = clock.db_now()
    task = access_task(workspace, task_id)
    runs = list(
        Run.objects.select_related("connection", "user", "report")
        .prefetch_related(
            Prefetch("progress", queryset=ProgressReport.objects.order_by("created_at", "pk")),
            Prefetch(
                "questions", queryset=Question.objects.select_related("run").order_by("created_at", "pk")
            ),
        )
        .filter(task=task)
        .order_by("started_at", "pk")
    )
    items = list(InboxItem.objects.filter(task=task).order_by("created_at", "pk"))
    holder = next(
        (r for r in runs if lease.is_live(r.state, r.lease_expires_at, now)),
        None,
    )
    in_review = any(i.kind == InboxKind.REVIEW and i.state != InboxState.DECIDED for i in items)
    hint: Hint
    if holder is not None:
        hint = wait(
            f"task {task.pk} is held by a run until {iso(holder.lease_expires_at)}",
            "get_task",
            {"id": task.pk},
        )
    elif in_review:
        hint = wait(f"a person reviews task {task.pk} in the Inbox", "get_task", {"id": task.pk})
    elif task.column in (Column.TODO, Column.BACKLOG, Column.DOING):
        hint = next_("start_task", {"id": task.pk})
    else:
        hint = DONE
    return TaskDetailResult(task=task, runs=runs, inbox_items=items, holder=holder, hint=hint)


def search_tasks(*, workspace: Workspace, query: str, limit: int = 20) -> SearchResult:
    """Full-text search on PostgreSQL; a simple case-insensitive match on SQLite."""
    with within_limits():
        text = limits.text("query", query, limits.SEARCH_QUERY, required=True)
    # Only the first words count: a query of hundreds of terms costs every tenant database time.
    text = " ".join(text.split()[: limits.SEARCH_TERMS])
    limit = max(1, min(int(limit), limits.SEARCH_LIMIT))
    base = Task.objects.filter(workspace=workspace).exclude(column=Column.TRASH)
    found: list[Task]
    if db_connection.vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

        vector = SearchVector("title", weight="A") + SearchVector("description", weight="B")
        search = SearchQuery(text, search_type="websearch")
        # `document=search` is the @@ match; ts_rank alone is never zero, so it cannot filter.
        ranked = (
            base.annotate(document=vector, rank=SearchRank(vector, search))
            .filter(Q(document=search) | Q(title__icontains=text))
            .order_by("-rank", "-priority", "pk")
        )
        found = [task for task in ranked[:limit]]
    else:
        found = list(
            base.filter(Q(title__icontains=text) | Q(description__icontains=text)).order_by(
                "-priority", "pk"
            )[:limit]
        )
    hint = next_("get_task", {"id": found[0].pk}) if found else next_("get_board_state")
    return SearchResult(query=text, tasks=found, hint=hint)


def attention_status(*, workspace: Workspace, now: datetime | None = None) -> AttentionStatus:
    at = now or clock.db_now()
    attention = attention_now(workspace.pk, at)
    return AttentionStatus.of(attention, attention_wait(attention) if attention.full else DONE)


def inbox_for_user(*, workspace: Workspace, user: User, now: datetime | None = None) -> InboxListResult:
    """The workspace's Inbox: open items (snoozed ones whose snooze ended are back), then snoozed ones."""
    at = now or clock.db_now()
    items = list(
        InboxItem.objects.select_related("task", "report", "question", "question__run", "run")
        .filter(queries.undecided(), workspace=workspace)
        .order_by("created_at", "pk")
    )
    open_items = [i for i in items if attention_rules.counts(i.state, i.snoozed_until, at)]
    snoozed = [i for i in items if i not in open_items]
    attention = attention_now(workspace.pk, at)
    status = AttentionStatus.of(attention, attention_wait(attention) if attention.full else DONE)
    if open_items:
        first = open_items[0]
        hint = wait(f"a person decides inbox item {first.pk} ({first.kind} of task {first.task_id})")
    elif snoozed:
        hint = wait(f"inbox item {snoozed[0].pk} comes back at {iso(snoozed[0].snoozed_until)}")
    else:
        hint = DONE
    return InboxListResult(open=open_items, snoozed=snoozed, attention=status, now=at, hint=hint)
