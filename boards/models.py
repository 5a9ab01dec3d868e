"""The board and the claim loop: Board, Task, Run, ProgressNote, Question, Report, InboxItem, Approval.

Rules live in the pure modules (`lease.py`, `attention.py`, `evidence.py`, `limits.py`) and are
applied by `boards/services/`; these models hold state only.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone

from boards import limits


class Board(models.Model):
    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="boards")
    name = models.CharField(max_length=limits.BOARD_NAME)
    created_at = models.DateTimeField(default=timezone.now)
    # Set while the board is archived: its tasks are out of the agents' view until it is restored.
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # Two live boards of a workspace never share a name, whatever the case; archived ones may.
            models.UniqueConstraint(
                Lower("name"),
                "workspace",
                condition=Q(archived_at__isnull=True),
                name="board_live_name_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Column(models.TextChoices):
    BACKLOG = "backlog", "Backlog"
    TODO = "todo", "Todo"
    DOING = "doing", "Doing"
    DONE = "done", "Done"
    DROPPED = "dropped", "Dropped"
    TRASH = "trash", "Trash"


BOARD_COLUMNS = [Column.BACKLOG, Column.TODO, Column.DOING, Column.DONE]


class Priority(models.IntegerChoices):
    LOW = 0, "Low"
    NORMAL = 1, "Normal"
    HIGH = 2, "High"
    URGENT = 3, "Urgent"


class LabelColour(models.TextChoices):
    """The fixed palette a label's colour comes from (static/css/weft.css draws each one)."""

    GRAY = "gray", "Gray"
    RED = "red", "Red"
    ORANGE = "orange", "Orange"
    YELLOW = "yellow", "Yellow"
    GREEN = "green", "Green"
    TEAL = "teal", "Teal"
    BLUE = "blue", "Blue"
    PURPLE = "purple", "Purple"
    PINK = "pink", "Pink"


class Label(models.Model):
    """A workspace's label: a name unique in the workspace whatever its case, and a colour."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="labels")
    name = models.CharField(max_length=limits.LABEL_NAME)
    colour = models.CharField(max_length=8, choices=LabelColour.choices, default=LabelColour.GRAY)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint("workspace", Lower("name"), name="label_name_unique_ci"),
        ]

    def __str__(self) -> str:
        return self.name


def _optional_link(to: str, related_name: str = "+") -> models.ForeignKey[Any, Any]:
    """A link a row may leave unset, indexed where set (`_where_set` in the model's indexes)."""
    return models.ForeignKey(
        to, on_delete=models.SET_NULL, null=True, blank=True, related_name=related_name, db_index=False
    )


def _where_set(field: str, name: str) -> models.Index:
    """An optional foreign key's index over the rows that set it: a lookup by its value (a person's
    runs, the cascade when a row it names goes) reads it, and a row written without it adds no entry."""
    return models.Index(fields=[field], condition=Q(**{f"{field}__isnull": False}), name=name)


class Task(models.Model):
    # No index of their own: (workspace, column, priority) and task_board_order lead with them, and
    # every index more is one more entry for each claim and completion to write.
    workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="tasks", db_index=False
    )
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="tasks", db_index=False)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    column = models.CharField(max_length=8, choices=Column.choices, default=Column.TODO)
    priority = models.PositiveSmallIntegerField(choices=Priority.choices, default=Priority.NORMAL)
    position = models.FloatField(default=0.0)
    due_at = models.DateTimeField(null=True, blank=True)
    review_required = models.BooleanField(default=False)
    estimated_review_minutes = models.PositiveIntegerField(default=5)
    # Optional verification checks run on completion, e.g. [{"kind": "artifact_kind", "value": "pr"}].
    checks = models.JSONField(default=list, blank=True)
    # Fencing token: bumped on every claim, release and sweep.
    epoch = models.PositiveIntegerField(default=0)
    # The optional links are indexed only where set (Meta.indexes, `_where_set`): a claim and a
    # completion rewrite the task row, and every index takes a new entry, NULLs included.
    # Who holds the live run (set by a claim, cleared when the run ends); who a person assigned
    # the task to is `assigned_user` / `assigned_connection`, which no claim or release touches.
    assignee_connection = _optional_link("accounts.AgentConnection")
    assignee_user = _optional_link(settings.AUTH_USER_MODEL)
    created_by_user = _optional_link(settings.AUTH_USER_MODEL)
    created_by_connection = _optional_link("accounts.AgentConnection")
    # The task's assignee, a member or an agent connection of its workspace (at most one of them).
    assigned_user = _optional_link(settings.AUTH_USER_MODEL)
    assigned_connection = _optional_link("accounts.AgentConnection")
    labels = models.ManyToManyField(Label, blank=True, related_name="tasks")
    # The labels' names in name order, written with `labels` in the same transaction by
    # boards/services/labels.py, so a task's payload (a claim's answer too) reads them without a
    # query. A write that renames or deletes a label must rewrite its tasks' names as well.
    label_names = models.JSONField(default=list, blank=True)
    trashed_at = models.DateTimeField(null=True, blank=True)
    trashed_from = models.CharField(max_length=8, choices=Column.choices, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "column", "priority"]),
            # A column in board order: get_board_state's pages by keyset on (position, id), the
            # web board's columns, a column's count.
            models.Index(fields=["board", "column", "position", "id"], name="task_board_order"),
            # get_my_work's overdue and due-soon tasks, read soonest first with LIMIT: only open
            # tasks with a due date are in it, however many tasks the workspace holds.
            models.Index(
                fields=["workspace", "due_at", "id"],
                condition=models.Q(column__in=["backlog", "todo", "doing"], due_at__isnull=False),
                name="task_due_open",
            ),
            # get_my_work's best next task and startNext's pick, read in this order with LIMIT 1:
            # the first row of the index, however many tasks wait in Todo.
            models.Index(
                fields=["workspace", "-priority", "due_at", "position", "id"],
                condition=models.Q(column="todo"),
                name="task_best_next",
            ),
            _where_set("assignee_connection", "task_assignee_conn_set"),
            _where_set("assignee_user", "task_assignee_user_set"),
            _where_set("created_by_user", "task_creator_user_set"),
            _where_set("created_by_connection", "task_creator_conn_set"),
            _where_set("assigned_user", "task_assigned_user_set"),
            _where_set("assigned_connection", "task_assigned_conn_set"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title}"


class RunState(models.TextChoices):
    ACTIVE = "active", "Active"
    WAITING_INPUT = "waiting_input", "Waiting for input"
    COMPLETED = "completed", "Completed"
    STALE = "stale", "Stale"
    RELEASED = "released", "Released"


LIVE_RUN_STATES = [RunState.ACTIVE, RunState.WAITING_INPUT]


class Run(models.Model):
    """One claim of a task by an agent connection (or a person), fenced by the task's epoch."""

    # No index of its own: (workspace, connection, state) leads with it.
    workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="runs")
    run_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    connection = models.ForeignKey(
        "accounts.AgentConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    user = _optional_link(settings.AUTH_USER_MODEL, related_name="runs")  # a person's run
    # sha256 of the lease token; cleared when the lease ends. The token itself is shown once.
    lease_token_hash = models.CharField(max_length=64, blank=True)
    epoch = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=RunState.choices, default=RunState.ACTIVE)
    started_at = models.DateTimeField()
    last_heartbeat_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=200, blank=True)
    # The approved step this run was started to carry out, if any.
    approval = _optional_link("Approval", related_name="runs")

    class Meta:
        constraints = [
            # One live run per task, enforced by the database.
            models.UniqueConstraint(
                fields=["task"], condition=Q(state__in=LIVE_RUN_STATES), name="one_live_run_per_task"
            )
        ]
        indexes = [
            models.Index(fields=["workspace", "connection", "state"]),
            # A connection's live runs (startNext's pick): a few rows, however many runs the
            # connection has ended (tests/boards/test_pick_plan.py).
            models.Index(
                fields=["connection"], condition=Q(state__in=LIVE_RUN_STATES), name="run_live_by_connection"
            ),
            # The sweep's scan: live runs by expiry.
            models.Index(fields=["state", "lease_expires_at"], name="run_state_expiry"),
            _where_set("user", "run_user_set"),
            _where_set("approval", "run_approval_set"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} of task {self.task_id} ({self.state})"


class ProgressNote(models.Model):
    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="progress")
    note = models.TextField()
    status = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"progress on run {self.run_id}: {self.note[:40]}"


class QuestionState(models.TextChoices):
    OPEN = "open", "Open"
    ANSWERED = "answered", "Answered"
    CANCELLED = "cancelled", "Cancelled"


class Question(models.Model):
    MAX_LENGTH = limits.QUESTION

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="questions")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="questions")
    # The connection the answer is delivered to.
    connection = models.ForeignKey(
        "accounts.AgentConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.CharField(max_length=MAX_LENGTH)
    options = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=10, choices=QuestionState.choices, default=QuestionState.OPEN)
    answer = models.TextField(blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"question {self.pk} on task {self.task_id} ({self.state})"


class Report(models.Model):
    """What an agent says it did: checkable artifacts and honest gaps."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="reports")
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="report")
    outcome = models.TextField()
    artifacts = models.JSONField(default=list, blank=True)
    claims = models.JSONField(default=list, blank=True)
    not_done = models.JSONField(default=list, blank=True)
    unknowns = models.JSONField(default=list, blank=True)
    next_step = models.TextField(blank=True)
    # Evidence kept as given but not checkable: [{"field": "artifacts[2]", "reason": ...}].
    not_accepted = models.JSONField(default=list, blank=True)
    # Results of the task's verification checks: [{"check": ..., "passed": bool, "detail": str}].
    verification = models.JSONField(default=list, blank=True)
    verification_passed = models.BooleanField(null=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"report of run {self.run_id} on task {self.task_id}"


class InboxKind(models.TextChoices):
    REVIEW = "review", "Review"
    QUESTION = "question", "Question"


class InboxState(models.TextChoices):
    OPEN = "open", "Open"
    SNOOZED = "snoozed", "Snoozed"
    DECIDED = "decided", "Decided"


class Decision(models.TextChoices):
    ACCEPT = "accept", "Accept"
    REWORK = "rework", "Rework"
    LATER = "later", "Later"
    DROP = "drop", "Drop"
    ANSWERED = "answered", "Answered"
    # A person moved or trashed the task on the board while its review waited.
    MOVED = "moved", "Moved on the board"


class InboxItem(models.Model):
    """What waits on a person: a review of a completed task, or a question."""

    # No index of its own: (workspace, state, created_at) leads with it.
    workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="inbox", db_index=False
    )
    kind = models.CharField(max_length=8, choices=InboxKind.choices)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="inbox_items")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="inbox_items")
    report = models.ForeignKey(Report, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    question = models.OneToOneField(
        Question, on_delete=models.CASCADE, null=True, blank=True, related_name="inbox_item"
    )
    state = models.CharField(max_length=8, choices=InboxState.choices, default=InboxState.OPEN)
    decision = models.CharField(max_length=8, choices=Decision.choices, blank=True)
    note = models.TextField(blank=True)
    estimated_minutes = models.PositiveIntegerField(default=5)
    snoozed_until = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["workspace", "state", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} of task {self.task_id} ({self.state})"


class Approval(models.Model):
    """A person's approval of exactly one next step, valid 72 hours, delivered once."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="approvals")
    inbox_item = models.OneToOneField(InboxItem, on_delete=models.CASCADE, related_name="approval")
    # The connection whose run produced the step; the approval is delivered to it.
    connection = models.ForeignKey(
        "accounts.AgentConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    step = models.TextField()
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"approval of task {self.task_id}: {self.step[:40]}"


class Comment(models.Model):
    """A person's comment on a task, in Markdown (shown through weft.markdown)."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    body = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["task", "created_at"])]

    def __str__(self) -> str:
        return f"comment on task {self.task_id}"
