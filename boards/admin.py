"""The operators' admin of the board: boards, tasks, runs and Inbox items, to find and read.

Every page here is view-only. A board's rows change only through boards/services/, which keep
the rules a direct edit would break: a task enters Doing only by a claim and leaves it by ending
the live run; the epoch fences every lease-guarded write; each change is one event in the log that
the board, the stream and the webhooks read. An edit here would do none of that.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from boards.models import Board, InboxItem, Run, Task
from boards.payloads import holder_name


class ViewOnlyAdmin(admin.ModelAdmin):
    """Seen, never added, changed or deleted from the admin (the services write these rows)."""

    # A filtered page counts its matches only, not the whole table of every workspace's rows.
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RunInline(admin.TabularInline):
    """A task's runs, newest first: who held the lease and how it ended."""

    model = Run
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "run_id",
        "holder",
        "state",
        "epoch",
        "started_at",
        "last_heartbeat_at",
        "lease_expires_at",
        "ended_at",
        "end_reason",
    )
    ordering = ["-started_at"]
    show_change_link = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[Run]:
        return super().get_queryset(request).select_related("connection", "user")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="held by")
    def holder(self, run: Run) -> str:
        return holder_name(run)


@admin.register(Board)
class BoardAdmin(ViewOnlyAdmin):
    list_display = ["name", "workspace", "task_count", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["name", "pk__exact", "workspace__name", "workspace__slug"]
    list_select_related = ["workspace"]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Board]:
        return super().get_queryset(request).annotate(n_tasks=Count("tasks"))

    @admin.display(description="tasks (with the trash)", ordering="n_tasks")
    def task_count(self, board: Board) -> str:
        """The count, linked to the board's tasks in the task list."""
        tasks = f"{reverse('admin:boards_task_changelist')}?board__id__exact={board.pk}"
        return format_html('<a href="{}">{}</a>', tasks, getattr(board, "n_tasks", 0))


@admin.register(Task)
class TaskAdmin(ViewOnlyAdmin):
    list_display = [
        "pk",
        "title",
        "workspace",
        "board",
        "column",
        "priority",
        "assignee",
        "review_required",
        "due_at",
        "created_at",
        "updated_at",
    ]
    list_display_links = ["pk", "title"]
    list_filter = ["column", "priority", "review_required", "workspace"]
    search_fields = ["title", "pk__exact", "workspace__name", "workspace__slug", "board__name"]
    list_select_related = ["workspace", "board", "assignee_connection", "assignee_user"]
    date_hierarchy = "created_at"
    inlines = [RunInline]

    @admin.display(description="assignee")
    def assignee(self, task: Task) -> str:
        if task.assignee_connection is not None:
            return task.assignee_connection.name
        return task.assignee_user.display_name if task.assignee_user is not None else ""


@admin.register(Run)
class RunAdmin(ViewOnlyAdmin):
    """Runs are the leases. The lease fields (token hash, epoch, state, heartbeat, expiry) are the
    fence the lease rules (boards/lease.py) check on every write: an operator who set an expiry,
    an epoch or a state here would forge a lease, letting a stale holder write over the next one
    or a second claim pass, with no event to tell the workspace. So nothing here is editable;
    a stuck lease ends at its expiry through the sweep."""

    list_display = ["run_id", "task", "workspace", "holder", "state", "epoch", "started_at", "ended_at"]
    list_filter = ["state", "workspace"]
    search_fields = ["task__title", "task__pk__exact", "workspace__name", "workspace__slug"]
    list_select_related = ["workspace", "task", "connection", "user"]
    exclude = ["lease_token_hash"]
    date_hierarchy = "started_at"

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Run], search_term: str
    ) -> tuple[QuerySet[Run], bool]:
        """A run id (with or without dashes) finds its run, on every database."""
        try:
            return queryset.filter(run_id=uuid.UUID(search_term.strip())), False
        except ValueError:
            return super().get_search_results(request, queryset, search_term)

    @admin.display(description="held by")
    def holder(self, run: Run) -> str:
        return holder_name(run)


@admin.register(InboxItem)
class InboxItemAdmin(ViewOnlyAdmin):
    list_display = ["pk", "kind", "task", "workspace", "state", "decision", "created_at", "decided_at"]
    list_filter = ["kind", "state", "decision", "workspace"]
    search_fields = ["task__title", "task__pk__exact", "workspace__name", "workspace__slug"]
    list_select_related = ["workspace", "task"]
    date_hierarchy = "created_at"
