"""Inbox items made directly from model rows, for the web tests and the ownership cases."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from accounts.models import AgentConnection, Workspace
from boards.models import Board, InboxItem, InboxKind, Question, Report, Run, RunState, Task


def make_review(
    workspace: Workspace,
    connection: AgentConnection,
    *,
    title: str = "Write the changelog",
    next_step: str = "",
    created_at: datetime | None = None,
) -> InboxItem:
    """A completed run whose report waits for a person's review (no services involved)."""
    now = created_at or timezone.now()
    board = Board.objects.filter(workspace=workspace).first() or Board.objects.create(
        workspace=workspace, name="Main"
    )
    task = Task.objects.create(
        workspace=workspace, board=board, title=title, review_required=True, column="doing"
    )
    run = Run.objects.create(
        workspace=workspace,
        task=task,
        connection=connection,
        epoch=1,
        state=RunState.COMPLETED,
        started_at=now,
        last_heartbeat_at=now,
        lease_expires_at=now + timedelta(minutes=20),
        ended_at=now,
    )
    report = Report.objects.create(
        workspace=workspace,
        task=task,
        run=run,
        outcome="Changelog written for 1.4.",
        next_step=next_step,
        artifacts=[{"kind": "url", "uri": "https://example.com/changelog"}],
    )
    return InboxItem.objects.create(
        workspace=workspace, kind=InboxKind.REVIEW, task=task, run=run, report=report, created_at=now
    )


def make_question(
    workspace: Workspace, connection: AgentConnection, *, created_at: datetime | None = None
) -> InboxItem:
    now = created_at or timezone.now()
    board = Board.objects.filter(workspace=workspace).first() or Board.objects.create(
        workspace=workspace, name="Main"
    )
    task = Task.objects.create(workspace=workspace, board=board, title="Pick a database", column="doing")
    run = Run.objects.create(
        workspace=workspace,
        task=task,
        connection=connection,
        epoch=1,
        state=RunState.WAITING_INPUT,
        started_at=now,
        last_heartbeat_at=now,
        lease_expires_at=now + timedelta(minutes=60),
    )
    question = Question.objects.create(
        workspace=workspace,
        task=task,
        run=run,
        connection=connection,
        text="Postgres or SQLite?",
        options=["Postgres", "SQLite"],
        created_at=now,
    )
    return InboxItem.objects.create(
        workspace=workspace, kind=InboxKind.QUESTION, task=task, run=run, question=question, created_at=now
    )
