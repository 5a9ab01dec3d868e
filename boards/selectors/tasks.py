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
from django.utils import timezone

from accounts.models import User, Workspace
from boards import clock, history_words, lease, limits
from boards.access import access_task
from boards.models import (
    Approval,
    Column,
    Comment,
    Decision,
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


@dataclass
class HistoryEntry:
    """One line of a task's history: a sentence saying who did what, and the event's code."""

    at: datetime
    text: str
    code: str


@dataclass
class _Facts:
    """Who did each thing in a task's history and the words they left, read in a few queries."""

    task: Task
    runs: dict[str, Run]
    items: dict[str, InboxItem]
    questions: dict[str, Question]
    approvals: dict[str, Approval]
    users: dict[str, User]
    now: datetime

    def of(self, event: Event) -> history_words.Facts:
        p = event.payload if isinstance(event.payload, dict) else {}
        family = event.type.split(".", 1)[0]
        if family == "run":
            question = self.questions.get(str(p.get("questionId")))
            run = self.runs.get(str(p.get("runId") or event.entity_id))
            words = question.text if question else ""
            if event.type == "run.started" and run is not None and run.approval is not None:
                words = run.approval.step  # the run carries out a step a person approved
            return history_words.Facts(who=holder_name(run) if run else "", words=words)
        if event.type == "inbox.item_decided":
            return self._decided(self.items.get(str(p.get("itemId") or event.entity_id)), p)
        if event.type == "question.answered":
            q = self.questions.get(str(p.get("questionId") or event.entity_id))
            by = q.answered_by.display_name if q and q.answered_by else ""
            return history_words.Facts(who=by, words=q.answer if q else "")
        if event.type == "question.delivered":
            q = self.questions.get(str(event.entity_id))
            return history_words.Facts(who=holder_name(q.run) if q else "")
        if event.type == "approval.delivered":
            a = self.approvals.get(str(event.entity_id))
            return history_words.Facts(who=a.connection.name if a and a.connection else "")
        if event.type == "task.created":
            t = self.task
            agent = t.created_by_connection
            return history_words.Facts(who=agent.name if agent else _name(t.created_by_user))
        user = self.users.get(str(p.get("userId") or p.get("authorId")))
        return history_words.Facts(who=user.display_name if user else "")

    def _decided(self, item: InboxItem | None, p: dict[str, Any]) -> history_words.Facts:
        # The item keeps its latest decision only: an earlier one (a snooze since decided) is "Someone".
        if item is None or item.decision != p.get("decision"):
            return history_words.Facts()
        words = item.note
        if item.decision == Decision.LATER and item.snoozed_until is not None:
            words = history_words.until(timezone.localtime(item.snoozed_until), timezone.localtime(self.now))
        return history_words.Facts(who=_name(item.decided_by), words=words)


def _name(user: User | None) -> str:
    return user.display_name if user is not None else ""


def _history_facts(task: Task, events: list[Event], now: datetime) -> _Facts:
    runs = list(Run.objects.select_related("connection", "user", "approval").filter(task=task))
    user_ids = {str(e.payload.get(k)) for e in events for k in ("userId", "authorId") if e.payload.get(k)}
    return _Facts(
        task=task,
        runs={key: r for r in runs for key in (str(r.pk), str(r.run_id))},
        items={str(i.pk): i for i in InboxItem.objects.select_related("decided_by").filter(task=task)},
        questions={
            str(q.pk): q
            for q in Question.objects.select_related("answered_by", "run__connection", "run__user").filter(
                task=task
            )
        },
        approvals={str(a.pk): a for a in Approval.objects.select_related("connection").filter(task=task)},
        users={str(u.pk): u for u in User.objects.filter(pk__in=[i for i in user_ids if i.isdigit()])},
        now=now,
    )


def task_history(*, task: Task, limit: int = 100, now: datetime | None = None) -> list[HistoryEntry]:
    """The task's events, newest first, each a sentence: the task's, its runs', its Inbox items',
    its questions' and its approvals' (people's decisions and answers among them)."""
    run_ids = [str(v) for pair in Run.objects.filter(task=task).values_list("pk", "run_id") for v in pair]
    about = (
        Q(entity_type="task", entity_id=str(task.pk))
        | Q(entity_type="run", entity_id__in=run_ids)
        | Q(entity_type="inbox_item", entity_id__in=_ids(InboxItem.objects.filter(task=task)))
        | Q(entity_type="question", entity_id__in=_ids(Question.objects.filter(task=task)))
        | Q(entity_type="approval", entity_id__in=_ids(Approval.objects.filter(task=task)))
    )
    events = list(Event.objects.filter(about, workspace_id=task.workspace_id).order_by("-id")[:limit])
    facts = _history_facts(task, events, now or timezone.now())
    return [
        HistoryEntry(
            at=e.created_at,
            text=history_words.sentence(e.type, e.payload, facts.of(e)),
            code=e.type if e.epoch is None else f"{e.type} · epoch {e.epoch}",
        )
        for e in events
    ]


def _ids(rows: QuerySet[Any]) -> list[str]:
    return [str(pk) for pk in rows.values_list("pk", flat=True)]


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
    # An archived board's tasks are out of the agents' view.
    base = Task.objects.filter(workspace=workspace, board__archived_at=None).exclude(column=Column.TRASH)
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
