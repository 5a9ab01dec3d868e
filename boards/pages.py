"""Reads that shape the people's pages: board cards, the task timeline, Inbox entries.

The agent-facing reads (and the rules of what waits on whom) live in `selectors.py`; these
only gather model rows with what a person needs to see on one screen, in a few queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from accounts.models import Workspace
from boards.models import (
    BOARD_COLUMNS,
    LIVE_RUN_STATES,
    Board,
    Column,
    InboxItem,
    InboxState,
    Report,
    Run,
    Task,
)
from weft.models import Event

SAFE_SCHEMES = ("http://", "https://")


def safe_href(uri: object) -> str:
    """A link target only for web URLs: an agent-supplied `javascript:` URI must never become a link."""
    text = str(uri or "")
    return text if text.lower().startswith(SAFE_SCHEMES) else ""


def _artifacts(raw: object) -> list[dict[str, Any]]:
    items = raw if isinstance(raw, list) else []
    return [{**a, "href": safe_href(a.get("uri"))} for a in items if isinstance(a, dict)]


@dataclass
class Card:
    task: Task
    holder: str = ""
    lease_left: timedelta | None = None
    heartbeat_age: timedelta | None = None
    last_note: str = ""
    waiting_on: str = ""
    overdue: bool = False


@dataclass
class BoardColumn:
    value: str
    label: str
    cards: list[Card] = field(default_factory=list)


@dataclass(frozen=True)
class BoardFilter:
    query: str = ""
    priority: int | None = None
    review_only: bool = False
    held_only: bool = False

    @property
    def active(self) -> bool:
        return bool(self.query or self.priority is not None or self.review_only or self.held_only)


def _live_runs() -> Prefetch[Any]:
    return Prefetch(
        "runs",
        queryset=Run.objects.filter(state__in=LIVE_RUN_STATES).select_related("connection", "user"),
        to_attr="live_runs",
    )


def _card(task: Task, now: datetime, waiting: dict[int, str]) -> Card:
    card = Card(task=task, waiting_on=waiting.get(task.pk, ""))
    card.overdue = bool(task.due_at and task.due_at < now and task.column != Column.DONE)
    runs: list[Run] = getattr(task, "live_runs", [])
    if runs:
        run = runs[0]
        if run.connection is not None:
            card.holder = run.connection.name
        elif run.user is not None:
            card.holder = run.user.display_name
        card.lease_left = max(run.lease_expires_at - now, timedelta(0))
        card.heartbeat_age = max(now - run.last_heartbeat_at, timedelta(0))
    elif task.assignee_connection is not None:
        card.holder = task.assignee_connection.name
    return card


def board_columns(
    *, workspace: Workspace, board: Board, filters: BoardFilter, now: datetime
) -> list[BoardColumn]:
    """The four board columns with their cards, filtered, in position order."""
    tasks: QuerySet[Task] = Task.objects.filter(workspace=workspace, board=board, column__in=BOARD_COLUMNS)
    if filters.query:
        needle = filters.query.strip()
        match = Q(title__icontains=needle) | Q(description__icontains=needle)
        if needle.lstrip("#").isdigit():
            match |= Q(pk=int(needle.lstrip("#")))
        tasks = tasks.filter(match)
    if filters.priority is not None:
        tasks = tasks.filter(priority=filters.priority)
    if filters.review_only:
        tasks = tasks.filter(review_required=True)
    if filters.held_only:
        tasks = tasks.filter(runs__state__in=LIVE_RUN_STATES).distinct()
    tasks = tasks.select_related("assignee_connection").prefetch_related(_live_runs())
    tasks = tasks.order_by("position", "-priority", "created_at")
    waiting = {
        item.task_id: item.get_kind_display()
        for item in InboxItem.objects.filter(workspace=workspace, state=InboxState.OPEN).only(
            "task_id", "kind"
        )
    }
    columns: dict[str, BoardColumn] = {
        str(value): BoardColumn(value=str(value), label=Column(value).label) for value in BOARD_COLUMNS
    }
    for task in tasks:
        columns[task.column].cards.append(_card(task, now, waiting))
    return list(columns.values())


def trashed_tasks(*, workspace: Workspace) -> QuerySet[Task]:
    return (
        Task.objects.filter(workspace=workspace, column=Column.TRASH)
        .select_related("board")
        .order_by("-trashed_at")
    )


def dropped_tasks(*, workspace: Workspace) -> QuerySet[Task]:
    return Task.objects.filter(workspace=workspace, column=Column.DROPPED).order_by("-updated_at")


@dataclass
class Entry:
    """One line of a run's timeline."""

    at: datetime
    kind: str
    title: str
    body: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunView:
    run: Run
    who: str
    entries: list[Entry]


def _who(run: Run) -> str:
    if run.connection is not None:
        return run.connection.name
    if run.user is not None:
        return run.user.display_name
    return "someone no longer here"


def report_data(report: Report) -> dict[str, Any]:
    """A report as the templates show it, with artifact links made safe."""
    return {
        "outcome": report.outcome,
        "artifacts": _artifacts(report.artifacts),
        "claims": report.claims,
        "not_done": report.not_done,
        "unknowns": report.unknowns,
        "next_step": report.next_step,
        "verification": report.verification,
        "verification_passed": report.verification_passed,
    }


def _report_entry(run: Run) -> Entry | None:
    report = getattr(run, "report", None)
    if report is None:
        return None
    return Entry(
        at=report.created_at,
        kind="report",
        title="Reported the work done",
        body=report.outcome,
        data=report_data(report),
    )


def run_timeline(*, task: Task) -> list[RunView]:
    """Every run of the task, oldest first, each with its claim, heartbeats, questions, report and end."""
    runs = (
        Run.objects.filter(task=task)
        .select_related("connection", "user", "report", "approval")
        .prefetch_related("progress", "questions__answered_by", "inbox_items__decided_by")
        .order_by("started_at")
    )
    views: list[RunView] = []
    for run in runs:
        entries = [
            Entry(
                at=run.started_at,
                kind="claim",
                title="Claimed the task",
                data={"epoch": run.epoch, "approval": run.approval.step if run.approval else ""},
            )
        ]
        entries += [
            Entry(at=p.created_at, kind="heartbeat", title="Progress", body=p.note, data={"status": p.status})
            for p in run.progress.all()
        ]
        for question in run.questions.all():
            entries.append(
                Entry(
                    at=question.created_at,
                    kind="question",
                    title="Asked",
                    body=question.text,
                    data={"options": question.options},
                )
            )
            if question.answered_at:
                who = question.answered_by.display_name if question.answered_by else "a person"
                entries.append(
                    Entry(
                        at=question.answered_at, kind="answer", title=f"{who} answered", body=question.answer
                    )
                )
        report = _report_entry(run)
        if report:
            entries.append(report)
        for item in run.inbox_items.all():
            if item.decided_at and item.decision and item.kind == "review":
                who = item.decided_by.display_name if item.decided_by else "a person"
                entries.append(
                    Entry(
                        at=item.decided_at,
                        kind="decision",
                        title=f"{who}: {item.get_decision_display()}",
                        body=item.note,
                    )
                )
        if run.ended_at:
            entries.append(
                Entry(
                    at=run.ended_at,
                    kind="end",
                    title=f"Run {run.get_state_display().lower()}",
                    body=run.end_reason,
                )
            )
        entries.sort(key=lambda e: e.at)
        views.append(RunView(run=run, who=_who(run), entries=entries))
    return views


def task_history(*, task: Task, limit: int = 100) -> QuerySet[Event]:
    """The task's events, newest first: those about the task and about its runs."""
    run_ids = [str(v) for pair in Run.objects.filter(task=task).values_list("pk", "run_id") for v in pair]
    about = Q(entity_type="task", entity_id=str(task.pk)) | Q(entity_type="run", entity_id__in=run_ids)
    return Event.objects.filter(about, workspace_id=task.workspace_id).order_by("-id")[:limit]


@dataclass
class InboxEntry:
    item: InboxItem
    age: timedelta
    report: dict[str, Any] = field(default_factory=dict)


def inbox_entries(*, workspace: Workspace, now: datetime) -> tuple[list[InboxEntry], list[InboxItem]]:
    """What waits on people, oldest first with its age; and what is snoozed (Later) for now."""
    items = (
        InboxItem.objects.filter(workspace=workspace)
        .filter(Q(state=InboxState.OPEN) | Q(state=InboxState.SNOOZED))
        .select_related("task", "report", "question", "run__connection", "run__user")
        .order_by("created_at")
    )
    waiting: list[InboxEntry] = []
    snoozed: list[InboxItem] = []
    for item in items:
        if item.state == InboxState.SNOOZED and item.snoozed_until and item.snoozed_until > now:
            snoozed.append(item)
        else:
            waiting.append(InboxEntry(item=item, age=max(now - item.created_at, timedelta(0))))
    for entry in waiting:
        if entry.item.report is not None:
            entry.report = report_data(entry.item.report)
    return waiting, snoozed
