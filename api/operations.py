"""What each REST endpoint does: the tool it serves, how its arguments are checked, the one
service or selector it calls.

Arguments are checked by the MCP tool's own signature (the same limits, the same schema, the
same `Fix:` corrections), so REST and MCP refuse exactly the same calls. The few REST-only
reads (list_boards, list_tasks) and the move alias declare their signatures here the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from pydantic import Field

from accounts.access import access_deciding_person
from accounts.models import AgentConnection
from boards import limits, selectors, services
from boards.access import access_board, access_inbox_item, access_question, access_task
from boards.selectors import listing
from hooks import selectors as hook_selectors
from hooks import services as hook_services
from hooks.access import access_subscription
from issues import selectors_triage as issue_selectors
from issues import services as issue_services
from issues.services.maintainer import Triage, issue_triage

Runner = Callable[[AgentConnection, dict[str, Any]], Any]
BoardId = Annotated[
    int | None, Field(ge=1, le=limits.ID_MAX, description="A board's id; all boards if omitted.")
]


def list_boards() -> None:
    """The workspace's boards, oldest first."""


def list_tasks(
    boardId: BoardId = None,
    column: Annotated[
        Literal["backlog", "todo", "doing", "done", "dropped"] | None,
        Field(description="Only tasks in this column."),
    ] = None,
    priority: Annotated[int | None, Field(ge=0, le=3, description="Only tasks of this priority.")] = None,
    cursor: Annotated[
        str | None, Field(max_length=listing.CURSOR_MAX, description="nextCursor of the page before.")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=listing.PAGE_MAX, description="At most this many tasks.")] = 50,
) -> None:
    """The workspace's tasks (trash aside), oldest first, a page at a time."""


def move_task(
    id: Annotated[int, Field(ge=1, le=limits.ID_MAX, description="The task's id.")],
    column: Annotated[
        Literal["backlog", "todo", "done", "dropped"],
        Field(description="Where the task goes (agents: backlog or todo)."),
    ],
) -> None:
    """Move a task between backlog and todo (update_task with only a column)."""


def list_inbox() -> None:
    """The Inbox of the token's person: reviews and questions waiting, then those snoozed."""


def decide_inbox_item(
    id: Annotated[int, Field(ge=1, le=limits.ID_MAX, description="The Inbox item's id.")],
    decision: Annotated[
        Literal["accept", "rework", "later", "drop"],
        Field(description="accept (approving its next step), rework (with a note), later, drop."),
    ],
    note: Annotated[
        str, Field(max_length=limits.PERSON_NOTE, description="What to change, for rework.")
    ] = "",
    snoozeUntil: Annotated[
        datetime | None, Field(description="When a later item comes back (default: in 24 hours).")
    ] = None,
) -> None:
    """Decide a review as the token's person; a question item may be snoozed (later) or dropped."""


def answer_question(
    id: Annotated[int, Field(ge=1, le=limits.ID_MAX, description="The question's id.")],
    answer: Annotated[
        str, Field(min_length=1, max_length=limits.PERSON_NOTE, description="The answer the agent gets.")
    ],
) -> None:
    """Answer an agent's question as the token's person; the agent gets it on its next call."""


@functools.cache
def tools() -> dict[str, Tool]:
    """Every tool's signature: the MCP server's tools and the REST-only ones."""
    from weft.mcp.server import build_server

    found = {tool.name: tool for tool in build_server()._tool_manager.list_tools()}
    extra = MCPServer(name="Weft REST")
    for fn in (list_boards, list_tasks, move_task, list_inbox, decide_inbox_item, answer_question):
        extra.add_tool(fn, name=fn.__name__, structured_output=False)
    found.update({tool.name: tool for tool in extra._tool_manager.list_tools()})
    return found


def _given(args: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The service's keyword arguments for the tool arguments that were sent (not null)."""
    return {names[k]: v for k, v in args.items() if k in names and v is not None}


UPDATABLE = {
    "title": "title",
    "description": "description",
    "priority": "priority",
    "dueAt": "due_at",
    "reviewRequired": "review_required",
    "estimatedReviewMinutes": "estimated_review_minutes",
    "labels": "labels",
}
CREATABLE = {**UPDATABLE, "column": "column"}
LEASED = {"runId": "run_id", "leaseToken": "lease_token"}


def _leased(service: Callable[..., Any], **names: str) -> Runner:
    """A lease-guarded write: the run id and lease token, plus the tool's other arguments."""
    return lambda c, a: service(workspace=c.workspace, **_given(a, {**LEASED, **names}))


def _create_task(c: AgentConnection, a: dict[str, Any]) -> Any:
    board = access_board(c.workspace, a["boardId"]) if a.get("boardId") is not None else None
    return services.task_create(workspace=c.workspace, board=board, by_connection=c, **_given(a, CREATABLE))


def _complete(c: AgentConnection, a: dict[str, Any]) -> Any:
    artifacts = [
        x.model_dump(exclude_none=True) if hasattr(x, "model_dump") else x for x in a.get("artifacts") or []
    ]
    names = {"outcome": "outcome", "claims": "claims", "notDone": "not_done", "unknowns": "unknowns"}
    return services.run_complete(
        workspace=c.workspace,
        artifacts=artifacts,
        next_step=a.get("nextStep") or "",
        start_next_for=c if a.get("startNext") else None,
        **_given(a, {**LEASED, **names}),
    )


def _subscribe(c: AgentConnection, a: dict[str, Any]) -> Any:
    names = {"url": "url", "eventTypes": "event_types", "entityType": "entity_type", "entityId": "entity_id"}
    return hook_services.subscription_create(workspace=c.workspace, by_connection=c, **_given(a, names))


PROVENANCE = {"reporter_git_sha": "reporter_git_sha", "reporter_app_version": "reporter_app_version"}


def _submit_issue(c: AgentConnection, a: dict[str, Any]) -> Any:
    optional = (*PROVENANCE, "entity_ids_to_link", "workspace")
    call = issue_services.Submission(
        title=a["title"], body=a["body"], kind=a["kind"], **{k: a.get(k) for k in optional}
    )
    return issue_services.issue_submit(connection=c, call=call)


def _triage_issue(c: AgentConnection, a: dict[str, Any]) -> Any:
    names = {"body": "body", "duplicateOf": "duplicate_of", "boardId": "board_id", "status": "status"}
    call = Triage(action=a["action"], **_given(a, names))
    return issue_triage(connection=c, issue_id=a["id"], call=call)


def _decide(c: AgentConnection, a: dict[str, Any]) -> Any:
    person = access_deciding_person(c)
    return services.inbox_decide(
        item=access_inbox_item(c.workspace, a["id"]),
        user=person,
        decision=a["decision"],
        note=a.get("note") or "",
        snooze_until=a.get("snoozeUntil"),
    )


def _answer(c: AgentConnection, a: dict[str, Any]) -> Any:
    person = access_deciding_person(c)
    question = access_question(c.workspace, a["id"])
    return services.question_answer(question=question, user=person, answer=a["answer"])


RUNNERS: dict[str, Runner] = {
    "get_my_work": lambda c, a: services.work_for_connection(connection=c),
    "list_boards": lambda c, a: listing.boards_list(workspace=c.workspace),
    "get_board_state": lambda c, a: selectors.board_state(
        workspace=c.workspace, board_id=a.get("boardId"), cursor=a.get("cursor")
    ),
    "list_tasks": lambda c, a: listing.tasks_page(workspace=c.workspace, **a),
    "create_task": _create_task,
    "search": lambda c, a: selectors.search_tasks(workspace=c.workspace, query=a["query"], limit=a["limit"]),
    "get_task": lambda c, a: selectors.task_detail(workspace=c.workspace, task_id=a["id"]),
    "update_task": lambda c, a: services.task_edit(
        task=access_task(c.workspace, a["id"]),
        column=a.get("column"),
        by_connection=c,
        **_given(a, UPDATABLE),
    ),
    "move_task": lambda c, a: services.task_edit(
        task=access_task(c.workspace, a["id"]), column=a["column"], by_connection=c
    ),
    "start_task": lambda c, a: services.task_claim(task_id=a["id"], connection=c),
    "report_progress": _leased(services.run_heartbeat, note="note", status="status"),
    "request_input": _leased(services.run_request_input, question="question", options="options"),
    "complete_task": _complete,
    "release_task": _leased(services.run_release, reason="reason"),
    "list_subscriptions": lambda c, a: hook_selectors.subscriptions_list(
        workspace=c.workspace, by_connection=c
    ),
    "subscribe": _subscribe,
    "unsubscribe": lambda c, a: hook_services.subscription_delete(
        subscription=access_subscription(c.workspace, a["id"]), by_connection=c
    ),
    "submit_issue": _submit_issue,
    "get_issue_status": lambda c, a: issue_services.issue_status_read(
        connection=c, issue_id=a["id"], guest_token=a.get("guest_token")
    ),
    "add_issue_message": lambda c, a: issue_services.issue_message_add(
        connection=c, issue_id=a["id"], body=a["body"], **_given(a, PROVENANCE)
    ),
    "list_issues": lambda c, a: issue_selectors.issues_for_agent(
        connection=c, status=a.get("status") or "", kind=a.get("kind") or "", limit=a["limit"]
    ),
    "triage_issue": _triage_issue,
    "list_inbox": lambda c, a: selectors.inbox_for_person(
        workspace=c.workspace, user=access_deciding_person(c)
    ),
    "decide_inbox_item": _decide,
    "answer_question": _answer,
}


@dataclass(frozen=True)
class Operation:
    tool: Tool
    run: Runner
    created: bool


CREATES = frozenset({"create_task", "subscribe", "submit_issue", "add_issue_message"})


def operation(name: str) -> Operation:
    return Operation(tool=tools()[name], run=RUNNERS[name], created=name in CREATES)
