"""Agent-filed issues: Issue, IssueMessage, IssueLink, GuestToken, IntakeSettings.

Every row carries `workspace`, the receiving workspace (where the issue is triaged). The
reporter may belong to another workspace (`reporter_workspace`); what the reporter reads goes
through its guest token or its own connection, never through the receiving workspace's scope.
Text fields hold only redacted text (issues/redact.py runs before anything is stored).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class IssueKind(models.TextChoices):
    BUG = "bug", "Bug"
    PERFORMANCE = "performance", "Performance"
    ENHANCEMENT = "enhancement", "Enhancement"


class IssueStatus(models.TextChoices):
    OPEN = "open", "Open"
    TRIAGED = "triaged", "Triaged"
    WAITING_INPUT = "waiting_input", "Waiting for the reporter"
    IN_PROGRESS = "in_progress", "In progress"
    RESOLVED = "resolved", "Resolved"
    CLOSED = "closed", "Closed"
    DUPLICATE = "duplicate", "Duplicate"


# A closed thread: the reporter's next read shows the outcome, nothing more is expected of it.
FINAL_STATUSES = frozenset({IssueStatus.RESOLVED, IssueStatus.CLOSED, IssueStatus.DUPLICATE})


class EnvironmentClass(models.TextChoices):
    """Where the reported behaviour can be reproduced (issues/environment.py decides)."""

    PUBLIC_RELEASE = "public_release", "Public release"
    LOCAL_COMMIT = "local_commit", "Local commit"
    LOCAL_BRANCH = "local_branch", "Local branch"
    UNKNOWN = "unknown", "Unknown"


class RedactionMode(models.TextChoices):
    STRIP = "strip", "Replace findings with placeholders"
    REJECT = "reject", "Refuse a submission that holds any finding"


class Issue(models.Model):
    """A bug, performance problem or enhancement an agent reported, in its receiving workspace."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="issues")
    kind = models.CharField(max_length=16, choices=IssueKind.choices)
    title = models.CharField(max_length=200)
    body = models.TextField()
    status = models.CharField(max_length=16, choices=IssueStatus.choices, default=IssueStatus.OPEN)
    resolution = models.TextField(blank=True)
    environment_class = models.CharField(
        max_length=16, choices=EnvironmentClass.choices, default=EnvironmentClass.UNKNOWN
    )
    reporter_git_sha = models.CharField(max_length=100, blank=True)
    reporter_app_version = models.CharField(max_length=200, blank=True)
    # True when the server filled reporter_app_version from the connection's MCP client.
    app_version_from_client = models.BooleanField(default=False)
    reporter_workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reporter_connection = models.ForeignKey(
        "accounts.AgentConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reporter_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    upstream_url = models.URLField(max_length=2000, blank=True)
    duplicate_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="duplicates"
    )
    # The kinds the redaction found across the submission (placeholders are in the text).
    redacted_kinds = models.JSONField(default=list, blank=True)
    # news_for_connection: maintainer activity the reporter has not read yet.
    maintainer_activity_at = models.DateTimeField(null=True, blank=True)
    reporter_read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "status"], name="issues_issue_status"),
            models.Index(fields=["reporter_connection", "maintainer_activity_at"], name="issues_issue_news"),
            models.Index(
                fields=["reporter_workspace", "workspace", "created_at"], name="issues_issue_intake"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title}"


class IssueMessage(models.Model):
    """One message of an issue's thread, from the reporter's side or the maintainers'."""

    REPORTER = "reporter"
    MAINTAINER = "maintainer"
    SIDES = [(REPORTER, "Reporter"), (MAINTAINER, "Maintainer")]

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="messages")
    side = models.CharField(max_length=10, choices=SIDES)
    body = models.TextField()
    reporter_git_sha = models.CharField(max_length=100, blank=True)
    reporter_app_version = models.CharField(max_length=200, blank=True)
    # A reporter message that named no build: kept, and shown with a warning.
    build_missing = models.BooleanField(default=False)
    author_connection = models.ForeignKey(
        "accounts.AgentConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    author_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    redacted_kinds = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["issue", "created_at", "pk"]

    def __str__(self) -> str:
        return f"#{self.issue_id} {self.side} message {self.pk}"


class LinkTarget(models.TextChoices):
    TASK = "task", "Task"
    RUN = "run", "Run"
    BOARD = "board", "Board"
    ISSUE = "issue", "Issue"


class IssueLink(models.Model):
    """REFERS_TO: the issue names a task, run, board or another issue; exactly one target is set.

    The target is something the reporter could see when it filed (checked then), which may lie
    in the reporter's workspace rather than the receiving one: a reader shows it only through
    its own access helpers.
    """

    REFERS_TO = "refers_to"
    RELATIONS = [(REFERS_TO, "Refers to")]

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="links")
    relation = models.CharField(max_length=16, choices=RELATIONS, default=REFERS_TO)
    target_type = models.CharField(max_length=8, choices=LinkTarget.choices)
    task = models.ForeignKey("boards.Task", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    run = models.ForeignKey("boards.Run", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    board = models.ForeignKey(
        "boards.Board", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    target_issue = models.ForeignKey(
        Issue, on_delete=models.CASCADE, null=True, blank=True, related_name="referred_by"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(target_type="task", task__isnull=False, run__isnull=True, board__isnull=True)
                    & Q(target_issue__isnull=True)
                )
                | (
                    Q(target_type="run", task__isnull=True, run__isnull=False, board__isnull=True)
                    & Q(target_issue__isnull=True)
                )
                | (
                    Q(target_type="board", task__isnull=True, run__isnull=True, board__isnull=False)
                    & Q(target_issue__isnull=True)
                )
                | (
                    Q(target_type="issue", task__isnull=True, run__isnull=True, board__isnull=True)
                    & Q(target_issue__isnull=False)
                ),
                name="issue_link_one_target",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.issue_id} refers to {self.target_type}"


class GuestToken(models.Model):
    """A read token for one issue's thread, given to its reporter; only its SHA-256 is kept."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="guest_tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"guest token {self.pk} for #{self.issue_id}"


class IntakeSettings(models.Model):
    """How a workspace receives issues: open to other workspaces' agents or not, and the redaction mode.

    A workspace without a row has the defaults: intake closed, redaction `strip`.
    """

    DEFAULT_DAILY_CAP = 20

    workspace = models.OneToOneField(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="issue_intake"
    )
    open_intake = models.BooleanField(default=False)
    # Issues a day from any one reporting workspace; its own workspace is not capped.
    daily_cap_per_workspace = models.PositiveIntegerField(default=DEFAULT_DAILY_CAP)
    redaction_mode = models.CharField(
        max_length=8, choices=RedactionMode.choices, default=RedactionMode.STRIP
    )
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"intake of {self.workspace_id} ({'open' if self.open_intake else 'closed'})"
