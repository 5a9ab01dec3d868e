"""The lease-guarded writes of a run: run_heartbeat, run_request_input, run_complete, run_release;
and lease_sweep. The claim is in `claim.py`, answer and approval hand-over in `delivery.py`.

Concurrency, in one place:
- Every lease-guarded write goes through `_fenced_write`: the run is read and locked, the pure
  rules (`lease.step`) compute its next lease, and one UPDATE on `common.fenced(...)` (run, token
  hash, epoch equal to the task's, live state, lease not expired) applies it; a lease the rules
  refuse or 0 changed rows is `lease_lost` and nothing changes.
- The run's row lock (FOR UPDATE where the database has it; SQLite serialises writers) makes the
  lease read the one the rules step from: a concurrent question or answer on the same run waits
  for us, so a heartbeat never writes an expiry computed from a stale read.
- Time is `clock.db_now()`, read once per operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.db import transaction

from accounts.access import require_active_workspace
from accounts.models import AgentConnection, Workspace
from boards import clock, evidence, lease, limits
from boards.models import Approval, Column, InboxItem, InboxKind, ProgressNote, Question, Report, Run, Task
from boards.payloads import iso
from boards.results import CompleteResult, QuestionResult, RunResult
from boards.services import fast, fast_next
from boards.services.claim import steps_as_written
from boards.services.common import (
    QUESTION_MINUTES,
    expire_run,
    fenced,
    lease_lost,
    release_task_row,
    run_for_write,
    within_limits,
)
from boards.services.fast_rows import Completed
from boards.services.next_task import next_claim_picked, task_claim_next, task_claim_next_in_loop
from weft.events import emit
from weft.hints import Hint, next_, wait


@contextmanager
def _fenced_write(
    *, workspace: Workspace, run_id: Any, lease_token: str, event: str, **columns: Any
) -> Iterator[tuple[Run, datetime]]:
    """One transaction around a lease-guarded write: the run's lease after `event` is written
    (with `columns`) through the fence, then the block does the rest of the write.

    Yields the run as written and the operation's `now`; raises lease_lost, changing nothing,
    when the lease is not held by this token at the task's epoch.
    """
    with transaction.atomic():
        now = clock.db_now()
        run = run_for_write(workspace.pk, run_id)
        try:
            after = lease.step(lease.Lease(run.state, run.epoch, run.lease_expires_at), event, now)
        except lease.LeaseLost:
            raise lease_lost(run) from None
        values = {**_lease_columns(event, after, now), **columns}
        if fenced(run=run, lease_token=lease_token, now=now).update(**values) != 1:
            raise lease_lost(run)
        for name, value in values.items():
            setattr(run, name, value)
        yield run, now


def _lease_columns(event: str, after: lease.Lease, now: datetime) -> dict[str, Any]:
    """The run's columns that record its lease `after` a step by `event`."""
    if event == "heartbeat":
        return {"state": after.state, "lease_expires_at": after.expires_at, "last_heartbeat_at": now}
    if after.state in lease.LIVE_STATES:
        return {"state": after.state, "lease_expires_at": after.expires_at}
    # An ended run keeps its last expiry as history; its token can never be used again.
    return {"state": after.state, "lease_token_hash": "", "ended_at": now}


def run_heartbeat(
    *, workspace: Workspace, run_id: Any, lease_token: str, note: str, status: str | None = None
) -> RunResult:
    """Renew the lease to now + 20 minutes and record the progress note."""
    require_active_workspace(workspace)
    with within_limits():
        note = limits.text("note", note, limits.NOTE)
        status = limits.text("status", status, limits.STATUS)
    with _fenced_write(workspace=workspace, run_id=run_id, lease_token=lease_token, event="heartbeat") as (
        run,
        now,
    ):
        ProgressNote.objects.create(
            workspace_id=workspace.pk, run=run, note=note, status=status, created_at=now
        )
        emit(
            workspace_id=workspace.pk,
            type="run.heartbeat",
            entity_type="run",
            entity_id=run.run_id,
            payload={
                "runId": str(run.run_id),
                "taskId": run.task_id,
                "note": note or "",
                "status": status or "",
            },
            epoch=run.epoch,
        )
    hint = wait(
        f"work on task {run.task_id} continues; renew within {lease.RENEW_EVERY_SECONDS} seconds"
        f" (lease until {iso(run.lease_expires_at)})",
        "report_progress",
        {"runId": str(run.run_id), "leaseToken": lease_token, "note": f"still working on task {run.task_id}"},
    )
    return RunResult(run=run, action="heartbeat", hint=hint)


def run_request_input(
    *, workspace: Workspace, run_id: Any, lease_token: str, question: str, options: list[str] | None = None
) -> QuestionResult:
    """Ask a person; the question goes to the Inbox and the claim holds 60 minutes without heartbeats."""
    require_active_workspace(workspace)
    with within_limits():
        text = limits.text("question", question, limits.QUESTION, required=True)
        choices = limits.text_list("options", options, items=limits.OPTIONS, item=limits.OPTION)
        for index, choice in enumerate(choices):
            limits.text(f"options[{index}]", choice, limits.OPTION, required=True)
    with _fenced_write(workspace=workspace, run_id=run_id, lease_token=lease_token, event="ask") as (
        run,
        now,
    ):
        asked = Question.objects.create(
            workspace_id=workspace.pk,
            task_id=run.task_id,
            run=run,
            connection_id=run.connection_id,
            text=text,
            options=choices,
            created_at=now,
        )
        item = InboxItem.objects.create(
            workspace_id=workspace.pk,
            kind=InboxKind.QUESTION,
            task_id=run.task_id,
            run=run,
            question=asked,
            estimated_minutes=QUESTION_MINUTES,
            created_at=now,
        )
        emit(
            workspace_id=workspace.pk,
            type="run.input_requested",
            entity_type="run",
            entity_id=run.run_id,
            payload={"runId": str(run.run_id), "taskId": run.task_id, "questionId": asked.pk},
            epoch=run.epoch,
        )
        _emit_item_created(item)
    hint = wait(
        f"a person answers question {asked.pk} on task {run.task_id} in the Inbox"
        f" (the claim holds until {iso(run.lease_expires_at)})",
        "get_my_work",
    )
    return QuestionResult(question=asked, item=item, run=run, hint=hint)


def _emit_item_created(item: InboxItem) -> None:
    emit(
        workspace_id=item.workspace_id,
        type="inbox.item_created",
        entity_type="inbox_item",
        entity_id=item.pk,
        payload={"itemId": item.pk, "kind": item.kind, "taskId": item.task_id},
    )


def run_complete(
    *,
    workspace: Workspace,
    run_id: Any,
    lease_token: str,
    outcome: str,
    artifacts: Any = None,
    claims: Any = None,
    not_done: Any = None,
    unknowns: Any = None,
    next_step: str = "",
    start_next_for: AgentConnection | None = None,
) -> CompleteResult:
    """Record the report; the task goes to Done, or to the Inbox for review. Never fails for evidence.

    Evidence that cannot be checked is kept as given, marked unverifiable, listed in the response,
    and sends the task to a person. Only a lease not held, a missing outcome or a value past its
    limit refuses the call. On PostgreSQL the common completion (no checks, no approved step) is
    one statement (`fast.complete`); any other runs through the fenced write. `start_next_for`
    (startNext): that connection then starts its next task, once the report has committed
    (`task_claim_next`)."""
    require_active_workspace(workspace)
    outcome, next_step, evidence_given = _report_given(
        outcome, next_step, [artifacts, claims, not_done, unknowns]
    )
    done = _fast_completed(workspace, run_id, lease_token, outcome, next_step, evidence_given)
    if done is None:
        done = _completed(workspace, run_id, lease_token, outcome, next_step, evidence_given)
    return done.then(task_claim_next(connection=start_next_for)) if start_next_for else done


def _report_given(outcome: str, next_step: str, given: list[Any]) -> tuple[str, str, dict[str, Any]]:
    """The report's outcome, next step and evidence (artifacts, claims, not_done, unknowns) as
    checked against their limits: (outcome, next_step, the evidence lists and `not_accepted`)."""
    artifacts, claims, not_done, unknowns = given
    with within_limits():
        outcome = limits.text("outcome", outcome, limits.OUTCOME, required=True)
        next_step = limits.text("nextStep", next_step, limits.NEXT_STEP)
        limits.without_nul_anywhere("evidence", given)
        lists, not_accepted = evidence.sorted_evidence(
            artifacts=artifacts, claims=claims, not_done=not_done, unknowns=unknowns
        )
    return outcome, next_step, {**lists, "not_accepted": not_accepted}


async def run_complete_in_loop(
    *,
    connection: AgentConnection,
    run_id: Any,
    lease_token: str,
    outcome: str,
    artifacts: Any = None,
    claims: Any = None,
    not_done: Any = None,
    unknowns: Any = None,
    next_step: str = "",
    start_next: bool = False,
) -> CompleteResult | None:
    """An agent's completion from the event loop, when it is the common one (`fast.complete_in_loop`,
    on the loop's pool); None, having changed nothing, otherwise — then `run_complete` runs in a
    thread. The caller has checked the workspace (the MCP gate). With the gate riding on it,
    startNext's claim is in the completion's statement (`fast_next.complete_next_in_loop`), whose
    claim never undoes the report; otherwise it follows once the report has committed, as in
    `run_complete` (`task_claim_next_in_loop`)."""
    outcome, next_step, given = _report_given(outcome, next_step, [artifacts, claims, not_done, unknowns])
    report = _fast_report(outcome, next_step, given)
    if start_next and steps_as_written():
        both = await fast_next.complete_next_in_loop(
            connection_id=connection.pk,
            workspace_id=connection.workspace_id,
            run_id=run_id,
            lease_token=lease_token,
            **report,
        )
        if both is None:
            return None
        if both is not False:
            completed, picked = both
            return _completed_result(completed).then(await next_claim_picked(picked, connection=connection))
    done = await fast.complete_in_loop(
        workspace_id=connection.workspace_id, run_id=run_id, lease_token=lease_token, **report
    )
    if done is None:
        return None
    result = _completed_result(done)
    return result.then(await task_claim_next_in_loop(connection=connection)) if start_next else result


def _fast_completed(
    workspace: Workspace, run_id: Any, lease_token: str, outcome: str, next_step: str, given: dict[str, Any]
) -> CompleteResult | None:
    """The common completion in one statement (PostgreSQL): a held run of a task without checks
    or an approved step, to Done or to the Inbox; None, having changed nothing, otherwise."""
    if not fast.enabled():
        return None
    done = fast.complete(
        workspace_id=workspace.pk,
        run_id=run_id,
        lease_token=lease_token,
        **_fast_report(outcome, next_step, given),
    )
    return _completed_result(done) if done is not None else None


def _fast_report(outcome: str, next_step: str, given: dict[str, Any]) -> dict[str, Any]:
    """The report's part of the one-statement completion: a task without checks verifies its
    usable artifacts only."""
    verification, passed = evidence.verify([], _usable(given["artifacts"]))
    lists = {**given, "verification": verification, "passed": passed}
    return {"outcome": outcome, "next_step": next_step, "lists": lists}


def _completed_result(done: Completed) -> CompleteResult:
    hint = _completed_hint(done.task, done.item)
    return CompleteResult(run=done.run, task=done.task, report=done.report, inbox_item=done.item, hint=hint)


def _completed(
    workspace: Workspace, run_id: Any, lease_token: str, outcome: str, next_step: str, given: dict[str, Any]
) -> CompleteResult:
    """The completion through the fenced write: every case, every refusal."""
    not_accepted = given.pop("not_accepted")
    with _fenced_write(
        workspace=workspace, run_id=run_id, lease_token=lease_token, event="complete", end_reason="completed"
    ) as (run, now):
        task = run.task
        report = _report(
            run, outcome=outcome, next_step=next_step, lists=given, not_accepted=not_accepted, now=now
        )
        review = needs_review(task, passed=report.verification_passed, not_accepted=not_accepted)
        item = _hand_over(run, report, review=review, now=now)
        emit(
            workspace_id=workspace.pk,
            type="run.completed",
            entity_type="run",
            entity_id=run.run_id,
            payload={"runId": str(run.run_id), "taskId": task.pk, "review": review, "reportId": report.pk},
            epoch=run.epoch,
        )
        if item is not None:
            _emit_item_created(item)
    return CompleteResult(
        run=run, task=task, report=report, inbox_item=item, hint=_completed_hint(task, item)
    )


def needs_review(task: Task, *, passed: bool | None, not_accepted: list[dict[str, str]]) -> bool:
    """A completion waits on a person when the task asks for review, a check failed or evidence
    was not accepted; otherwise the task is Done."""
    return task.review_required or passed is False or bool(not_accepted)


def _usable(artifacts: list[Any]) -> list[Any]:
    """The artifacts a check may look at: those not marked unverifiable."""
    return [a for a in artifacts if "unverifiable" not in a]


def _completed_hint(task: Task, item: InboxItem | None) -> Hint:
    if item is not None:
        return wait(f"a person reviews task {task.pk} in the Inbox", "get_my_work")
    return next_("get_my_work")


def _report(
    run: Run,
    *,
    outcome: str,
    next_step: str,
    lists: dict[str, list[Any]],
    not_accepted: list[dict[str, str]],
    now: datetime,
) -> Report:
    """The completion report, with the task's checks run against its usable artifacts."""
    verification, passed = evidence.verify(run.task.checks, _usable(lists["artifacts"]))
    return Report.objects.create(
        workspace_id=run.workspace_id,
        task=run.task,
        run=run,
        outcome=outcome,
        next_step=next_step,
        not_accepted=not_accepted,
        verification=verification,
        verification_passed=passed,
        created_at=now,
        **lists,
    )


def _hand_over(run: Run, report: Report, *, review: bool, now: datetime) -> InboxItem | None:
    """The completed run's task: to Done, or (review) waiting in Doing on a review item; the
    approval the run started on is used up."""
    task = run.task
    item = None
    if review:
        # The task waits in Doing, unassigned, until a person decides the review.
        task.column = Column.DOING
        item = InboxItem.objects.create(
            workspace_id=run.workspace_id,
            kind=InboxKind.REVIEW,
            task=task,
            run=run,
            report=report,
            estimated_minutes=task.estimated_review_minutes,
            created_at=now,
        )
    else:
        task.column = Column.DONE
    Task.objects.filter(pk=task.pk).update(
        column=task.column, assignee_connection=None, assignee_user=None, updated_at=now
    )
    if run.approval_id is not None:
        Approval.objects.filter(pk=run.approval_id, used_at=None).update(used_at=now)
    return item


def run_release(*, workspace: Workspace, run_id: Any, lease_token: str, reason: str) -> RunResult:
    """Give the task back on purpose: Todo, unassigned, epoch bumped (the old token is fenced off)."""
    require_active_workspace(workspace)
    with within_limits():
        reason = limits.text("reason", reason, limits.REASON)
    with _fenced_write(
        workspace=workspace,
        run_id=run_id,
        lease_token=lease_token,
        event="release",
        end_reason=reason or "released",
    ) as (run, now):
        release_task_row(run.task_id, now)
        emit(
            workspace_id=workspace.pk,
            type="run.released",
            entity_type="run",
            entity_id=run.run_id,
            payload={"runId": str(run.run_id), "taskId": run.task_id, "reason": reason or ""},
            epoch=lease.next_epoch(run.epoch),
        )
    return RunResult(run=run, action="released", hint=next_("get_my_work"))


def lease_sweep(*, now: datetime | None = None, batch: int = 500) -> int:
    """Make expired leases visible: stale (or released after a question hold), events emitted.

    Correctness never depends on this: every read and write already treats an expired lease as
    expired. Each run is expired in its own short transaction by a conditional UPDATE, so a sweep
    racing a claim or another sweep changes each run at most once.
    """
    at = now or clock.db_now()
    expired = list(
        Run.objects.filter(state__in=lease.LIVE_STATES, lease_expires_at__lte=at).order_by(
            "lease_expires_at"
        )[:batch]
    )
    count = 0
    for run in expired:
        with transaction.atomic():
            if expire_run(run, at):
                count += 1
    return count
