"""Property-based fuzz test of every MCP tool: whatever the arguments, the answer keeps the contract.

Arguments come from each tool's `inputSchema` in tools/list (tests/mcp/fuzz_strategies.py): valid
shapes from hypothesis-jsonschema mixed with NUL and control characters, strings up to a million
characters, integers at and past every bound and at the 32/64-bit edges, 1e999, extreme and broken
dates, wrong types, missing required fields, extra fields, and real ids from the seeded workspace
(its tasks, a foreign workspace's task, a live runId and leaseToken from start_task).

The property, after every call: the JSON-RPC answer is a `result` with `structuredContent` that
keeps the hint contract (weft.hints.problems finds nothing); an error names its code and ends with
`Fix:` or `Wait:`; and then get_board_state {} and get_my_work {} still succeed and the board and
Inbox pages still answer 200. The one JSON-RPC `error` accepted is -32602 (invalid params) for an
`arguments` value that is not a JSON object at all: that request is malformed below the tool layer,
and MCP leaves it to the protocol.

CI runs a fixed, bounded budget: derandomized, WEFT_FUZZ_EXAMPLES examples (default 150, about a
minute on two cores), no shrinking, so a failure costs no extra time and its message names the
exact call and answer. `make fuzz` raises the count and turns shrinking on (WEFT_FUZZ_SHRINK=1);
WEFT_FUZZ_SEED=N explores a different sequence. Runs on PostgreSQL only (on_postgres).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from django.test import Client
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from accounts.models import AgentConnection, Plan, User, Workspace
from boards.models import Column, InboxItem, InboxState, Run, RunState, Task
from boards.services import inbox_decide, task_claim, task_create, task_move, task_trash
from tests.mcp.fuzz_strategies import NotAnObject, Real, arguments, dumps, short
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.hints import problems

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = int(os.environ.get("WEFT_FUZZ_EXAMPLES", "150"))
SHRINK = os.environ.get("WEFT_FUZZ_SHRINK") == "1"
# CI is derandomized (the same examples every run); WEFT_FUZZ_SEED=N explores another sequence.
SEED = os.environ.get("WEFT_FUZZ_SEED")
NO_RUN = "00000000-0000-4000-8000-000000000000"
LIVE = (RunState.ACTIVE, RunState.WAITING_INPUT)


@dataclass
class Answer:
    status: int
    body: Any
    text: str

    @property
    def result(self) -> dict[str, Any] | None:
        return self.body.get("result") if isinstance(self.body, dict) else None


@dataclass
class World:
    """The seeded workspace, an agent's MCP session in one event loop, and alice's browser."""

    loop: asyncio.AbstractEventLoop
    mcp: MCP
    browser: Client
    workspace: Workspace
    alice: User
    connection: AgentConnection
    tools: list[dict[str, Any]]
    foreign_task_id: int
    other_lease: tuple[str, str]
    lease: tuple[str, str] | None = None
    old_leases: list[tuple[str, str]] = field(default_factory=list)

    def post(self, name: str, arguments: Any) -> Answer:
        if isinstance(arguments, NotAnObject):
            arguments = arguments.value
        self.mcp._id += 1
        params = {"name": name, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": self.mcp._id, "method": "tools/call", "params": params}
        response = self.loop.run_until_complete(
            self.mcp.client.post("/api/mcp", content=dumps(body), headers=self.mcp.headers())
        )
        try:
            data = response.json()
        except ValueError:
            data = None
        return Answer(response.status_code, data, response.text)

    def fresh_lease(self) -> tuple[str, str] | None:
        """A live runId and leaseToken of this agent: the one it holds, or a new claim."""
        if self.lease and Run.objects.filter(run_id=self.lease[0], state__in=LIVE).exists():
            return self.lease
        if self.lease:
            self.old_leases.append(self.lease)
            self.lease = None
        for attempt in range(2):
            task = (
                Task.objects.filter(workspace=self.workspace, column=Column.TODO)
                .exclude(runs__state__in=LIVE)
                .order_by("-pk")
                .first()
            )
            if task is None:
                task = task_create(workspace=self.workspace, title="Fuzz a lease", by_user=self.alice).task
            answer = self.post("start_task", {"id": task.pk})
            structured = (answer.result or {}).get("structuredContent") or {}
            if structured.get("leaseToken"):
                self.lease = (structured["runId"], structured["leaseToken"])
                return self.lease
            if attempt == 0:
                self.clear_inbox()
        return None

    def clear_inbox(self) -> None:
        """Alice drops what waits on her, so attention_queue_full does not end the exploration."""
        for item in InboxItem.objects.filter(
            workspace=self.workspace, state__in=[InboxState.OPEN, InboxState.SNOOZED]
        ):
            with contextlib.suppress(Exception):
                inbox_decide(item=item, user=self.alice, decision="drop")

    def real(self, tool: dict[str, Any]) -> Real:
        run_ids = [NO_RUN, self.other_lease[0], "not-a-uuid"]
        tokens = [self.other_lease[1], "x"]
        lease = None
        if "runId" in tool["inputSchema"].get("properties", {}):
            lease = self.fresh_lease()
            if lease:
                run_ids += [lease[0]] * 3
                tokens += [lease[1]] * 3
        for run_id, token in self.old_leases[-3:]:
            run_ids.append(run_id)
            tokens.append(token)
        task_ids = list(
            Task.objects.filter(workspace=self.workspace).order_by("-pk").values_list("pk", flat=True)[:12]
        )
        boards = list(self.workspace.boards.values_list("pk", flat=True))
        return Real(
            task_ids=task_ids,
            foreign_task_ids=[self.foreign_task_id],
            board_ids=boards,
            run_ids=run_ids,
            lease_tokens=tokens,
            lease=lease,
        )


def answer_problems(name: str, arguments: Any, answer: Answer) -> list[str]:
    """How one tools/call answer breaks the contract; empty when it keeps it."""
    if answer.status == 413 and isinstance(answer.body, dict) and "error" in answer.body:
        # A body over the transport's limit never reaches a tool: a coded refusal with its hint.
        error = answer.body["error"]
        data = error.get("data") or {}
        if (data.get("error") or {}).get("code") != "invalid_argument":
            return [f"HTTP 413 without invalid_argument: {answer.text[:300]!r}"]
        return problems(error.get("message", ""), data)
    if answer.status != 200:
        return [f"HTTP {answer.status}: {answer.text[:300]!r}"]
    if not isinstance(answer.body, dict):
        return [f"not JSON: {answer.text[:300]!r}"]
    if "error" in answer.body:
        # Protocol level: `arguments` that is not an object never reaches a tool.
        if isinstance(arguments, NotAnObject) and answer.body["error"].get("code") == -32602:
            return []
        return [f"JSON-RPC error {answer.body['error']}"]
    result = answer.result
    if not isinstance(result, dict):
        return [f"no result: {answer.text[:300]!r}"]
    structured = result.get("structuredContent")
    text = text_of(result)
    if structured is None:
        return [f"no structuredContent; text {text[:300]!r}"]
    found = problems(text, structured)
    if result.get("isError"):
        code = (structured.get("error") or {}).get("code")
        if not code:
            found.append("error without error.code")
        if not str(structured.get("_next_action") or "").startswith(("Fix:", "Wait:")):
            found.append(f"error whose _next_action is {structured.get('_next_action')!r}")
        if "Error: " not in text:
            found.append("error text without an Error: line")
    return found


def still_answers(world: World) -> list[str]:
    """get_board_state {}, get_my_work {} and alice's board and Inbox pages after the call."""
    found = []
    for name in ("get_board_state", "get_my_work"):
        answer = world.post(name, {})
        result = answer.result or {}
        broken = answer_problems(name, {}, answer)
        if result.get("isError"):
            broken.append(f"isError: {text_of(result)[:300]!r}")
        found += [f"then {name} {{}}: {p}" for p in broken]
    slug = world.workspace.slug
    for page in (f"/w/{slug}/board/", f"/w/{slug}/inbox/"):
        try:
            status = world.browser.get(page).status_code
        except Exception as exc:  # the test client re-raises a view's exception
            found.append(f"then GET {page}: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        if status != 200:
            found.append(f"then GET {page}: HTTP {status}")
    return found


def describe(name: str, arguments: Any, answer: Answer) -> str:
    result = answer.result
    shown = text_of(result) if isinstance(result, dict) and "content" in result else answer.text
    code = None
    if isinstance(result, dict):
        code = ((result.get("structuredContent") or {}).get("error") or {}).get("code")
    flag = (result or {}).get("isError")
    return f"{name} {short(arguments)}\n  -> isError={flag} code={code} text={shown[:400]!r}"


def check(world: World, name: str, arguments: Any) -> list[str]:
    """One fuzzed call and the property after it: every way it fails, each with the call."""
    answer = world.post(name, arguments)
    found = answer_problems(name, arguments, answer) + still_answers(world)
    return [f"{problem}\n  call: {describe(name, arguments, answer)}" for problem in found]


def _seed(alice: User, ws: Workspace, carol: User, ws_b: Workspace) -> int:
    """Tasks in every column of workspace A, one held by another agent; a task in workspace B."""
    ws.plan = Plan.named(Plan.PRO)
    ws.save(update_fields=["plan"])
    for title, column in [
        ("Write the release notes", Column.BACKLOG),
        ("Fix the login redirect", Column.TODO),
        ("Rotate the API keys", Column.TODO),
        ("Ship the onboarding email", Column.DONE),
    ]:
        task_create(workspace=ws, title=title, description=f"{title}.", column=column, by_user=alice)
    dropped = task_create(workspace=ws, title="Old experiment", by_user=alice).task
    task_move(task=dropped, column=Column.DROPPED, by_user=alice)
    task_create(workspace=ws, title="Review the pricing page", review_required=True, by_user=alice)
    task_create(workspace=ws, title="Migrate the cron jobs", by_user=alice)
    doing = task_create(workspace=ws, title="Pair on the parser", by_user=alice).task
    task_claim(task_id=doing.pk, user=alice, workspace=ws)
    trashed = task_create(workspace=ws, title="Spam", by_user=alice).task
    task_trash(task=trashed, by_user=alice)
    return task_create(workspace=ws_b, title="Carol's secret", by_user=carol).task.pk


@pytest.fixture
def world(on_postgres: None, alice: User, ws_a: Workspace, carol: User, ws_b: Workspace) -> Iterator[World]:
    foreign_id = _seed(alice, ws_a, carol, ws_b)
    token, connection = agent_token(alice, ws_a, name="Fuzzer")
    other_token, _ = agent_token(alice, ws_a, name="Other agent")
    browser = Client()
    browser.force_login(alice)
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    try:
        client: httpx.AsyncClient = loop.run_until_complete(stack.enter_async_context(in_process()))
        mcp = MCP(client, token)
        tools = loop.run_until_complete(mcp.tools())
        other = MCP(client, other_token)
        held = Task.objects.get(workspace=ws_a, title="Migrate the cron jobs")
        claim = loop.run_until_complete(other.call("start_task", {"id": held.pk}))["structuredContent"]
        yield World(
            loop=loop,
            mcp=mcp,
            browser=browser,
            workspace=ws_a,
            alice=alice,
            connection=connection,
            tools=tools,
            foreign_task_id=foreign_id,
            other_lease=(claim["runId"], claim["leaseToken"]),
        )
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()


PHASES = [Phase.explicit, Phase.generate, *([Phase.shrink] if SHRINK else [])]


@settings(
    max_examples=EXAMPLES,
    derandomize=SEED is None,
    database=None,
    deadline=None,
    phases=PHASES,
    print_blob=False,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
@seed(int(SEED or 0))
@given(data=st.data())
def test_it_keeps_the_contract_for_any_arguments_to_any_tool(world: World, data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(world.tools), label="tool")
    args = data.draw(arguments(tool, world.real(tool)), label="arguments")
    failures = check(world, tool["name"], args)
    assert not failures, "\n".join(failures)
