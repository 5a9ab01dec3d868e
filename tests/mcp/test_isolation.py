"""Tenant isolation through every tool: a token of workspace B sees and touches nothing of workspace A.

Workspace A is seeded through the services with a board, tasks, a live run (its runId and
leaseToken known), a run waiting on an open question, an open review in the Inbox and an
approval. Carol's agent, connected to workspace B, then calls every tool that `tools/list`
offers with A's ids. Each answer must be a refusal identical to the one for an id that does
not exist at all (a foreign id answers exactly like a missing one), or — for the tools that
list — contain nothing of A. A tool in `tools/list` without a case here fails the test.
Afterwards A's rows are exactly as they were.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from accounts.models import AgentConnection, Usage, User, Workspace
from boards.models import Approval, Board, InboxItem, ProgressNote, Question, Report, Run, Task
from boards.services import (
    board_default,
    inbox_decide,
    run_complete,
    run_heartbeat,
    run_request_input,
    task_claim,
    task_create,
)
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.hints import problems
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

# Every title and description in workspace A carries this; no answer to B may contain it.
MARK = "acme-only"
MISSING_ID = 987654321
MISSING_RUN = "00000000-0000-4000-8000-000000000000"
MISSING_TOKEN = "no-such-lease-token"


@dataclass
class SeedA:
    """What an agent of workspace A knows, and what workspace B's agent must not reach."""

    board_id: int
    task_ids: list[int]
    # (runId, leaseToken): a live run, a run waiting on a question, a completed run under review.
    leases: list[tuple[str, str]]


def seed_a(alice: User, ws_a: Workspace, connection: AgentConnection) -> SeedA:
    board = board_default(workspace=ws_a)

    def task(title: str, **extra: Any) -> Task:
        return task_create(
            workspace=ws_a,
            title=f"{MARK} {title}",
            description=f"{MARK}: details of {title}",
            board=board,
            by_user=alice,
            **extra,
        ).task

    idle = task("migrate the billing tables")
    live = task("rotate the signing keys")
    asking = task("choose the data centre")
    reviewed = task("write the incident report", review_required=True)
    approved = task("prune the old backups", review_required=True)

    # An approval waiting for A's agent: a review accepted with a next step.
    claim = task_claim(task_id=approved.pk, connection=connection)
    done = run_complete(
        workspace=ws_a,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        outcome=f"{MARK} backups pruned",
        next_step=f"{MARK} delete the last snapshot",
    )
    assert done.inbox_item is not None
    inbox_decide(item=done.inbox_item, user=alice, decision="accept")

    # A live run with a heartbeat.
    held = task_claim(task_id=live.pk, connection=connection)
    run_heartbeat(
        workspace=ws_a, run_id=held.run.run_id, lease_token=held.lease_token, note=f"{MARK} halfway"
    )
    # A run waiting on an open question.
    waiting = task_claim(task_id=asking.pk, connection=connection)
    run_request_input(
        workspace=ws_a,
        run_id=waiting.run.run_id,
        lease_token=waiting.lease_token,
        question=f"{MARK} Frankfurt or Dublin?",
        options=["Frankfurt", "Dublin"],
    )
    # An open review in the Inbox.
    review = task_claim(task_id=reviewed.pk, connection=connection)
    run_complete(
        workspace=ws_a,
        run_id=review.run.run_id,
        lease_token=review.lease_token,
        outcome=f"{MARK} report written",
    )

    leases = [
        (str(held.run.run_id), held.lease_token),
        (str(waiting.run.run_id), waiting.lease_token),
        (str(review.run.run_id), review.lease_token),
        (str(claim.run.run_id), claim.lease_token),
    ]
    assert InboxItem.objects.filter(workspace=ws_a, state="open").count() == 2  # question + review
    assert Approval.objects.filter(workspace=ws_a).count() == 1
    return SeedA(
        board_id=board.pk,
        task_ids=[t.pk for t in (idle, live, asking, reviewed, approved)],
        leases=leases,
    )


TASK_FIELDS = (
    "column", "epoch", "title", "description", "priority", "position", "due_at", "review_required",
    "estimated_review_minutes", "assignee_connection_id", "trashed_at", "updated_at",
)  # fmt: skip


def snapshot(ws: Workspace) -> dict[str, Any]:
    """Everything of a workspace that a tool call could change."""

    def rows(model: Any, *fields: str) -> list[tuple[Any, ...]]:
        return list(model.objects.filter(workspace=ws).order_by("pk").values_list("pk", *fields))

    return {
        "boards": rows(Board, "name"),
        "tasks": rows(Task, *TASK_FIELDS),
        "runs": rows(
            Run, "state", "epoch", "lease_token_hash", "lease_expires_at", "last_heartbeat_at", "ended_at"
        ),
        "progress": rows(ProgressNote, "note"),
        "questions": rows(Question, "state", "answer", "delivered_at"),
        "reports": rows(Report, "outcome"),
        "inbox": rows(InboxItem, "state", "decision", "snoozed_until"),
        "approvals": rows(Approval, "delivered_at", "used_at"),
        "usage": rows(Usage, "kind", "count"),
        "events": Event.objects.filter(workspace_id=ws.pk).count(),
    }


# --- The cases: for every tool, the calls that name workspace A's objects ------------------------


@dataclass(frozen=True)
class Refused:
    """A call with A's ids, and the same call with ids that exist nowhere: both answers must match."""

    arguments: dict[str, Any]
    missing: dict[str, Any]
    code: str


@dataclass(frozen=True)
class Listed:
    """A call that lists: it succeeds and shows nothing of A."""

    arguments: dict[str, Any]


Probe = Refused | Listed

# Ids of tasks and boards are looked up through boards.access: foreign and missing are not_found.
# A runId is looked up through boards.services.common.run_for_write: a foreign or unknown run
# holds no lease in the caller's workspace and answers lease_lost (the same for both).
NOT_FOUND = "not_found"
NO_LEASE = "lease_lost"


def _by_task(a: SeedA, code: str = NOT_FOUND, **extra: Any) -> Iterator[Probe]:
    for task_id in a.task_ids:
        yield Refused({"id": task_id, **extra}, {"id": MISSING_ID, **extra}, code)


def _by_lease(a: SeedA, **extra: Any) -> Iterator[Probe]:
    missing = {"runId": MISSING_RUN, "leaseToken": MISSING_TOKEN, **extra}
    for run_id, token in a.leases:
        yield Refused({"runId": run_id, "leaseToken": token, **extra}, missing, NO_LEASE)
        # A's runId with B-made-up token, and a made-up runId with A's token.
        yield Refused({"runId": run_id, "leaseToken": MISSING_TOKEN, **extra}, missing, NO_LEASE)
        yield Refused({"runId": MISSING_RUN, "leaseToken": token, **extra}, missing, NO_LEASE)


Cases = dict[str, Callable[[SeedA], Iterator[Probe]]]

CASES: Cases = {
    "get_my_work": lambda a: iter([Listed({})]),
    "get_board_state": lambda a: iter(
        [
            Listed({}),
            Refused({"boardId": a.board_id}, {"boardId": MISSING_ID}, NOT_FOUND),
        ]
    ),
    "search": lambda a: iter([Listed({"query": MARK}), Listed({"query": "billing"})]),
    "get_task": lambda a: _by_task(a),
    "start_task": lambda a: _by_task(a),
    "update_task": lambda a: iter(
        [
            *_by_task(a, title="Taken over"),
            *_by_task(a, column="done"),
            *_by_task(a, priority=3, description="changed"),
        ]
    ),
    "create_task": lambda a: iter(
        [
            Refused(
                {"title": "Planted in A", "boardId": a.board_id},
                {"title": "Planted in A", "boardId": MISSING_ID},
                NOT_FOUND,
            )
        ]
    ),
    "report_progress": lambda a: _by_lease(a, note="Heartbeat from B"),
    "request_input": lambda a: _by_lease(a, question="Answer me from B?", options=["yes"]),
    "complete_task": lambda a: _by_lease(a, outcome="Finished by B", nextStep="Delete everything"),
    "release_task": lambda a: _by_lease(a, reason="B gives it back"),
}

from tests.hooks.isolation_cases import CASES as HOOK_CASES  # noqa: E402
from tests.issues.isolation_cases import CASES as ISSUE_CASES  # noqa: E402

CASES.update(HOOK_CASES)
CASES.update(ISSUE_CASES)


# --- Checking the answers -----------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    else:
        yield str(value)


def _task_like(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict in an answer that describes a task (has an id and a title)."""
    if isinstance(value, dict):
        if "id" in value and "title" in value:
            yield value
        for item in value.values():
            yield from _task_like(item)
    elif isinstance(value, list):
        for item in value:
            yield from _task_like(item)


def assert_nothing_of_a(tool: str, result: dict[str, Any], a: SeedA, arguments: dict[str, Any]) -> None:
    structured = result["structuredContent"]
    body = text_of(result) + "\n" + json.dumps(structured)
    # An answer may echo what the caller sent (a runId, a search query); that is not a leak.
    for value in arguments.values():
        if isinstance(value, str):
            body = body.replace(value, "<argument>")
    assert MARK not in body.lower(), f"{tool}: workspace A's text leaked:\n{body}"
    for run_id, token in a.leases:
        assert token not in body, f"{tool}: a lease token of workspace A leaked"
        assert run_id not in body, f"{tool}: a runId of workspace A leaked"
    leaked = [t for t in _task_like(structured) if int(t["id"]) in a.task_ids]
    assert not leaked, f"{tool}: tasks of workspace A leaked: {leaked}"


def _same_refusal(tool: str, probe: Refused, foreign: dict[str, Any], missing: dict[str, Any]) -> None:
    shown = f"{tool} {probe.arguments}"
    assert foreign.get("isError") is True, f"{shown} was not refused:\n{text_of(foreign)}"
    assert missing.get("isError") is True, f"{tool} {probe.missing} was not refused:\n{text_of(missing)}"
    f_error, m_error = foreign["structuredContent"]["error"], missing["structuredContent"]["error"]
    assert f_error["code"] == probe.code, f"{shown}: {f_error}"
    assert m_error["code"] == probe.code, f"{tool} {probe.missing}: {m_error}"
    # Identical but for the id the caller passed: same next action, same detail keys, same message.
    assert foreign["structuredContent"]["_next_action"] == missing["structuredContent"]["_next_action"], shown
    assert foreign["structuredContent"].get("_or_action") == missing["structuredContent"].get("_or_action")
    assert set(f_error.get("details") or {}) == set(m_error.get("details") or {}), (shown, f_error, m_error)

    def plain(message: str, arguments: dict[str, Any]) -> str:
        for key in ("id", "boardId", "runId"):
            if key in arguments:
                message = message.replace(str(arguments[key]), "<id>")
        for link in arguments.get("entity_ids_to_link") or []:
            kind, _, ident = link.partition(":")
            message = message.replace(f"{kind} {ident}", f"{kind} <id>")
        return message

    assert plain(f_error["message"], probe.arguments) == plain(m_error["message"], probe.missing), (
        shown,
        f_error["message"],
        m_error["message"],
    )


def check(tool: str, result: dict[str, Any]) -> None:
    """Every answer keeps the hint contract too."""
    found = problems(text_of(result), result.get("structuredContent") or {})
    assert not found, (tool, found, text_of(result))


async def _probe_everything(token: str, a: SeedA, b_task_id: int) -> dict[str, int]:
    calls: dict[str, int] = {}
    async with in_process() as client:
        mcp = MCP(client, token)
        listed = [tool["name"] for tool in await mcp.tools()]
        without_case = sorted(set(listed) - set(CASES))
        assert not without_case, (
            f"tools without an isolation case: {without_case}. Add each to CASES in "
            "tests/mcp/test_isolation.py with the calls that name workspace A's objects."
        )
        for tool in listed:
            calls[tool] = 0
            for probe in CASES[tool](a):
                result = await mcp.call(tool, probe.arguments)
                check(tool, result)
                assert_nothing_of_a(tool, result, a, probe.arguments)
                if isinstance(probe, Refused):
                    missing = await mcp.call(tool, probe.missing)
                    check(tool, missing)
                    _same_refusal(tool, probe, result, missing)
                else:
                    assert not result.get("isError"), f"{tool} {probe.arguments}: {text_of(result)}"
                calls[tool] += 1

        # The listing tools did look: B's own task shows where A's do not.
        board = (await mcp.call("get_board_state"))["structuredContent"]
        assert b_task_id in {int(t["id"]) for t in _task_like(board)}, board
        found = (await mcp.call("search", {"query": "billing"}))["structuredContent"]
        assert b_task_id in {int(t["id"]) for t in _task_like(found)}, found
    return calls


def test_a_token_of_workspace_b_reaches_nothing_of_workspace_a(alice, carol, ws_a, ws_b):
    _, a_connection = agent_token(alice, ws_a, name="Acme agent")
    a = seed_a(alice, ws_a, a_connection)
    b_task = task_create(workspace=ws_b, title="Beta billing cleanup", by_user=carol).task
    token, _ = agent_token(carol, ws_b, name="Beta agent")
    before = snapshot(ws_a)

    calls = asyncio.run(_probe_everything(token, a, b_task.pk))

    assert all(calls.values()), f"a tool was listed but never called: {calls}"
    after = snapshot(ws_a)
    for key in before:
        assert after[key] == before[key], f"workspace A's {key} changed"
    # Nothing planted in A; B's agent created nothing anywhere (create_task was refused).
    assert not Task.objects.filter(title="Planted in A").exists()
