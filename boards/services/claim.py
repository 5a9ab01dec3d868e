"""The claim (start_task): task_claim, as a list of named steps.

1. `_resumed` — the task's live run (`_holders_run`): an expired one is expired first; the
   caller's own is resumed (`_resume`, judged once more if it changed meanwhile); another
   holder's refuses the claim as already_claimed.
2. `_admit` — the task may be started: on a live board, in Backlog or Todo (Done with an approved
   step), and the workspace's attention has room unless an approved step is being started.
3. `_take` — the claim itself: a conditional UPDATE of the task on (epoch, column) that must
   change exactly one row; concurrent claimers queue on the row lock and all but the first then
   match nothing (`_after_lost_race`).
4. `_started` — the run is inserted (guarded by the unique partial index `one_live_run_per_task`;
   a refusal there is already_claimed too), with its context (`_context`) and its event.

On PostgreSQL an agent's claim first tries the common case as one statement (`fast.claim`: a
free task, no approval or answer to hand over, room in the attention budget — steps 2 to 4 at
once); when the state is any other, that statement changes nothing and the steps run.

The lease itself is the pure rules' (`lease.claim`, `lease.step`); these steps apply it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.db import IntegrityError, close_old_connections, transaction

from accounts.access import require_active_workspace
from accounts.models import AgentConnection, User, Workspace
from boards import attention as attention_rules
from boards import clock, lease
from boards.access import access_task
from boards.models import Approval, Column, InboxItem, ProgressNote, Question, Run, Task
from boards.payloads import iso, question_payload
from boards.results import ClaimResult
from boards.services import fast
from boards.services.common import (
    CLAIMABLE_COLUMNS,
    already_claimed,
    attention_full,
    attention_now,
    expire_run,
    lease_lost,
    lease_token_for,
    token_hash,
)
from boards.services.delivery import deliver_answers, mark_delivered, valid_approval
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import Hint, fix, next_


@dataclass(frozen=True)
class _Claimer:
    """Who claims: an agent's connection, or a person (user) in a workspace."""

    workspace: Workspace
    connection: AgentConnection | None
    user: User | None

    def holds(self, run: Run) -> bool:
        if self.connection is not None:
            return run.connection_id == self.connection.pk
        return self.user is not None and run.connection_id is None and run.user_id == self.user.pk


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
    claimer = _Claimer(ws, connection, user)
    try:
        started = _fast_claim(claimer, task_id)
        if started is not None:
            return started
        with transaction.atomic():
            return _claim(claimer, task_id)
    except IntegrityError:
        # The unique partial index refused a second live run: another claimer won the race.
        task = access_task(ws, task_id)
        raise already_claimed(task, _live_run(task)) from None


def _claim(claimer: _Claimer, task_id: Any) -> ClaimResult:
    now = clock.db_now()
    task = access_task(claimer.workspace, task_id, with_board=True)
    resumed = _resumed(claimer, task, now)
    if resumed is not None:
        return resumed
    approval = _admit(claimer, task, now)
    started = lease.claim(task.epoch, now)
    if not _take(claimer, task, started, now):
        return _after_lost_race(claimer, task, now)
    return _started(claimer, task, started, approval, now)


def _fast_claim(claimer: _Claimer, task_id: Any) -> ClaimResult | None:
    """The common claim in one statement (PostgreSQL, an agent); None when it does not apply.

    One statement is one transaction of its own: the relay runs when it commits."""
    if claimer.connection is None or not fast.enabled() or not steps_as_written():
        return None
    claimed = fast.claim(
        workspace_id=claimer.workspace.pk, task_id=task_id, connection_id=claimer.connection.pk
    )
    return _fast_result(*claimed) if claimed is not None else None


async def task_claim_in_loop(*, task_id: Any, connection: AgentConnection) -> ClaimResult | None:
    """An agent's claim from the event loop, when it is the common one (`fast.claim_in_loop`, on the
    loop's pool); None, having changed nothing, otherwise — then `task_claim` runs in a thread.
    The caller has checked the workspace (the MCP gate, weft.mcp.gate)."""
    if not steps_as_written():
        return None
    claimed = await fast.claim_in_loop(
        workspace_id=connection.workspace_id, task_id=task_id, connection_id=connection.pk
    )
    return await claimed_in_loop(*claimed) if claimed is not None else None


async def claimed_in_loop(task: Task, run: Run) -> ClaimResult:
    """The answer to a claim made from the event loop. Only a task claimed before (its previous
    run's notes) or assigned to someone (the assignee's name) needs the ORM: then in a thread."""
    if run.epoch > 1 or task.assigned_user_id is not None or task.assigned_connection_id is not None:
        return await sync_to_async(_fast_result_read, thread_sensitive=False)(task, run)
    return _fast_result(task, run)


def _fast_result(task: Task, run: Run) -> ClaimResult:
    token = lease_token_for(run_id=run.run_id, epoch=run.epoch)
    context = _context_of(task, run, approval=None, answers=[])
    return ClaimResult(
        run=run, task=task, lease_token=token, context=context, resumed=False, hint=_hint(run, token)
    )


def _fast_result_read(task: Task, run: Run) -> ClaimResult:
    close_old_connections()
    try:
        _ = task.assigned_user, task.assigned_connection  # loaded here, shown by the answer
        return _fast_result(task, run)
    finally:
        close_old_connections()


def steps_as_written() -> bool:
    """The statement is `_admit`, `_take` and `_started` at once: when one of them is replaced at
    run time (a test that puts a rival write between two of them), the steps run one by one."""
    return (_admit, _take, _started) == _STEPS


def _live_run(task: Task) -> Run | None:
    """The task's live run, if any. The unique partial index `one_live_run_per_task` allows at most
    one, so a bare LIMIT 1 suffices: `.first()` would add an ORDER BY the database must honour."""
    rows = Run.objects.select_related("connection", "user").filter(task=task, state__in=lease.LIVE_STATES)
    return next(iter(rows.order_by()[:1]), None)


def _resumed(claimer: _Claimer, task: Task, now: datetime) -> ClaimResult | None:
    """The caller's own live run of the task, resumed; None when the task is free to claim."""
    own = _holders_run(claimer, task, now)
    resumed = _resume(claimer, own, task, now) if own is not None else None
    if own is None or resumed is not None:
        return resumed
    # The run changed between our read and our write (a sweep expired it, or another call of the
    # holder asked or ended it): judge the task once more, as it is now.
    task.refresh_from_db()
    own = _holders_run(claimer, task, now)
    resumed = _resume(claimer, own, task, now) if own is not None else None
    if own is not None and resumed is None:
        raise lease_lost(own)
    return resumed


def _holders_run(claimer: _Claimer, task: Task, now: datetime) -> Run | None:
    """The caller's own live run of the task, to resume; None when the task is free to claim."""
    if task.column == Column.TRASH:
        raise _not_startable(task)
    live = _live_run(task)
    if live is None:
        if task.column == Column.DOING:
            # The task was read in Doing but no run is live now: a sweep or a release ended the
            # run between the two reads and put the task back. Judge the task as it is now.
            task.refresh_from_db()
        return None
    if lease.is_expired(live.state, live.lease_expires_at, now):
        # Expired at read time: apply the expiry here, whether or not a sweep has run.
        expire_run(live, now)
        task.refresh_from_db()
        return None
    if claimer.holds(live):
        return live
    raise already_claimed(task, live)


def _admit(claimer: _Claimer, task: Task, now: datetime) -> Approval | None:
    """Refuse a task that cannot be started now; the approval the claim starts on, if any."""
    if task.board.archived_at is not None:
        # Held work goes on (`_resumed` ran first); an archived board's tasks are not started anew.
        raise invalid_argument(
            "id",
            f"task {task.pk} is on board {task.board.name}, which is archived; a person restores the board"
            " before its tasks are started",
            fix_hint=fix("get_my_work"),
        )
    approval = valid_approval(task=task, connection=claimer.connection, now=now)
    startable = task.column in CLAIMABLE_COLUMNS or (approval is not None and task.column == Column.DONE)
    if not startable:
        raise _not_startable(task)
    if approval is None:
        attention = attention_now(claimer.workspace.pk, now)
        if not attention_rules.admits(attention, approved_step=False):
            raise attention_full(attention)
    return approval


def _take(claimer: _Claimer, task: Task, started: lease.Lease, now: datetime) -> bool:
    """Move the task to Doing at the lease's epoch; False when someone else moved it first."""
    changed = Task.objects.filter(pk=task.pk, epoch=task.epoch, column=task.column).update(
        epoch=started.epoch,
        column=Column.DOING,
        assignee_connection=claimer.connection,
        assignee_user=claimer.user,
        updated_at=now,
    )
    if changed != 1:
        return False
    task.epoch = started.epoch
    task.column = Column.DOING
    task.assignee_connection = claimer.connection
    task.assignee_user = claimer.user
    task.updated_at = now
    return True


def _after_lost_race(claimer: _Claimer, task: Task, now: datetime) -> ClaimResult:
    """Another claim moved the task first: the caller's own run back, else already_claimed (or,
    when a person moved the task out of Backlog and Todo meanwhile, the refusal that says where it is).

    Our UPDATE waited on the winner's row lock until it committed, so its run is visible now.
    When the winner is this same holder (an agent retrying start_task while the first call is
    still running) the call is the idempotent restart and gets the run back, as it would one
    moment later.
    """
    holder = _live_run(task)
    read_column = task.column
    task.refresh_from_db()
    if (
        holder is not None
        and claimer.holds(holder)
        and not lease.is_expired(holder.state, holder.lease_expires_at, now)
    ):
        resumed = _resume(claimer, holder, task, now)
        if resumed is None:
            raise lease_lost(holder)
        return resumed
    if holder is None and task.column != read_column and task.column not in CLAIMABLE_COLUMNS:
        # Nobody claimed it: a person moved the task (to Done, Dropped, the trash) meanwhile.
        raise _not_startable(task)
    raise already_claimed(task, holder)


def _started(
    claimer: _Claimer, task: Task, started: lease.Lease, approval: Approval | None, now: datetime
) -> ClaimResult:
    """The new run of a task just taken, with its token, context and `run.started` event."""
    assert started.expires_at is not None
    run_id = uuid.uuid4()
    token = lease_token_for(run_id=run_id, epoch=started.epoch)
    run = Run.objects.create(
        run_id=run_id,
        workspace=claimer.workspace,
        task=task,
        connection=claimer.connection,
        user=claimer.user,
        lease_token_hash=token_hash(token),
        epoch=started.epoch,
        state=started.state,
        started_at=now,
        last_heartbeat_at=now,
        lease_expires_at=started.expires_at,
        approval=approval,
    )
    context = _context(claimer, task=task, run=run, approval=approval, now=now)
    _emit_claimed("run.started", run, task)
    return ClaimResult(
        run=run, task=task, lease_token=token, context=context, resumed=False, hint=_hint(run, token)
    )


def _resume(claimer: _Claimer, live: Run, task: Task, now: datetime) -> ClaimResult | None:
    """The holder starts its own task again: same run, same epoch, the same token; None when the
    run changed since it was read.

    The token is derived from (run, epoch), so every start_task of the holder — a retry after a
    timeout, two sub-agents on one connection, a new session that lost it — gets the one token
    the run has, and none of them loses the lease. The lease is renewed like a heartbeat; no
    epoch bump, no new run. The hash is written again so a run outlives a key rotation.
    """
    token = lease_token_for(run_id=live.run_id, epoch=live.epoch)
    try:
        renewed = lease.step(lease.Lease(live.state, live.epoch, live.lease_expires_at), "heartbeat", now)
    except lease.LeaseLost:
        return None
    assert renewed.expires_at is not None
    # The state as read: a question, an answer or a sweep since then makes this match nothing, and
    # the claim judges the run once more. (Only a heartbeat changes the expiry alone, to about the
    # same value.)
    changed = Run.objects.filter(pk=live.pk, state=live.state, lease_expires_at__gt=now).update(
        lease_token_hash=token_hash(token), last_heartbeat_at=now, lease_expires_at=renewed.expires_at
    )
    if changed != 1:
        return None
    live.lease_token_hash = token_hash(token)
    live.last_heartbeat_at = now
    live.lease_expires_at = renewed.expires_at
    approval = live.approval
    context = _context(claimer, task=task, run=live, approval=approval, now=now)
    _emit_claimed("run.resumed", live, task)
    return ClaimResult(
        run=live, task=task, lease_token=token, context=context, resumed=True, hint=_hint(live, token)
    )


def _emit_claimed(type: str, run: Run, task: Task) -> None:
    emit(
        workspace_id=run.workspace_id,
        type=type,
        entity_type="run",
        entity_id=run.run_id,
        payload={"runId": str(run.run_id), "taskId": task.pk, "leaseExpiresAt": iso(run.lease_expires_at)},
        epoch=run.epoch,
    )


def _hint(run: Run, token: str) -> Hint:
    return next_(
        "report_progress",
        {"runId": str(run.run_id), "leaseToken": token, "note": f"working on task {run.task_id}"},
    )


def _not_startable(task: Task) -> WeftError:
    return invalid_argument(
        "id", f"task {task.pk} is in {task.column}; only Backlog and Todo tasks can be started"
    )


def _context(
    claimer: _Claimer, *, task: Task, run: Run, approval: Approval | None, now: datetime
) -> dict[str, Any]:
    """What the agent needs to pick the task up: description, last run, rework notes, approved
    step, answers (the approval and the answers are delivered by this)."""
    if approval is not None and approval.delivered_at is None:
        mark_delivered(approval, now)
    answers = deliver_answers(connection=claimer.connection, task=task, now=now)
    return _context_of(task, run, approval=approval, answers=answers)


def _context_of(
    task: Task, run: Run, *, approval: Approval | None, answers: list[Question]
) -> dict[str, Any]:
    last_notes, rework = _previous_run_notes(task, run)
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


def _previous_run_notes(task: Task, run: Run) -> tuple[list[str], list[str]]:
    """The previous run's last progress notes and outcome, and the rework notes it was sent back with."""
    # Every claim bumps the task's epoch (from 0) and its run carries the bumped value, and epochs
    # only grow; so a run at epoch 1 is the task's first and there is no earlier run to read.
    # That skips the lookup on a first claim, the common case. The run is the task's newest (no
    # run starts while it is live), so every other run of the task started before it.
    if run.epoch <= 1:
        return [], []
    previous = (
        Run.objects.select_related("report")
        .filter(task=task)
        .exclude(pk=run.pk)
        .order_by("-started_at", "-pk")
        .first()
    )
    if previous is None:
        return [], []
    notes = ProgressNote.objects.filter(run=previous).order_by("-created_at", "-pk")[:5]
    last_notes = [p.note for p in reversed(list(notes))]
    report = getattr(previous, "report", None)  # a run ended without completing has none
    if report is not None:
        last_notes.append(f"outcome: {report.outcome}")
        if report.next_step:
            last_notes.append(f"next step: {report.next_step}")
    rework = [
        item.note
        for item in InboxItem.objects.filter(run=previous, decision="rework").order_by("decided_at", "pk")
        if item.note
    ]
    return last_notes, rework


_STEPS = (_admit, _take, _started)
