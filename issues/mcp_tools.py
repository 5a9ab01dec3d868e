"""The issue MCP tools: thin adapters over issues.services and the triage selectors.

The reporter is the calling connection (weft.mcp.server.call_as_connection); the receiving
workspace is decided by issues/services/intake.py, never taken on trust from an argument.
triage_issue and list_issues are the maintainers' side: a connection of the receiving workspace
whose user is an owner or admin there (issues/services/maintainer.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from accounts.models import AgentConnection
from boards.mcp_tools import HintedOutput
from issues import limits, selectors_triage, services
from issues.services.maintainer import Triage, issue_triage
from weft.mcp.server import call_as_connection

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

IssueId = Annotated[int, Field(ge=1, le=limits.ID_MAX, description="The issue's id.")]
GitSha = Annotated[
    str | None,
    Field(max_length=limits.GIT_SHA, description="Commit you ran (git rev-parse HEAD); may add @branch."),
]
AppVersion = Annotated[
    str | None, Field(max_length=limits.APP_VERSION, description="Version you ran, e.g. 1.4.2.")
]


async def submit_issue(
    title: Annotated[str, Field(min_length=1, max_length=limits.TITLE, description="One line.")],
    body: Annotated[
        str, Field(min_length=1, max_length=limits.BODY, description="What happened, expected, steps.")
    ],
    kind: Annotated[Literal["bug", "performance", "enhancement"], Field(description="What it is.")],
    reporter_git_sha: GitSha = None,
    reporter_app_version: AppVersion = None,
    entity_ids_to_link: Annotated[
        list[Annotated[str, Field(max_length=limits.LINK_ID)]] | None,
        Field(max_length=limits.LINKS, description="kind:id of tasks, runs, boards, issues: task:12."),
    ] = None,
    workspace: Annotated[
        str | None,
        Field(max_length=limits.WORKSPACE_SLUG, description="Slug of a workspace open to issues."),
    ] = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Report a bug, performance problem or enhancement; name the build you ran. Personal data is
    redacted. Returns the issue id and a guest read token (shown once)."""
    call = services.Submission(
        title=title,
        body=body,
        kind=kind,
        reporter_git_sha=reporter_git_sha,
        reporter_app_version=reporter_app_version,
        entity_ids_to_link=entity_ids_to_link,
        workspace=workspace,
    )
    return await call_as_connection(lambda c: services.issue_submit(connection=c, call=call))


async def add_issue_message(
    id: IssueId,
    body: Annotated[str, Field(min_length=1, max_length=limits.MESSAGE, description="The detail.")],
    reporter_git_sha: GitSha = None,
    reporter_app_version: AppVersion = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Add detail to an issue your workspace filed (redacted like the issue)."""

    def run(c: AgentConnection) -> Any:
        return services.issue_message_add(
            connection=c,
            issue_id=id,
            body=body,
            reporter_git_sha=reporter_git_sha,
            reporter_app_version=reporter_app_version,
        )

    return await call_as_connection(run)


async def get_issue_status(
    id: IssueId,
    guest_token: Annotated[
        str | None, Field(max_length=limits.GUEST_TOKEN, description="guestToken from submit_issue.")
    ] = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """An issue's status, thread, resolution and upstream link."""
    return await call_as_connection(
        lambda c: services.issue_status_read(connection=c, issue_id=id, guest_token=guest_token)
    )


async def triage_issue(
    id: IssueId,
    action: Annotated[
        Literal["reply", "ask", "resolve", "close", "duplicate", "make_task", "status"],
        Field(description="ask: a question, waits for the reporter. make_task: a task to review."),
    ],
    body: Annotated[
        str | None,
        Field(max_length=limits.MESSAGE, description="reply/ask text, resolution, or the task's title."),
    ] = None,
    duplicateOf: Annotated[int | None, Field(ge=1, le=limits.ID_MAX, description="The original.")] = None,
    boardId: Annotated[int | None, Field(ge=1, le=limits.ID_MAX, description="make_task's board.")] = None,
    status: Annotated[
        Literal["open", "triaged", "waiting_input", "in_progress", "closed"] | None,
        Field(description="For action status."),
    ] = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Maintainers (owners' and admins' agents): act on an issue your workspace received."""
    call = Triage(action=action, body=body, duplicate_of=duplicateOf, board_id=boardId, status=status)
    return await call_as_connection(lambda c: issue_triage(connection=c, issue_id=id, call=call))


async def list_issues(
    status: Annotated[
        Literal["open", "triaged", "waiting_input", "in_progress", "resolved", "closed", "duplicate"] | None,
        Field(description="Only this status."),
    ] = None,
    kind: Annotated[
        Literal["bug", "performance", "enhancement"] | None, Field(description="Only this kind.")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=selectors_triage.LIST_LIMIT, description="At most.")] = 20,
) -> Annotated[CallToolResult, HintedOutput]:
    """Maintainers: the issues your workspace received, newest first."""
    return await call_as_connection(
        lambda c: selectors_triage.issues_for_agent(
            connection=c, status=status or "", kind=kind or "", limit=limit
        )
    )


def _annotations(*, read_only: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only, destructive_hint=False, idempotent_hint=read_only, open_world_hint=False
    )


TOOLS: list[tuple[Any, ToolAnnotations]] = [
    (submit_issue, _annotations(read_only=False)),
    (add_issue_message, _annotations(read_only=False)),
    (get_issue_status, _annotations(read_only=True)),
    (triage_issue, _annotations(read_only=False)),
    (list_issues, _annotations(read_only=True)),
]


def register(server: MCPServer) -> None:
    for fn, hints in TOOLS:
        server.add_tool(fn, name=fn.__name__, annotations=hints, structured_output=True)
