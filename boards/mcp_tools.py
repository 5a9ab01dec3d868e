"""The board's MCP tools: thin adapters over boards.services and boards.selectors.

Each tool parses its arguments (the SDK validates them against the signature), lets
weft.mcp.server.call_as_connection resolve the caller's connection, check the workspace and
meter the call, calls one service or selector, and renders the result with its hint. The
tenant always comes from the connection, never from an argument.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from accounts.models import AgentConnection
from boards import limits, selectors, services
from boards.access import access_board, access_task
from weft.hints import DONE
from weft.mcp.server import call_as_connection, success_result

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


class HintedOutput(BaseModel):
    """Every tool's structuredContent: the result's payload plus its next action."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    next_action: str | None = Field(
        alias="_next_action",
        description="The one next action: a `Next:`, `Wait:`, `Fix:` line or `Done.`; run it as written.",
    )
    or_action: str | None = Field(
        default=None, alias="_or_action", description="The fallback `Or:` line, beside a Next: only."
    )


class ClaimOutput(HintedOutput):
    runId: str | None = Field(default=None, description="The run this claim started (or the live one).")
    leaseToken: str | None = Field(default=None, description="Secret for lease-guarded calls; shown once.")
    leaseExpiresAt: str | None = Field(default=None, description="ISO 8601; renew before it passes.")
    renewEverySeconds: int | None = Field(default=None, description="Call report_progress this often.")
    epoch: int | None = Field(default=None, description="The task's fencing token for this claim.")


TaskId = Annotated[
    int,
    Field(ge=1, le=limits.ID_MAX, description="The task's id (get_my_work, get_board_state)."),
]
RunId = Annotated[
    str, Field(min_length=1, max_length=limits.RUN_ID, description="runId returned by start_task.")
]
LeaseToken = Annotated[
    str,
    Field(
        min_length=1,
        max_length=limits.LEASE_TOKEN,
        description="leaseToken returned by start_task (the same for the whole run; get_my_work lists it).",
    ),
]


def _due_in_range(value: datetime | None) -> datetime | None:
    """Due dates every reader can show (boards/limits.py); a naive value is read as UTC."""
    try:
        return limits.due("dueAt", value)
    except limits.LimitError as error:
        raise ValueError(error.reason) from None


DueAt = Annotated[
    datetime | None,
    AfterValidator(_due_in_range),
    Field(
        description=f"ISO 8601 due date and time, {limits.DUE_MIN.year} to {limits.DUE_MAX.year - 1} (UTC);"
        " without an offset it is read as UTC."
    ),
]


class Artifact(BaseModel):
    """The artifact shape a person can check; anything else is kept, marked unverifiable."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["url", "commit", "file", "pr"] = Field(description="What the artifact is.")
    uri: str = Field(
        max_length=limits.URI, description="Where a person can check it without trusting the agent."
    )
    httpStatus: int | None = Field(default=None, description="HTTP status you observed for a url.")
    sha256: str | None = Field(default=None, description="Content hash for a file (64 hex characters).")


def _evidence(description: str) -> Any:
    """A list of statements; a wrong-typed item is kept, marked unverifiable, never refused."""
    return Field(
        description=f"{description} At most {limits.EVIDENCE_ITEMS} items of at most"
        f" {limits.EVIDENCE_ITEM} characters; an item that is not a string is kept, marked unverifiable.",
        json_schema_extra={
            "type": "array",
            "maxItems": limits.EVIDENCE_ITEMS,
            "items": {"type": "string", "maxLength": limits.EVIDENCE_ITEM},
        },
    )


StartNext = Annotated[bool, Field(description="Then start your next task; `next` holds start_task's answer.")]


READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _writes(*, idempotent: bool, destructive: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


async def get_my_work() -> Annotated[CallToolResult, HintedOutput]:
    """Start here. Your runs and their lease expiry, what waits on a person for you, answers and
    approvals to deliver, overdue and due-soon tasks, room to start (`capacity`), the best next task."""
    return await call_as_connection(lambda c: services.work_for_connection(connection=c))


async def start_task(id: TaskId) -> Annotated[CallToolResult, ClaimOutput]:
    """Claim a task with a 20-minute lease (to Doing): runId, leaseToken, renewEverySeconds,
    leaseExpiresAt and the task's context (notes, rework notes, approved step, answers). Starting a
    task you hold returns your live run. Refusals (already_claimed, attention_queue_full) are normal
    answers: follow their Wait:/Fix: line."""
    return await call_as_connection(
        lambda c: services.task_claim(task_id=id, connection=c),
        fast=lambda c: services.task_claim_in_loop(task_id=id, connection=c),
    )


async def report_progress(
    runId: RunId,
    leaseToken: LeaseToken,
    note: Annotated[
        str,
        Field(
            max_length=limits.NOTE,
            description=f"What you did since the last report, in a sentence or two (at most {limits.NOTE}).",
        ),
    ],
    status: Annotated[
        str | None, Field(max_length=limits.STATUS, description="Optional short status label.")
    ] = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Heartbeat: record progress and renew the lease to now + 20 minutes. Call at least every 5 minutes
    while you work. A stale, released or superseded lease answers lease_lost."""
    return await call_as_connection(
        lambda c: services.run_heartbeat(
            workspace=c.workspace, run_id=runId, lease_token=leaseToken, note=note, status=status
        )
    )


async def request_input(
    runId: RunId,
    leaseToken: LeaseToken,
    question: Annotated[
        str,
        Field(
            min_length=1,
            max_length=limits.QUESTION,
            description=f"The decision a person must make (at most {limits.QUESTION} characters).",
        ),
    ],
    options: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=limits.OPTION)]] | None,
        Field(
            max_length=limits.OPTIONS,
            description=f"Up to {limits.OPTIONS} answers of at most {limits.OPTION} characters to pick from;"
            " free text is always allowed.",
        ),
    ] = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Ask a person for a decision only they can make (to their Inbox). Your claim holds 60 minutes
    without heartbeats; the answer comes with get_my_work or start_task."""
    return await call_as_connection(
        lambda c: services.run_request_input(
            workspace=c.workspace, run_id=runId, lease_token=leaseToken, question=question, options=options
        )
    )


async def complete_task(
    runId: RunId,
    leaseToken: LeaseToken,
    outcome: Annotated[
        str,
        Field(
            min_length=1,
            max_length=limits.OUTCOME,
            description=f"What is now true, in a few sentences (at most {limits.OUTCOME} characters).",
        ),
    ],
    artifacts: Annotated[
        list[Artifact | Any] | None,
        Field(
            max_length=limits.ARTIFACTS,
            description=f"Up to {limits.ARTIFACTS} things a person can check (url, commit, file, pr);"
            " another shape is kept, unverifiable, and sends the task to a person.",
        ),
    ] = None,
    claims: Annotated[Any, _evidence("Statements you verified.")] = None,
    notDone: Annotated[Any, _evidence("What you did not do.")] = None,
    unknowns: Annotated[Any, _evidence("What you are unsure of.")] = None,
    nextStep: Annotated[
        str,
        Field(
            max_length=limits.NEXT_STEP,
            description="The one follow-up step you propose; accepting the review approves exactly it.",
        ),
    ] = "",
    startNext: StartNext = False,
) -> Annotated[CallToolResult, HintedOutput]:
    """Finish with a report. Evidence that cannot be checked is kept as unverifiable (notAccepted) and
    the task goes to a person. Done, or the Inbox when it needs review (review_required, a failed
    check, unverifiable evidence); an approved nextStep comes back through get_my_work."""
    report = {
        "run_id": runId,
        "lease_token": leaseToken,
        "outcome": outcome,
        "artifacts": _as_given(artifacts),
        "claims": claims,
        "not_done": notDone,
        "unknowns": unknowns,
        "next_step": nextStep,
    }
    return await call_as_connection(
        lambda c: services.run_complete(
            workspace=c.workspace, start_next_for=c if startNext else None, **report
        ),
        fast=lambda c: services.run_complete_in_loop(connection=c, start_next=startNext, **report),
    )


def _as_given(artifacts: list[Artifact | Any] | None) -> list[Any]:
    return [a.model_dump(exclude_none=True) if isinstance(a, Artifact) else a for a in artifacts or []]


async def release_task(
    runId: RunId,
    leaseToken: LeaseToken,
    reason: Annotated[
        str,
        Field(max_length=limits.REASON, description=f"Why you give the task back (at most {limits.REASON})."),
    ],
) -> Annotated[CallToolResult, HintedOutput]:
    """Give a task back on purpose: the lease ends and the task returns to Todo for anyone."""
    return await call_as_connection(
        lambda c: services.run_release(
            workspace=c.workspace, run_id=runId, lease_token=leaseToken, reason=reason
        )
    )


async def get_board_state(
    boardId: Annotated[
        int | None,
        Field(ge=1, le=limits.ID_MAX, description="A board's id; the first live board if omitted."),
    ] = None,
    cursor: Annotated[
        str | None,
        Field(max_length=limits.BOARD_CURSOR, description="A column's nextCursor: its next page."),
    ] = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """The board's columns (Backlog, Todo, Doing, Done), a page each: holders, leases, counts."""
    return await call_as_connection(
        lambda c: selectors.board_state(workspace=c.workspace, board_id=boardId, cursor=cursor)
    )


async def get_task(id: TaskId) -> Annotated[CallToolResult, HintedOutput]:
    """One task in full: description, checks, reports and the run timeline."""
    return await call_as_connection(lambda c: selectors.task_detail(workspace=c.workspace, task_id=id))


async def search(
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=limits.SEARCH_QUERY,
            description=f"Words to find in task titles and descriptions (at most {limits.SEARCH_QUERY}"
            f" characters; the first {limits.SEARCH_TERMS} words count).",
        ),
    ],
    limit: Annotated[int, Field(ge=1, le=limits.SEARCH_LIMIT, description="At most this many tasks.")] = 20,
) -> Annotated[CallToolResult, HintedOutput]:
    """Find tasks in this workspace by text."""
    return await call_as_connection(
        lambda c: selectors.search_tasks(workspace=c.workspace, query=query, limit=limit)
    )


Column = Literal["backlog", "todo", "done", "dropped"]
NewColumn = Literal["backlog", "todo"]
REVIEW_MINUTES = Field(
    ge=limits.REVIEW_MINUTES_MIN,
    le=limits.REVIEW_MINUTES_MAX,
    description="Minutes a person's review takes (agents may raise it, not lower it).",
)
ReviewMinutes = Annotated[int, REVIEW_MINUTES]
Priority = Annotated[int, Field(ge=0, le=3, description="0 low, 1 normal, 2 high, 3 urgent.")]
Labels = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=limits.LABEL_NAME)]] | None,
    Field(
        max_length=limits.TASK_LABELS,
        description="The workspace's label names (any case); they replace the task's labels, [] clears them.",
    ),
]


async def create_task(
    title: Annotated[
        str, Field(min_length=1, max_length=limits.TITLE, description="A short imperative title.")
    ],
    description: Annotated[
        str, Field(max_length=limits.DESCRIPTION, description="What done looks like.")
    ] = "",
    column: Annotated[NewColumn, Field(description="Where the task starts: backlog or todo.")] = "todo",
    priority: Priority = 1,
    dueAt: DueAt = None,
    reviewRequired: Annotated[
        bool, Field(description="Stop in the Inbox for a person on completion.")
    ] = False,
    estimatedReviewMinutes: ReviewMinutes = 5,
    boardId: Annotated[
        int | None, Field(ge=1, le=limits.ID_MAX, description="The board; the first board if omitted.")
    ] = None,
    labels: Labels = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Add a task to the board (counts against the plan's monthly tasks)."""

    def run(c: AgentConnection) -> Any:
        board = access_board(c.workspace, boardId) if boardId is not None else None
        return services.task_create(
            workspace=c.workspace,
            title=title,
            board=board,
            description=description,
            column=column,
            priority=priority,
            due_at=dueAt,
            review_required=reviewRequired,
            estimated_review_minutes=estimatedReviewMinutes,
            by_connection=c,
            labels=labels,
        )

    return await call_as_connection(run)


async def update_task(
    id: TaskId,
    title: Annotated[
        str | None, Field(min_length=1, max_length=limits.TITLE, description="New title.")
    ] = None,
    description: Annotated[
        str | None, Field(max_length=limits.DESCRIPTION, description="New description.")
    ] = None,
    priority: Annotated[
        int | None, Field(ge=0, le=3, description="0 low, 1 normal, 2 high, 3 urgent.")
    ] = None,
    dueAt: DueAt = None,
    reviewRequired: Annotated[
        bool | None,
        Field(description="Switch review on (only a person can switch it off)."),
    ] = None,
    estimatedReviewMinutes: Annotated[int | None, REVIEW_MINUTES] = None,
    column: Annotated[
        Column | None,
        Field(
            description="backlog or todo; done and dropped are a person's (forbidden), Doing start_task's."
        ),
    ] = None,
    labels: Labels = None,
) -> Annotated[CallToolResult, HintedOutput]:
    """Change a task's fields or move it between backlog and todo. A task waiting in the Inbox, review
    switched off, a lower estimate, done or dropped: forbidden to agents, with a Wait: line."""
    changes = _given(
        title=title,
        description=description,
        priority=priority,
        due_at=dueAt,
        review_required=reviewRequired,
        estimated_review_minutes=estimatedReviewMinutes,
        labels=labels,
    )
    return await call_as_connection(
        lambda c: services.task_edit(
            task=access_task(c.workspace, id), column=column, by_connection=c, **changes
        )
    )


def _given(**values: Any) -> dict[str, Any]:
    """The arguments an agent sent; an omitted (null) one leaves its field as it is."""
    return {name: value for name, value in values.items() if value is not None}


async def noop() -> Annotated[CallToolResult, HintedOutput]:
    """Benchmark baseline: the whole call path (auth, connection, metering) around no service."""
    return await call_as_connection(lambda c: success_result("Nothing done.", {}, DONE), in_loop=True)


TOOLS: list[tuple[Any, ToolAnnotations]] = [
    (get_my_work, READ_ONLY),
    (start_task, _writes(idempotent=True)),
    (report_progress, _writes(idempotent=False)),
    (request_input, _writes(idempotent=False)),
    (complete_task, _writes(idempotent=False)),
    (release_task, _writes(idempotent=False, destructive=True)),
    (get_board_state, READ_ONLY),
    (get_task, READ_ONLY),
    (search, READ_ONLY),
    (create_task, _writes(idempotent=False)),
    (update_task, _writes(idempotent=True, destructive=True)),
]


def register(server: MCPServer, *, with_noop: bool = False) -> None:
    """Register the board's tools (and the benchmark's no-op when asked)."""
    for fn, hints in TOOLS:
        server.add_tool(fn, name=fn.__name__, annotations=hints, structured_output=True)
    if with_noop:
        server.add_tool(noop, name="noop", annotations=READ_ONLY, structured_output=True)
