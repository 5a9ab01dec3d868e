"""The claim loop's writes: task_claim, run_heartbeat, run_request_input, run_complete, run_release,
lease_sweep.

Concurrency, in one place:
- One live run per task is the database's job: the claim is a conditional UPDATE of the task on
  (epoch, column) that must change exactly one row (concurrent claimers queue on the row lock and
  all but the first then match nothing), and the insert of the run is guarded by the unique
  partial index `one_live_run_per_task`; either refusal is `already_claimed` — unless the
  winner is the same holder, whose racing second call gets the run back (`_resume`).
- Answers and approvals are handed over by a checked compare-and-set on `delivered_at`: one
  response and one event each, however many calls of the connection race.
- Every lease-guarded write is one UPDATE on `common.fenced(...)` (run, token hash, epoch equal to
  the task's, live state, lease not expired); 0 changed rows is `lease_lost` and nothing changes.
- Time is `clock.db_now()`, read once per operation.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.db import IntegrityError, transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from accounts.access import require_active_workspace
from accounts.models import AgentConnection, User, Workspace
from boards import attention as attention_rules
from boards import clock, lease, limits
from boards.access import access_task
from boards.models import (
    Approval,
    Column,
    InboxItem,
    InboxKind,
    ProgressReport,
    Question,
    QuestionState,
    Report,
    Run,
    RunState,
    Task,
)
from boards.payloads import iso, question_payload
from boards.results import ClaimResult, CompleteResult, QuestionResult, RunResult
from boards.services.common import (
    CLAIMABLE_COLUMNS,
    QUESTION_MINUTES,
    already_claimed,
    attention_full,
    attention_now,
    expire_run,
    fenced,
    lease_lost,
    lease_token_for,
    release_task_row,
    run_for_write,
    token_hash,
    within_limits,
)
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import Hint, fix, next_, wait

ARTIFACT_KINDS = ("url", "commit", "file", "pr")
ARTIFACT_FIELDS = frozenset({"kind", "uri", "httpStatus", "sha256"})


def _claim_hint(run: Run, token: str, task: Task) -> Hint:
    return next_(
        "report_progress",
        {"runId": str(run.run_id), "leaseToken": token, "note": f"working on task {task.pk}"},
    )


def _valid_approval(task: Task, connection: AgentConnection | None, now: datetime) -> Approval | None:
    if connection is None:
        return None
    return (
        Approval.objects.filter(task=task, connection=connection, used_at=None, expires_at__gt=now)
        .order_by("-created_at")
        .first()
    )


def _deliver_answers(*, connection: AgentConnection | None, task: Task, now: datetime) -> list[Question]:
    """Answered questions on this task not yet given to this connection: handed over exactly once."""
    if connection is None:
        return []
    pending = list(
        Question.objects.select_for_update(skip_locked=True)
        .select_related("run")
        .filter(connection=connection, task=task, state=QuestionState.ANSWERED, delivered_at=None)
        .order_by("answered_at", "pk")
    )
    return [question for question in pending if mark_question_delivered(question, now)]


def mark_question_delivered(question: Question, now: datetime) -> bool:
    """Mark an answer handed over; True only for the one caller whose update changed the row.

    Callers lock the rows they deliver (SKIP LOCKED), so two deliveries rarely meet here; the
    checked compare-and-set is what makes "exactly once" hold where no lock was taken (SQLite,
    or a caller holding a stale read), and only the winner emits and returns the answer.
    """
    if not Question.objects.filter(pk=question.pk, delivered_at=None).update(delivered_at=now):
        return False
    question.delivered_at = now
    emit(
        workspace_id=question.workspace_id,
        type="question.delivered",
        entity_type="question",
        entity_id=question.pk,
        payload={"questionId": question.pk, "taskId": question.task_id},
    )
    return True


def mark_approval_delivered(approval: Approval, now: datetime) -> bool:
    """Mark an approval handed over; True only for the caller whose update changed the row.

    task_claim reads the approval it starts on without a lock, so a get_my_work racing it may
    deliver it first; the claim still carries the approved step, but the delivery (and its
    event) happens once.
    """
    if not Approval.objects.filter(pk=approval.pk, delivered_at=None).update(delivered_at=now):
        return False
    approval.delivered_at = now
    emit(
        workspace_id=approval.workspace_id,
        type="approval.delivered",
        entity_type="approval",
        entity_id=approval.pk,
        payload={"approvalId": approval.pk, "taskId": approval.task_id},
    )
    return True


def _context(
    *, task: Task, run: Run, connection: AgentConnection | None, approval: Approval | None, now: datetime
) -> dict[str, Any]:
    """What the agent needs to pick the task up: description, last run, rework notes, approved step,
    answers."""
    # Every claim bumps the task's epoch (from 0) and its run carries the bumped value, and epochs
    # only grow; so a run at epoch 1 is the task's first and there is no earlier run to read.
    # That skips the lookup on a first claim, the common case.
    previous = (
        Run.objects.select_related("report")
        .filter(task=task, started_at__lte=run.started_at)
        .exclude(pk=run.pk)
        .order_by("-started_at", "-pk")
        .first()
        if run.epoch > 1
        else None
    )
    last_notes: list[str] = []
    rework: list[str] = []
    if previous is not None:
        notes = ProgressReport.objects.filter(run=previous).order_by("-created_at", "-pk")[:5]
        last_notes = [p.note for p in reversed(list(notes))]
        report = getattr(previous, "report", None) if hasattr(previous, "report") else None
        if report is not None:
            last_notes.append(f"outcome: {report.outcome}")
            if report.next_step:
                last_notes.append(f"next step: {report.next_step}")
        rework = [
            item.note
            for item in InboxItem.objects.filter(run=previous, decision="rework").order_by("decided_at", "pk")
            if item.note
        ]
    if approval is not None and approval.delivered_at is None:
        mark_approval_delivered(approval, now)
    answers = _deliver_answers(connection=connection, task=task, now=now)
    return {
        "description": task.description,
        "lastRunNotes": last_notes,
        "reworkNotes": rework,
        "approvedStep": (
            {"id": approval.pk, "step": approval.step, "expiresAt": iso(approval.expires_at)}
            if approval
            else None
        ),
        "answers": [question_payload(q) for q in answers],
    }


def _same_holder(run: Run, connection: AgentConnection | None, user: User | None) -> bool:
    if connection is not None:
        return run.connection_id == connection.pk
    return user is not None and run.connection_id is None and run.user_id == user.pk


def task_claim(
    *,
    task_id: Any,
    connection: AgentConnection | None = None,
    user: User | None = None,
    workspace: Workspace | None = None,
) -> ClaimResult:
    """Claim a task with a 20-minute lease (task → Doing); the same holder gets its live run back.

    Agents pass `connection`; a person passes `user` and `workspace`.
    """
    if (connection is None) == (user is None):
        raise ValueError("task_claim needs exactly one of connection or user")
    ws = connection.workspace if connection is not None else workspace
    if ws is None:
        raise ValueError("task_claim by a person needs the workspace")
    if connection is not None:
        require_active_workspace(ws)
    try:
        with transaction.atomic():
            return _claim(workspace=ws, task_id=task_id, connection=connection, user=user)
    except IntegrityError:
        # The unique partial index refused a second live run: another claimer won the race.
        task = access_task(ws, task_id)
        raise already_claimed(task, _live_run(task)) from None


def _live_run(task: Task) -> Run | None:
    """The task's live run, if any. The unique partial index `one_live_run_per_task` allows at most
    one, so a bare LIMIT 1 suffices: `.first()` would add an ORDER BY the database must honour."""
    rows = Run.objects.select_related("connection", "user").filter(task=task, state__in=lease.LIVE_STATES)
    return next(iter(rows.order_by()[:1]), None)


def _claim(
    *, workspace: Workspace, task_id: Any, connection: AgentConnection | None, user: User | None
) -> ClaimResult:
    now = clock.db_now()
    task = access_task(workspace, task_id)
    if task.column == Column.TRASH:
        raise _not_startable(task)
    live = _live_run(task)
    if live is not None:
        if lease.is_expired(live.state, live.lease_expires_at, now):
            # Expired at read time: apply the expiry here, whether or not a sweep has run.
            expire_run(live, now)
            task.refresh_from_db()
        elif _same_holder(live, connection, user):
            return _resume(live=live, task=task, connection=connection, now=now)
        else:
            raise already_claimed(task, live)
    elif task.column == Column.DOING:
        # The task was read in Doing but no run is live now: a sweep or a release ended the run
        # between the two reads and put the task back. Judge the task as it is now.
        task.refresh_from_db()
    approval = _valid_approval(task, connection, now)
    startable = task.column in CLAIMABLE_COLUMNS or (approval is not None and task.column == Column.DONE)
    if not startable:
        raise _not_startable(task)
    if approval is None:
        attention = attention_now(workspace.pk, now)
        if not attention_rules.admits(attention, approved_step=False):
            raise attention_full(attention)
    # The claim itself: exactly one row must change, else someone else moved the task first.
    changed = Task.objects.filter(pk=task.pk, epoch=task.epoch, column=task.column).update(
        epoch=F("epoch") + 1,
        column=Column.DOING,
        assignee_connection=connection,
        assignee_user=user,
        updated_at=now,
    )
    if changed != 1:
        # Another claim moved the task first. Our UPDATE waited on its row lock until that claim
        # committed, so its run is visible now. When the winner is this same holder (an agent
        # retrying start_task while the first call is still running) the call is the idempotent
        # restart and gets the run back, as it would one moment later.
        holder = _live_run(task)
        if (
            holder is not None
            and _same_holder(holder, connection, user)
            and not lease.is_expired(holder.state, holder.lease_expires_at, now)
        ):
            task.refresh_from_db()
            return _resume(live=holder, task=task, connection=connection, now=now)
        raise already_claimed(task, holder)
    task.epoch += 1
    task.column = Column.DOING
    task.assignee_connection = connection
    task.assignee_user = user
    task.updated_at = now
    run_id = uuid.uuid4()
    token = lease_token_for(run_id=run_id, epoch=task.epoch)
    run = Run.objects.create(
        run_id=run_id,
        workspace=workspace,
        task=task,
        connection=connection,
        user=user,
        lease_token_hash=token_hash(token),
        epoch=task.epoch,
        state=RunState.ACTIVE,
        started_at=now,
        last_heartbeat_at=now,
        lease_expires_at=lease.claim_expiry(now),
        approval=approval,
    )
    context = _context(task=task, run=run, connection=connection, approval=approval, now=now)
    emit(
        workspace_id=workspace.pk,
        type="run.started",
        entity_type="run",
        entity_id=run.run_id,
        payload={"runId": str(run.run_id), "taskId": task.pk, "leaseExpiresAt": iso(run.lease_expires_at)},
        epoch=run.epoch,
    )
    return ClaimResult(
        run=run,
        task=task,
        lease_token=token,
        context=context,
        resumed=False,
        hint=_claim_hint(run, token, task),
    )


def _not_startable(task: Task) -> WeftError:
    return invalid_argument(
        "id",
        f"task {task.pk} is in {task.column}; only Backlog and Todo tasks can be started",
        fix_hint=fix("get_my_work"),
    )


def _resume(*, live: Run, task: Task, connection: AgentConnection | None, now: datetime) -> ClaimResult:
    """The holder starts its own task again: same run, same epoch, the same token.

    The token is derived from (run, epoch), so every start_task of the holder — a retry after a
    timeout, two sub-agents on one connection, a new session that lost it — gets the one token
    the run has, and none of them loses the lease. The lease is renewed like a heartbeat; no
    epoch bump, no new run. The hash is written again so a run outlives a key rotation.
    """
    token = lease_token_for(run_id=live.run_id, epoch=live.epoch)
    expires = lease.renewed_expiry(live.lease_expires_at, now)
    changed = Run.objects.filter(pk=live.pk, state=live.state, lease_expires_at__gt=now).update(
        lease_token_hash=token_hash(token), last_heartbeat_at=now, lease_expires_at=expires
    )
    if changed != 1:
        raise lease_lost(live)
    live.lease_token_hash = token_hash(token)
    live.last_heartbeat_at = now
    live.lease_expires_at = expires
    approval = live.approval if live.approval_id else None
    context = _context(task=task, run=live, connection=connection, approval=approval, now=now)
    emit(
        workspace_id=live.workspace_id,
        type="run.resumed",
        entity_type="run",
        entity_id=live.run_id,
        payload={"runId": str(live.run_id), "taskId": task.pk, "leaseExpiresAt": iso(expires)},
        epoch=live.epoch,
    )
    return ClaimResult(
        run=live,
        task=task,
        lease_token=token,
        context=context,
        resumed=True,
        hint=_claim_hint(live, token, task),
    )


def run_heartbeat(
    *, workspace: Workspace, run_id: Any, lease_token: str, note: str, status: str | None = None
) -> RunResult:
    """Renew the lease to now + 20 minutes and record the progress note."""
    require_active_workspace(workspace)
    with within_limits():
        note = limits.text("note", note, limits.NOTE)
        status = limits.text("status", status, limits.STATUS)
    with transaction.atomic():
        now = clock.db_now()
        run = run_for_write(workspace.pk, run_id)
        changed = fenced(run=run, lease_token=lease_token, now=now).update(
            last_heartbeat_at=now,
            lease_expires_at=Greatest(F("lease_expires_at"), Value(lease.claim_expiry(now))),
        )
        if changed != 1:
            raise lease_lost(run)
        run.last_heartbeat_at = now
        run.lease_expires_at = lease.renewed_expiry(run.lease_expires_at, now)
        ProgressReport.objects.create(
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
    with transaction.atomic():
        now = clock.db_now()
        run = run_for_write(workspace.pk, run_id)
        changed = fenced(run=run, lease_token=lease_token, now=now).update(
            state=RunState.WAITING_INPUT,
            lease_expires_at=Greatest(F("lease_expires_at"), Value(now + lease.QUESTION_HOLD)),
        )
        if changed != 1:
            raise lease_lost(run)
        run.state = RunState.WAITING_INPUT
        run.lease_expires_at = lease.question_expiry(run.lease_expires_at, now)
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
        emit(
            workspace_id=workspace.pk,
            type="inbox.item_created",
            entity_type="inbox_item",
            entity_id=item.pk,
            payload={"itemId": item.pk, "kind": item.kind, "taskId": run.task_id},
        )
    hint = wait(
        f"a person answers question {asked.pk} on task {run.task_id} in the Inbox"
        f" (the claim holds until {iso(run.lease_expires_at)})",
        "get_my_work",
    )
    return QuestionResult(question=asked, item=item, run=run, hint=hint)


def _as_list(value: Any) -> list[Any]:
    """Evidence as given: None → [], a single value → [value], a list kept as is."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _artifact_problem(value: Any) -> str | None:
    """Why a piece of evidence cannot be checked as an artifact, or None when it can."""
    if not isinstance(value, dict):
        return "an artifact is an object {kind, uri, httpStatus?, sha256?}"
    kind, uri = value.get("kind"), value.get("uri")
    if kind not in ARTIFACT_KINDS:
        return f"unknown kind {kind!r}; one of {', '.join(ARTIFACT_KINDS)}"
    if not isinstance(uri, str) or not uri.strip():
        return "uri must be a non-empty string"
    if len(uri) > limits.URI:
        return f"uri is longer than {limits.URI} characters"
    if kind in ("url", "pr"):
        try:
            parts = urlsplit(uri)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            return "uri must be an http(s) URL with a host"
    status = value.get("httpStatus")
    if status is not None and (
        isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599
    ):
        return "httpStatus must be an HTTP status code from 100 to 599"
    digest = value.get("sha256")
    if digest is not None and not (
        isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdefABCDEF" for c in digest)
    ):
        return "sha256 must be 64 hexadecimal characters"
    extra = sorted(set(value) - ARTIFACT_FIELDS)
    if extra:
        return f"unknown fields {', '.join(map(str, extra))}"
    return None


def _kept(value: Any, reason: str, size: int) -> dict[str, Any]:
    """An unusable piece of evidence kept as given (cut to `size` characters of JSON if larger)."""
    text = json.dumps(value, default=str)
    if len(text) > size:
        return {"given": text[:size], "truncated": True, "unverifiable": reason}
    return {"given": value, "unverifiable": reason}


def _sorted_evidence(
    *, artifacts: Any, claims: Any, not_done: Any, unknowns: Any
) -> tuple[dict[str, list[Any]], list[dict[str, str]]]:
    """The evidence to store and what of it was not accepted (kept, marked, sent to a person).

    Limits on counts and on text raise LimitError (nothing stored); a piece that is the wrong
    shape is kept as given, marked unverifiable with the reason: losing finished work is worse
    than recording it unverified.
    """
    not_accepted: list[dict[str, str]] = []
    lists: dict[str, list[Any]] = {"artifacts": []}
    for index, artifact in enumerate(limits.at_most("artifacts", _as_list(artifacts), limits.ARTIFACTS)):
        problem = _artifact_problem(artifact)
        if problem is None and len(json.dumps(artifact)) > limits.ARTIFACT_JSON:
            problem = f"larger than {limits.ARTIFACT_JSON} characters of JSON"
        if problem is None:
            lists["artifacts"].append(artifact)
        else:
            lists["artifacts"].append(_kept(artifact, problem, limits.ARTIFACT_JSON))
            not_accepted.append({"field": f"artifacts[{index}]", "reason": problem})
    for name, field, value in (
        ("claims", "claims", claims),
        ("not_done", "notDone", not_done),
        ("unknowns", "unknowns", unknowns),
    ):
        lists[name] = []
        for index, item in enumerate(limits.at_most(field, _as_list(value), limits.EVIDENCE_ITEMS)):
            if isinstance(item, str):
                lists[name].append(limits.text(f"{field}[{index}]", item, limits.EVIDENCE_ITEM))
            else:
                reason = "a statement is a string"
                lists[name].append(_kept(item, reason, limits.EVIDENCE_ITEM))
                not_accepted.append({"field": f"{field}[{index}]", "reason": reason})
    return lists, not_accepted


def verify(checks: list[Any], artifacts: list[Any]) -> tuple[list[dict[str, Any]], bool | None]:
    """Run the task's verification checks against the artifacts; (results, all passed or None)."""
    kinds = {a.get("kind") for a in artifacts if isinstance(a, dict)}
    results: list[dict[str, Any]] = []
    for check in checks if isinstance(checks, list) else []:
        kind = check.get("kind") if isinstance(check, dict) else None
        if kind == "artifact_kind":
            wanted = check.get("value")
            ok = wanted in kinds
            results.append({"check": check, "passed": ok, "detail": f"an artifact of kind {wanted}"})
        elif kind == "artifact_present":
            results.append({"check": check, "passed": bool(artifacts), "detail": "at least one artifact"})
        else:
            results.append({"check": check, "passed": None, "detail": "unknown check kind, not run"})
    ran = [r["passed"] for r in results if r["passed"] is not None]
    return results, (all(ran) if ran else None)


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
) -> CompleteResult:
    """Record the report; the task goes to Done, or to the Inbox for review. Never fails for evidence.

    Evidence that cannot be checked is kept as given, marked unverifiable, listed in the
    response, and sends the task to a person. Only a lease not held, a missing outcome or a
    value past its documented limit refuses the call.
    """
    require_active_workspace(workspace)
    with within_limits():
        outcome = limits.text("outcome", outcome, limits.OUTCOME, required=True)
        next_step = limits.text("nextStep", next_step, limits.NEXT_STEP)
        limits.without_nul_anywhere("evidence", [artifacts, claims, not_done, unknowns])
        evidence, not_accepted = _sorted_evidence(
            artifacts=artifacts, claims=claims, not_done=not_done, unknowns=unknowns
        )
    with transaction.atomic():
        now = clock.db_now()
        run = run_for_write(workspace.pk, run_id)
        changed = fenced(run=run, lease_token=lease_token, now=now).update(
            state=RunState.COMPLETED, lease_token_hash="", ended_at=now, end_reason="completed"
        )
        if changed != 1:
            raise lease_lost(run)
        run.state = RunState.COMPLETED
        run.lease_token_hash = ""
        run.ended_at = now
        task = run.task
        usable = [a for a in evidence["artifacts"] if "unverifiable" not in a]
        verification, passed = verify(task.checks, usable)
        report = Report.objects.create(
            workspace_id=workspace.pk,
            task=task,
            run=run,
            outcome=outcome,
            next_step=next_step,
            not_accepted=not_accepted,
            verification=verification,
            verification_passed=passed,
            created_at=now,
            **evidence,
        )
        review = task.review_required or passed is False or bool(not_accepted)
        item = None
        if review:
            # The task waits in Doing, unassigned, until a person decides the review.
            task.column = Column.DOING
            item = InboxItem.objects.create(
                workspace_id=workspace.pk,
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
        emit(
            workspace_id=workspace.pk,
            type="run.completed",
            entity_type="run",
            entity_id=run.run_id,
            payload={"runId": str(run.run_id), "taskId": task.pk, "review": review, "reportId": report.pk},
            epoch=run.epoch,
        )
        if item is not None:
            emit(
                workspace_id=workspace.pk,
                type="inbox.item_created",
                entity_type="inbox_item",
                entity_id=item.pk,
                payload={"itemId": item.pk, "kind": item.kind, "taskId": task.pk},
            )
    if item is not None:
        hint = wait(f"a person reviews task {task.pk} in the Inbox", "get_my_work")
    else:
        hint = next_("get_my_work")
    return CompleteResult(run=run, task=task, report=report, inbox_item=item, hint=hint)


def run_release(*, workspace: Workspace, run_id: Any, lease_token: str, reason: str) -> RunResult:
    """Give the task back on purpose: Todo, unassigned, epoch bumped (the old token is fenced off)."""
    require_active_workspace(workspace)
    with within_limits():
        reason = limits.text("reason", reason, limits.REASON)
    with transaction.atomic():
        now = clock.db_now()
        run = run_for_write(workspace.pk, run_id)
        changed = fenced(run=run, lease_token=lease_token, now=now).update(
            state=RunState.RELEASED,
            lease_token_hash="",
            ended_at=now,
            end_reason=reason or "released",
        )
        if changed != 1:
            raise lease_lost(run)
        run.state = RunState.RELEASED
        run.ended_at = now
        release_task_row(run.task_id, now)
        emit(
            workspace_id=workspace.pk,
            type="run.released",
            entity_type="run",
            entity_id=run.run_id,
            payload={"runId": str(run.run_id), "taskId": run.task_id, "reason": reason or ""},
            epoch=run.epoch + 1,
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
