"""The gate riding on start_task's claim and complete_task's completion (weft.mcp.gate.Riding).

One statement is then the gate and the tool's write. Every check the gate makes (tests/mcp/test_gate.py's
cases) must answer as the ORM path does, count the same usage, and — when it refuses — leave the
task, its runs, reports and events as they were: the write reads a `clock` that has no row for a
refused call. An argument the tool refuses before its statement still gets the gate's answer
first. A workspace the token names wrongly never gets the write: the ORM path then answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from mcp.types import CallToolResult

from accounts.models import AgentConnection, Usage, Workspace
from boards.models import Report, Run, Task
from boards.services import board_default, run_complete, run_complete_in_loop, task_claim, task_claim_in_loop
from tests.mcp.test_gate import CASES, _answer, _restore, _usage
from weft import relay_loop
from weft.mcp import gate, server
from weft.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]

GATE_CODES = {"unauthenticated", "workspace_suspended", "plan_limit_reached"}


def _code(result: CallToolResult) -> str:
    return str((result.structured_content or {}).get("error", {}).get("code", "ok"))


def _riding(
    fn: Callable[[Any], Any], fast: Any, connection_id: int | None, workspace_id: int
) -> CallToolResult:
    async def run() -> CallToolResult:
        try:
            result = await server._gated(
                fn, connection_id, in_loop=False, fast=fast, workspace_id=workspace_id
            )
            await relay_loop.settled()
            return result
        finally:
            await gate.close_pool()

    return asyncio.run(run())


def _task_state(task: Task) -> tuple[Any, ...]:
    row = Task.objects.filter(pk=task.pk).values_list("column", "epoch", "assignee_connection_id").first()
    runs = list(Run.objects.filter(task_id=task.pk).values_list("state", flat=True))
    reports = Report.objects.filter(task_id=task.pk).count()
    events = Event.objects.filter(payload__taskId=task.pk).count()
    return row, runs, reports, events


def _tasks(ws: Workspace, n: int) -> list[Task]:
    board = board_default(workspace=ws)
    return [Task.objects.create(workspace=ws, board=board, title=f"Task {i}") for i in range(n)]


def _compare(orm: CallToolResult, rode: CallToolResult) -> None:
    assert _code(rode) == _code(orm)
    if _code(orm) in GATE_CODES:
        assert _answer(rode) == _answer(orm)


@pytest.mark.parametrize("case", list(CASES))
def test_a_claim_the_gate_rides_on_answers_as_the_orm_path(alice, ws_a, case):
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    by_orm, riding = _tasks(ws_a, 2)
    connection_id = CASES[case](ws_a, connection)
    before, untouched = _usage(ws_a.pk), _task_state(riding)

    orm = server._run_for_connection(lambda c: task_claim(task_id=by_orm.pk, connection=c), connection_id)
    after_orm = _usage(ws_a.pk)
    _restore(ws_a.pk, before)
    rode = _riding(
        lambda c: task_claim(task_id=riding.pk, connection=c),
        lambda c: task_claim_in_loop(task_id=riding.pk, connection=c),
        connection_id,
        ws_a.pk,
    )

    _compare(orm, rode)
    assert _usage(ws_a.pk) == after_orm
    if orm.is_error:
        assert _task_state(riding) == untouched
    else:
        assert _task_state(riding)[0][0] == "doing"


def _held(ws: Workspace, connection: AgentConnection, task: Task) -> dict[str, Any]:
    claim = task_claim(task_id=task.pk, connection=connection)
    return {"run_id": str(claim.run.run_id), "lease_token": claim.lease_token}


@pytest.mark.parametrize("start_next", [False, True], ids=["", "startNext"])
@pytest.mark.parametrize("outcome", ["Done: the change is in.", ""], ids=["a report", "no outcome"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_completion_the_gate_rides_on_answers_as_the_orm_path(alice, ws_a, case, outcome, start_next):
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    by_orm, riding, *_next = _tasks(ws_a, 4)  # two more for startNext's claims
    orm_run, riding_run = _held(ws_a, connection, by_orm), _held(ws_a, connection, riding)
    connection_id = CASES[case](ws_a, connection)
    before, untouched = _usage(ws_a.pk), _task_state(riding)

    orm = server._run_for_connection(
        lambda c: run_complete(
            workspace=c.workspace, outcome=outcome, start_next_for=c if start_next else None, **orm_run
        ),
        connection_id,
    )
    after_orm = _usage(ws_a.pk)
    _restore(ws_a.pk, before)
    rode = _riding(
        lambda c: run_complete(
            workspace=c.workspace, outcome=outcome, start_next_for=c if start_next else None, **riding_run
        ),
        lambda c: run_complete_in_loop(connection=c, outcome=outcome, start_next=start_next, **riding_run),
        connection_id,
        ws_a.pk,
    )

    _compare(orm, rode)
    if start_next and not orm.is_error:  # both went on to startNext's claim (what it found differs:
        assert None not in (_next_of(orm), _next_of(rode))  # the ORM's call ran first)
    assert _usage(ws_a.pk) == after_orm
    if orm.is_error:
        assert _task_state(riding) == untouched
    else:
        assert _task_state(riding)[0][0] == "done"


def _next_of(result: CallToolResult) -> bool | None:
    """Whether startNext's part of an answer started a task; None when there is none."""
    following = (result.structured_content or {}).get("next")
    return None if following is None else bool(following["started"])


def test_startnext_rides_and_claims_with_the_plan_the_statement_read(alice, ws_a):
    """startNext's claim reads the workspace's plan from the connection the completion's statement
    admitted; the call is counted twice (the call, the claim), as on the ORM path."""
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    done, following = _tasks(ws_a, 2)
    held = _held(ws_a, connection, done)
    rode = _riding(
        lambda c: run_complete(workspace=c.workspace, outcome="Done.", start_next_for=c, **held),
        lambda c: run_complete_in_loop(connection=c, outcome="Done.", start_next=True, **held),
        connection.pk,
        ws_a.pk,
    )
    assert _code(rode) == "ok" and _next_of(rode) is True, rode
    assert _task_state(done)[0][0] == "done" and _task_state(following)[0][0] == "doing"
    assert _usage(ws_a.pk)[0][2] == 2


def test_the_gates_refusal_comes_before_the_tools_own(alice, ws_a):
    """An empty outcome is refused before the statement: at the cap, the cap's answer comes first."""
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    (task,) = _tasks(ws_a, 1)
    held = _held(ws_a, connection, task)
    codes = []
    for case in ("last call under the cap", "cap reached"):
        Usage.objects.filter(workspace=ws_a).delete()
        connection_id = CASES[case](ws_a, connection)
        rode = _riding(
            lambda c: run_complete(workspace=c.workspace, outcome="", **held),
            lambda c: run_complete_in_loop(connection=c, outcome="", **held),
            connection_id,
            ws_a.pk,
        )
        codes.append(_code(rode))
    assert codes == ["invalid_argument", "plan_limit_reached"]


def test_a_workspace_the_token_names_wrongly_never_gets_the_write(alice, ws_a, ws_b):
    """The statement writes only in the connection's own workspace; the ORM path answers the rest."""
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    (task,) = _tasks(ws_a, 1)
    rode = _riding(
        lambda c: task_claim(task_id=task.pk, connection=c),
        lambda c: task_claim_in_loop(task_id=task.pk, connection=c),
        connection.pk,
        ws_b.pk,
    )
    assert _code(rode) == "ok"
    run = Run.objects.get(task=task)
    assert (run.workspace_id, run.connection_id) == (ws_a.pk, connection.pk)
    assert _usage(ws_a.pk)[0][2] == 1  # counted once: the statement's meter, not again in the thread
