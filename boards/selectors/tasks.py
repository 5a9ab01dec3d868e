"""One task: its detail for agents, its run timeline and history for people, and search.

A run holds its task here exactly as everywhere (`queries.held`, `lease.is_live` for one run):
an expired run that no sweep has ended yet holds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection as db_connection
from django.db.models import Prefetch, Q, QuerySet

from accounts.models import Workspace
from boards import clock, lease, limits
from boards.access import access_task
from boards.models import (
    Column,
    Comment,
    InboxItem,
    InboxKind,
    InboxState,
    ProgressNote,
    Question,
    Report,
    Run,
    Task,
)
from boards.payloads import holder_name, iso
from boards.results import SearchResult, TaskDetailResult
from boards.services.common import within_limits
from weft.hints import DONE, Hint, next_, wait
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
class Entry:
    """One line of a run's timeline."""

    at: datetime
    kind: str
    title: str
    body: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunView:
    """One run on the task page: who holds (or held) it, whether it holds the task now, its entries."""

    run: Run
    who: str
    entries: list[Entry]
    holding: bool = False


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


def task_runs(task: Task) -> QuerySet[Run]:
    """The task's runs, oldest first, with who ran them, their progress notes, questions and report."""
    return (
        Run.objects.select_related("connection", "user", "report")
        .prefetch_related(
            Prefetch("progress", queryset=ProgressNote.objects.order_by("created_at", "pk")),
            Prefetch(
                "questions",
                queryset=Question.objects.select_related("run", "answered_by").order_by("created_at", "pk"),
            ),
        )
        .filter(task=task)
        .order_by("started_at", "pk")
    )


def _question_entries(question: Question) -> list[Entry]:
    asked = Entry(
        at=question.created_at,
        kind="question",
        title="Asked",
        body=question.text,
        data={"options": question.options},
    )
    if not question.answered_at:
        return [asked]
    who = question.answered_by.display_name if question.answered_by else "a person"
    answer = Entry(at=question.answered_at, kind="answer", title=f"{who} answered", body=question.answer)
    return [asked, answer]


def _decision_entries(run: Run) -> list[Entry]:
    entries = []
    for item in run.inbox_items.all():
        if item.decided_at and item.decision and item.kind == InboxKind.REVIEW:
            who = item.decided_by.display_name if item.decided_by else "a person"
            title = f"{who}: {item.get_decision_display()}"
            entries.append(Entry(at=item.decided_at, kind="decision", title=title, body=item.note))
    return entries


def _run_entries(run: Run) -> list[Entry]:
    """A run's claim, progress notes, questions, answers, report, decisions and end, by time."""
    approval = run.approval.step if run.approval else ""
    entries = [
        Entry(
            at=run.started_at,
            kind="claim",
            title="Claimed the task",
            data={"epoch": run.epoch, "approval": approval},
        )
    ]
    entries += [
        Entry(at=p.created_at, kind="heartbeat", title="Progress", body=p.note, data={"status": p.status})
        for p in run.progress.all()
    ]
    for question in run.questions.all():
        entries += _question_entries(question)
    report = _report_entry(run)
    if report:
        entries.append(report)
    entries += _decision_entries(run)
    if run.ended_at:
        title = f"Run {run.get_state_display().lower()}"
        entries.append(Entry(at=run.ended_at, kind="end", title=title, body=run.end_reason))
    entries.sort(key=lambda e: e.at)
    return entries


def run_timeline(*, task: Task, now: datetime) -> list[RunView]:
    """Every run of the task, oldest first, each with its entries and whether it holds the task at `now`."""
    runs = task_runs(task).select_related("approval").prefetch_related("inbox_items__decided_by")
    return [
        RunView(
            run=run,
            who=holder_name(run),
            entries=_run_entries(run),
            holding=lease.is_live(run.state, run.lease_expires_at, now),
        )
        for run in runs
    ]


def task_history(*, task: Task, limit: int = 100) -> QuerySet[Event]:
    """The task's events, newest first: those about the task and about its runs."""
    run_ids = [str(v) for pair in Run.objects.filter(task=task).values_list("pk", "run_id") for v in pair]
    about = Q(entity_type="task", entity_id=str(task.pk)) | Q(entity_type="run", entity_id__in=run_ids)
    return Event.objects.filter(about, workspace_id=task.workspace_id).order_by("-id")[:limit]


def task_detail(*, workspace: Workspace, task_id: Any) -> TaskDetailResult:
    """One task with its run timeline (progress, questions, report) and Inbox items."""
    now = clock.db_now()
    task = access_task(workspace, task_id)
    runs = list(task_runs(task))
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


def task_comments(*, task: Task) -> list[Comment]:
    """The task's comments, oldest first, with their authors."""
    return list(Comment.objects.filter(task=task).select_related("author").order_by("created_at", "pk"))
