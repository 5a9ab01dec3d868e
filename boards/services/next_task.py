"""The claim a completion makes when asked (complete_task `startNext`): task_claim_next.

The task is the one get_my_work would name at that moment (`work.next_start`: the caller's own
active run, an approved step, a task with an answer waiting, else the best next task), and the
claim is task_claim's own, so its payload and its refusals are start_task's. The call is metered
as the agent call it replaces, so a plan's allowance buys the same work either way.

It runs after the completion has committed: a refusal here never undoes the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, transaction
from django.utils import timezone

from accounts.models import AgentConnection, Usage
from accounts.services import usage_consume
from accounts.services.workspaces import usage_refusal
from boards import clock
from boards.results import ClaimResult
from boards.services import fast_next
from boards.services.claim import claimed_in_loop, steps_as_written, task_claim
from boards.services.common import attention_full, attention_wait
from boards.services.work import next_start
from weft.errors import WeftError
from weft.hints import Hint, next_


@dataclass
class NextClaim:
    """complete_task with startNext: the claim start_task would have made next, or why none was."""

    claim: ClaimResult | None
    refusal: WeftError | None
    hint: Hint

    def payload(self) -> dict[str, Any]:
        if self.claim is not None:
            return {"started": True, **self.claim.payload()}
        error = self.refusal.as_json()["error"] if self.refusal is not None else None
        return {"started": False, "error": error}

    def summary(self) -> str:
        if self.claim is not None:
            return self.claim.summary()
        if self.refusal is not None:
            return f"Next task not started: {self.refusal.headline()}"
        return "No task to start next."


def task_claim_next(*, connection: AgentConnection, metered: bool = False) -> NextClaim:
    """Start what get_my_work would name next; the claim, or the refusal start_task would give.
    `metered`: the call was counted already (`task_claim_next_in_loop`)."""
    try:
        if not metered:
            usage_consume(workspace=connection.workspace, kind=Usage.AGENT_CALLS)
        with transaction.atomic():
            at = clock.db_now()
            hint, attention = next_start(connection=connection, at=at)
            if attention.full and hint == attention_wait(attention):
                raise attention_full(attention)
            task_id = _hinted_start(hint)
            if task_id is None:
                return NextClaim(claim=None, refusal=None, hint=hint)
            claim = task_claim(task_id=task_id, connection=connection)
    except WeftError as refusal:
        return NextClaim(claim=None, refusal=refusal, hint=_acted_on(refusal.fix))
    return NextClaim(claim=claim, refusal=None, hint=claim.hint)


async def task_claim_next_in_loop(*, connection: AgentConnection) -> NextClaim:
    """`task_claim_next` from the event loop: the call metered and, when nothing comes before the
    best next task, that task claimed, in one statement (`fast_next.claim_next_in_loop`); in any other
    state `task_claim_next` in a thread, the call already counted."""
    if not steps_as_written():
        return await sync_to_async(_claim_next_in_thread, thread_sensitive=False)(connection, False)
    workspace = connection.workspace
    picked = await fast_next.claim_next_in_loop(
        workspace_id=workspace.pk,
        connection_id=connection.pk,
        cap=workspace.plan.cap_for(Usage.AGENT_CALLS),
    )
    return await next_claim_picked(picked, connection=connection)


async def next_claim_picked(picked: fast_next.NextPick, *, connection: AgentConnection) -> NextClaim:
    """startNext's answer from its statement's pick (`fast_next`): the meter's refusal, the claim,
    or — in any state the statement leaves to the ORM — `task_claim_next` in a thread, counted."""
    workspace = connection.workspace
    if not picked.admitted:
        refusal = usage_refusal(
            workspace=workspace, kind=Usage.AGENT_CALLS, used=picked.used, now=timezone.now()
        )
        return NextClaim(claim=None, refusal=refusal, hint=_acted_on(refusal.fix))
    if picked.claimed is not None:
        claim = await claimed_in_loop(*picked.claimed)
        return NextClaim(claim=claim, refusal=None, hint=claim.hint)
    return await sync_to_async(_claim_next_in_thread, thread_sensitive=False)(connection, True)


def _claim_next_in_thread(connection: AgentConnection, metered: bool) -> NextClaim:
    close_old_connections()
    try:
        return task_claim_next(connection=connection, metered=metered)
    finally:
        close_old_connections()


def _hinted_start(hint: Hint) -> int | None:
    """The task a `Next: start_task` hint names; None for any other hint."""
    if hint.marker != "Next" or hint.call is None or hint.call.tool != "start_task":
        return None
    return int(hint.call.args["id"])


def _acted_on(remedy: Hint) -> Hint:
    """A refusal's remedy as the answer's own hint: the answer is no error (the report is recorded),
    so a `Fix:` (which belongs after an `Error:` line) is offered as the `Next:` call it names."""
    if remedy.marker == "Fix" and remedy.call is not None:
        return next_(remedy.call.tool, remedy.call.args)
    return remedy
