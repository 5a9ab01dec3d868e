"""The issue MCP tools: thin adapters over issues.services.

The reporter is the calling connection (weft.mcp.server.call_as_connection); the receiving
workspace is decided by issues/services/intake.py, never taken on trust from an argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from accounts.models import AgentConnection
from boards.mcp_tools import HintedOutput
from issues import limits, services
from weft.mcp.server import call_as_connection

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

IssueId = Annotated[int, Field(ge=1, le=limits.ID_MAX, description="The issue's id (from submit_issue).")]
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
    """Report a bug, performance problem or enhancement you noticed; name the build you ran.
    Personal data is redacted. Returns the issue id and a guest read token (shown once)."""
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


def _annotations(*, read_only: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only, destructive_hint=False, idempotent_hint=read_only, open_world_hint=False
    )


TOOLS: list[tuple[Any, ToolAnnotations]] = [
    (submit_issue, _annotations(read_only=False)),
    (add_issue_message, _annotations(read_only=False)),
    (get_issue_status, _annotations(read_only=True)),
]


def register(server: MCPServer) -> None:
    for fn, hints in TOOLS:
        server.add_tool(fn, name=fn.__name__, annotations=hints, structured_output=True)
