"""Operators see issues, their threads and each workspace's intake; guest tokens only as hashes."""

from django.contrib import admin

from boards.admin import ViewOnlyAdmin
from issues.models import GuestToken, IntakeSettings, Issue, IssueMessage


class MessageInline(admin.TabularInline):
    model = IssueMessage
    extra = 0
    fields = ("side", "body", "reporter_git_sha", "reporter_app_version", "build_missing", "created_at")
    readonly_fields = fields
    can_delete = False


@admin.register(Issue)
class IssueAdmin(ViewOnlyAdmin):
    """View-only: a status, resolution, duplicate or upstream link changes through the triage
    writes (issues/services/triage.py), which redact the text the reporter will read, move the
    reporter's news and emit the issue's event. A save here would do none of these."""

    list_display = ["pk", "workspace", "kind", "status", "environment_class", "title", "created_at"]
    list_filter = ["status", "kind", "environment_class", "workspace"]
    search_fields = ["title", "pk__exact", "workspace__name", "workspace__slug"]
    list_select_related = ["workspace"]
    date_hierarchy = "created_at"
    inlines = [MessageInline]
    # Text was redacted when it was stored; operators read it, the web triage changes it.
    readonly_fields = [
        "workspace",
        "title",
        "body",
        "reporter_workspace",
        "reporter_connection",
        "reporter_user",
        "reporter_git_sha",
        "reporter_app_version",
        "app_version_from_client",
        "redacted_kinds",
        "created_at",
    ]


@admin.register(GuestToken)
class GuestTokenAdmin(admin.ModelAdmin):
    list_display = ["pk", "issue", "expires_at", "revoked_at"]
    readonly_fields = ["workspace", "issue", "token_hash", "created_at", "expires_at"]


@admin.register(IntakeSettings)
class IntakeSettingsAdmin(admin.ModelAdmin):
    list_display = ["workspace", "open_intake", "daily_cap_per_workspace", "redaction_mode"]
