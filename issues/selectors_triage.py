"""Reads of the web triage: the filtered list, one issue's page, and what its forms offer.

A link's target is read only through the receiving workspace's access helpers: a target there
is shown with its title and page; one elsewhere (the reporter's workspace) only as a reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet

from accounts.models import AgentConnection, Workspace
from boards.access import access_board, access_task
from boards.models import Board
from boards.selectors import boards_of
from issues.access import access_issue, require_maintainer
from issues.models import FINAL_STATUSES, Issue, IssueLink, IssueMessage, LinkTarget
from issues.results import IssueList
from issues.selectors import issue_for_maintainer
from issues.services.common import UNKNOWN_BUILD
from weft.errors import WeftError

LIST_LIMIT = 200


@dataclass(frozen=True)
class TriageFilter:
    kind: str = ""
    status: str = ""
    environment: str = ""
    # "yes": the reporter named a build; "no": it did not (or said it is unknown); "": either.
    has_build: str = ""


def named_build() -> Q:
    """The issue names the build it was seen on (a git sha other than "unknown", or an app version)."""
    sha = ~Q(reporter_git_sha="") & ~Q(reporter_git_sha=UNKNOWN_BUILD)
    return sha | ~Q(reporter_app_version="")


def issues_for_triage(*, workspace: Workspace, filters: TriageFilter) -> QuerySet[Issue]:
    """The issues `workspace` received, newest first, narrowed by the filters."""
    issues = Issue.objects.filter(workspace=workspace).select_related("reporter_workspace")
    if filters.kind:
        issues = issues.filter(kind=filters.kind)
    if filters.status:
        issues = issues.filter(status=filters.status)
    if filters.environment:
        issues = issues.filter(environment_class=filters.environment)
    if filters.has_build == "yes":
        issues = issues.filter(named_build())
    elif filters.has_build == "no":
        issues = issues.exclude(named_build())
    return issues.order_by("-created_at", "-pk")[:LIST_LIMIT]


def issues_for_agent(
    *, connection: AgentConnection, status: str = "", kind: str = "", limit: int
) -> IssueList:
    """list_issues: a maintainer's agent's view of the triage list (owners' and admins' agents only)."""
    require_maintainer(connection)
    filters = TriageFilter(kind=kind or "", status=status or "")
    return IssueList(issues=list(issues_for_triage(workspace=connection.workspace, filters=filters)[:limit]))


@dataclass(frozen=True)
class LinkView:
    """One REFERS_TO link as the triage shows it; `title` is None for a target outside the workspace."""

    kind: str
    ident: str
    title: str | None = None
    task_id: int | None = None
    board_id: int | None = None
    issue_id: int | None = None


def _visible(workspace: Workspace, link: IssueLink) -> LinkView:
    """The link through the workspace's access helpers; a not_found is shown as a bare reference."""
    try:
        if link.target_type == LinkTarget.TASK:
            task = access_task(workspace, link.task_id)
            return LinkView("task", str(task.pk), task.title, task_id=task.pk)
        if link.target_type == LinkTarget.BOARD:
            board = access_board(workspace, link.board_id)
            return LinkView("board", str(board.pk), board.name, board_id=board.pk)
        if link.target_type == LinkTarget.ISSUE:
            issue = access_issue(workspace, link.target_issue_id)
            return LinkView("issue", str(issue.pk), issue.title, issue_id=issue.pk)
        run = link.run
        if run is not None and run.workspace_id == workspace.pk:
            task = access_task(workspace, run.task_id)
            return LinkView("run", str(run.run_id), task.title, task_id=task.pk)
    except WeftError as error:
        if error.code != "not_found":
            raise
    return LinkView(link.target_type, _reference(link))


def _reference(link: IssueLink) -> str:
    if link.target_type == LinkTarget.RUN:
        return str(link.run.run_id) if link.run is not None else "?"
    ident = {"task": link.task_id, "board": link.board_id, "issue": link.target_issue_id}
    return str(ident.get(link.target_type, "?"))


@dataclass(frozen=True)
class TriagePage:
    issue: Issue
    messages: list[IssueMessage]
    links: list[LinkView]
    boards: list[Board]
    duplicate_choices: list[Issue] = field(default_factory=list)

    @property
    def is_final(self) -> bool:
        """Resolved, closed or a duplicate: the thread's outcome is set."""
        return self.issue.status in FINAL_STATUSES

    @property
    def build_missing(self) -> bool:
        """The report itself names no build (the reporter said unknown or the server found none)."""
        issue = self.issue
        return not issue.reporter_app_version and issue.reporter_git_sha in ("", UNKNOWN_BUILD)


def triage_page(*, workspace: Workspace, issue_id: Any) -> TriagePage:
    """One issue received by `workspace`, with its thread, its links as the workspace may see them,
    the boards a task can go to and the issues it can duplicate; not_found outside it."""
    issue = issue_for_maintainer(workspace=workspace, issue_id=issue_id)
    links = [_visible(workspace, link) for link in issue.links.select_related("run").order_by("pk")]
    others = Issue.objects.filter(workspace=workspace).exclude(pk=issue.pk).order_by("-created_at", "-pk")
    return TriagePage(
        issue=issue,
        messages=list(issue.messages.select_related("author_user").order_by("created_at", "pk")),
        links=links,
        boards=list(boards_of(workspace)),
        duplicate_choices=list(others[:LIST_LIMIT]),
    )
