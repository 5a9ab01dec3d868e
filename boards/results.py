"""Typed results of the board services and selectors, each with its hint, payload and summary;
surfaces render them with `weft.hints.render(result)`. Payload keys are the JSON names the MCP
tools, REST API and CLI share (camelCase, ids as ints or strings, datetimes ISO 8601).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from boards import attention as attention_rules
from boards.board_page import BoardStateResult as BoardStateResult  # get_board_state's, by page
from boards.lease import RENEW_EVERY_SECONDS
from boards.models import Approval, InboxItem, Question, Report, Run, Task
from boards.news import News
from boards.payloads import (
    approval_payload,
    holder_name,
    inbox_item_payload,
    iso,
    question_payload,
    report_payload,
    run_payload,
    task_payload,
)
from weft.hints import Hint

if TYPE_CHECKING:
    from boards.services.next_task import NextClaim


@dataclass
class TaskResult:
    """task_create / task_update / task_move / task_trash / task_restore."""

    task: Task
    action: str
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {"task": task_payload(self.task), "action": self.action}

    def summary(self) -> str:
        return f"Task {self.task.pk} {self.action}: {self.task.title} (column {self.task.column})."


@dataclass
class ClaimResult:
    """task_claim: the lease (token shown once) and the task's context."""

    run: Run
    task: Task
    lease_token: str
    context: dict[str, Any]
    resumed: bool
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {
            "runId": str(self.run.run_id),
            "leaseToken": self.lease_token,
            "leaseExpiresAt": iso(self.run.lease_expires_at),
            "renewEverySeconds": RENEW_EVERY_SECONDS,
            "epoch": self.run.epoch,
            "resumed": self.resumed,
            "task": task_payload(self.task),
            "context": self.context,
        }

    def summary(self) -> str:
        verb = "Resumed" if self.resumed else "Started"
        lines = [
            f"{verb} task {self.task.pk}: {self.task.title}",
            f"runId {self.run.run_id}, leaseToken {self.lease_token}, epoch {self.run.epoch}",
            f"Lease until {iso(self.run.lease_expires_at)}; renew with report_progress every "
            f"{RENEW_EVERY_SECONDS} seconds.",
        ]
        if self.context.get("description"):
            lines.append(f"Description: {self.context['description']}")
        for note in self.context.get("reworkNotes", []):
            lines.append(f"Rework note from a person: {note}")
        step = self.context.get("approvedStep")
        if step:
            lines.append(f"Approved step (do exactly this): {step['step']}")
        for answer in self.context.get("answers", []):
            lines.append(f"Answer to question {answer['id']}: {answer['answer']}")
        for note in self.context.get("lastRunNotes", []):
            lines.append(f"Last run: {note}")
        return "\n".join(lines)


@dataclass
class RunResult:
    """run_heartbeat / run_release."""

    run: Run
    action: str
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {
            "runId": str(self.run.run_id),
            "taskId": self.run.task_id,
            "state": self.run.state,
            "epoch": self.run.epoch,
            "leaseExpiresAt": iso(self.run.lease_expires_at)
            if self.run.state in ("active", "waiting_input")
            else None,
            "renewEverySeconds": RENEW_EVERY_SECONDS,
            "action": self.action,
        }

    def summary(self) -> str:
        if self.action == "released":
            return f"Released task {self.run.task_id} (run {self.run.run_id})."
        return f"Lease on task {self.run.task_id} renewed until {iso(self.run.lease_expires_at)}."


@dataclass
class QuestionResult:
    """run_request_input: the question waits in the Inbox; the claim holds 60 minutes."""

    question: Question
    item: InboxItem
    run: Run
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {
            "questionId": self.question.pk,
            "inboxItemId": self.item.pk,
            "runId": str(self.run.run_id),
            "taskId": self.run.task_id,
            "state": self.run.state,
            "leaseExpiresAt": iso(self.run.lease_expires_at),
        }

    def summary(self) -> str:
        return (
            f"Question {self.question.pk} on task {self.run.task_id} is in the Inbox; "
            f"the claim holds until {iso(self.run.lease_expires_at)}."
        )


@dataclass
class CompleteResult:
    """run_complete: the report, and where the task went (Done, or the Inbox for review)."""

    run: Run
    task: Task
    report: Report
    inbox_item: InboxItem | None
    hint: Hint
    next: NextClaim | None = None

    def then(self, claim: NextClaim) -> CompleteResult:
        self.next, self.hint = claim, claim.hint
        return self

    def payload(self) -> dict[str, Any]:
        return {
            "runId": str(self.run.run_id),
            "taskId": self.task.pk,
            "column": self.task.column,
            "review": self.inbox_item is not None,
            "inboxItemId": self.inbox_item.pk if self.inbox_item else None,
            "report": report_payload(self.report),
            "notAccepted": self.report.not_accepted,
            **({"next": self.next.payload()} if self.next is not None else {}),
        }

    def summary(self) -> str:
        where = "waits for review in the Inbox" if self.inbox_item else "is Done"
        lines = [f"Task {self.task.pk} completed and {where}."]
        for item in self.report.not_accepted:
            lines.append(f"Not accepted, kept unverified for a person: {item['field']} ({item['reason']}).")
        tip = "Tip: complete_task with startNext true also starts your next task, in one call."
        lines.append(self.next.summary() if self.next is not None else tip)
        return "\n".join(lines)


@dataclass
class InboxResult:
    """inbox_decide / question_answer."""

    item: InboxItem
    task: Task
    hint: Hint
    approval: Approval | None = None
    question: Question | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "item": inbox_item_payload(self.item),
            "task": task_payload(self.task),
            "approval": approval_payload(self.approval) if self.approval else None,
            "question": question_payload(self.question) if self.question else None,
        }

    def summary(self) -> str:
        if self.question is not None and self.question.state == "answered":
            return f"Question {self.question.pk} answered; the agent gets the answer on its next call."
        what = self.item.decision or self.item.state
        return f"Inbox item {self.item.pk}: {what}; task {self.task.pk} is {self.task.column}."


@dataclass
class AttentionStatus:
    """How much waits on people, against the workspace's limits."""

    waiting: int
    limit: int
    minutes: int
    minute_limit: int
    full: bool
    oldest_age_seconds: int
    reason: str
    hint: Hint

    @classmethod
    def of(cls, attention: attention_rules.Attention, hint: Hint) -> AttentionStatus:
        age = attention.oldest_age
        return cls(
            waiting=attention.waiting,
            limit=attention.limit,
            minutes=attention.minutes,
            minute_limit=attention.minute_limit,
            full=attention.full,
            oldest_age_seconds=int(age.total_seconds()) if age is not None else 0,
            reason=attention.reason,
            hint=hint,
        )

    def payload(self) -> dict[str, Any]:
        return {
            "waiting": self.waiting,
            "limit": self.limit,
            "minutes": self.minutes,
            "minuteLimit": self.minute_limit,
            "full": self.full,
            "oldestAgeSeconds": self.oldest_age_seconds,
            "canStart": not self.full,
        }

    def summary(self) -> str:
        state = "full" if self.full else "room to start work"
        return (
            f"{self.waiting}/{self.limit} items, ~{self.minutes}/{self.minute_limit} min"
            f" wait on people: {state}."
        )


@dataclass
class WorkResult:
    """work_for_connection: the get_my_work payload."""

    held: list[Run]
    waiting: list[InboxItem]
    answers: list[Question]
    approvals: list[Approval]
    overdue: list[Task]
    due_soon: list[Task]
    capacity: AttentionStatus
    best: Task | None
    now: datetime
    hint: Hint
    open_questions: dict[int, list[int]] = field(default_factory=dict)
    lease_tokens: dict[int, str] = field(default_factory=dict)
    news: list[News] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {
            "held": [
                {
                    **run_payload(run),
                    "leaseToken": self.lease_tokens.get(run.pk),
                    "title": run.task.title,
                    "openQuestions": self.open_questions.get(run.pk, []),
                }
                for run in self.held
            ],
            "waitingOnPeople": [
                {**inbox_item_payload(item, self.now), "title": item.task.title} for item in self.waiting
            ],
            "answers": [question_payload(q) for q in self.answers],
            "approvals": [approval_payload(a) for a in self.approvals],
            "overdue": [
                {"id": t.pk, "title": t.title, "dueAt": iso(t.due_at), "column": t.column}
                for t in self.overdue
            ],
            "dueSoon": [
                {"id": t.pk, "title": t.title, "dueAt": iso(t.due_at), "column": t.column}
                for t in self.due_soon
            ],
            "capacity": self.capacity.payload(),
            "next": {"id": self.best.pk, "title": self.best.title, "priority": self.best.priority}
            if self.best
            else None,
            "news": [item.payload() for item in self.news],
        }

    def summary(self) -> str:
        lines: list[str] = []
        for run in self.held:
            lines.append(
                f"Holding task {run.task_id} ({run.task.title}), {run.state},"
                f" lease until {iso(run.lease_expires_at)}."
            )
        for q in self.answers:
            lines.append(f"Answer to question {q.pk} on task {q.task_id}: {q.answer}")
        for a in self.approvals:
            lines.append(f"Approved step on task {a.task_id} (until {iso(a.expires_at)}): {a.step}")
        for item in self.waiting:
            lines.append(f"Waiting on a person: {item.kind} of task {item.task_id} ({item.task.title}).")
        for t in self.overdue:
            lines.append(f"Overdue: task {t.pk} ({t.title}), due {iso(t.due_at)}.")
        for t in self.due_soon:
            lines.append(f"Due soon: task {t.pk} ({t.title}), due {iso(t.due_at)}.")
        lines.append(f"Capacity: {self.capacity.summary()}")
        if self.best is not None:
            lines.append(f"Best next task: {self.best.pk} ({self.best.title}).")
        lines.extend(f"News: {item.summary}" for item in self.news)
        return "\n".join(lines)


@dataclass
class TaskDetailResult:
    task: Task
    runs: list[Run]
    inbox_items: list[InboxItem]
    holder: Run | None
    hint: Hint

    def payload(self) -> dict[str, Any]:
        timeline = []
        for run in self.runs:
            report = getattr(run, "report", None) if hasattr(run, "report") else None
            timeline.append(
                {
                    **run_payload(run),
                    "progress": [
                        {"note": p.note, "status": p.status, "at": iso(p.created_at)}
                        for p in run.progress.all()
                    ],
                    "questions": [question_payload(q) for q in run.questions.all()],
                    "report": report_payload(report) if report else None,
                }
            )
        return {
            "task": task_payload(self.task),
            "heldBy": holder_name(self.holder) if self.holder else None,
            "leaseExpiresAt": iso(self.holder.lease_expires_at) if self.holder else None,
            "runs": timeline,
            "inbox": [inbox_item_payload(i) for i in self.inbox_items],
        }

    def summary(self) -> str:
        lines = [
            f"Task {self.task.pk}: {self.task.title} (column {self.task.column}, epoch {self.task.epoch})."
        ]
        if self.task.description:
            lines.append(self.task.description)
        if self.holder:
            lines.append(f"Held by {holder_name(self.holder)} until {iso(self.holder.lease_expires_at)}.")
        lines.append(f"{len(self.runs)} run(s).")
        return "\n".join(lines)


@dataclass
class SearchResult:
    query: str
    tasks: list[Task]
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "results": [
                {"id": t.pk, "title": t.title, "column": t.column, "priority": t.priority} for t in self.tasks
            ],
        }

    def summary(self) -> str:
        if not self.tasks:
            return f"No task matches {self.query!r}."
        return "\n".join(
            [f"{len(self.tasks)} task(s) match {self.query!r}:"]
            + [f"{t.pk} {t.title} ({t.column})" for t in self.tasks]
        )


@dataclass
class InboxListResult:
    open: list[InboxItem]
    snoozed: list[InboxItem]
    attention: AttentionStatus
    now: datetime
    hint: Hint

    def _row(self, item: InboxItem) -> dict[str, Any]:
        row = {**inbox_item_payload(item, self.now), "title": item.task.title}
        if item.report is not None:
            row["report"] = report_payload(item.report)
            row["ifAccepted"] = item.report.next_step
        if item.question is not None:
            row["question"] = question_payload(item.question)
        return row

    def payload(self) -> dict[str, Any]:
        return {
            "open": [self._row(i) for i in self.open],
            "snoozed": [self._row(i) for i in self.snoozed],
            "attention": self.attention.payload(),
        }

    def summary(self) -> str:
        return f"{len(self.open)} item(s) wait in the Inbox, {len(self.snoozed)} snoozed."
