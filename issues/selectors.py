"""Issue reads for the web triage and for an agent's news."""

from __future__ import annotations

from typing import Any

from django.db.models import F, Q

from accounts.models import AgentConnection, Workspace
from issues.access import access_issue
from issues.models import Issue


def issue_for_maintainer(*, workspace: Workspace | int, issue_id: Any) -> Issue:
    """One issue received by `workspace`, with its thread and links; not_found outside it."""
    issue = access_issue(workspace, issue_id)
    return (
        Issue.objects.select_related("duplicate_of", "reporter_workspace", "reporter_connection")
        .prefetch_related("messages", "links")
        .get(pk=issue.pk)
    )


def news_for_connection(*, connection: AgentConnection) -> list[Issue]:
    """Issues this connection filed on which maintainers acted since its last get_issue_status."""
    return list(
        Issue.objects.filter(reporter_connection=connection, maintainer_activity_at__isnull=False)
        .filter(Q(reporter_read_at__isnull=True) | Q(maintainer_activity_at__gt=F("reporter_read_at")))
        .order_by("maintainer_activity_at", "pk")
    )
