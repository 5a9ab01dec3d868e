"""A person's own work on a task: person_start, person_stop, person_move (the board's Move).

A person's run is a Run with `user` set and no connection. It is bound by the same rules as an
agent's claim: the unique partial index `one_live_run_per_task`, the epoch bump of every claim
and release, and a lease whose expiry the database clock decides (`boards.lease`).

How long it lasts: people send no heartbeats, so a person's lease is PERSON_LEASE (7 days) from
when they start, renewed each time they press Start again. It does expire: a task a person
started and forgot goes back to Todo after a week, claimable by anyone, like any lease that ran
out (read-time expiry and the sweep treat it as every other run).

Attention: the limits are admission control for agents (what waits on people); a person's own
work adds nothing to that count, so starting is never refused for it, and a person's run creates
no Inbox item.

It ends when the person moves the task on: to Done (`person_move` completes the run:
`run.completed`, then `task.moved`), back to Todo or Backlog (released by `task_move`), or Stop
(`person_stop`: released, the task back to Todo). Agents see the task as held: their start_task
answers `already_claimed`, naming the person.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction

from accounts.models import User
from boards import clock, lease
from boards.models import Column, Run, Task
from boards.payloads import iso
from boards.results import TaskResult
from boards.services.board import end_live_run, locked_task, task_move
from boards.services.common import (
    CLAIMABLE_COLUMNS,
    already_claimed,
    expire_run,
    lease_token_for,
    token_hash,
)
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import fix

PERSON_LEASE = timedelta(days=7)


@dataclass(frozen=True)
class PersonRun:
    """person_start: the person's run of the task; `resumed` when they already held it."""

    run: Run
    task: Task
    resumed: bool


def person_expiry(now: datetime) -> datetime:
    return now + PERSON_LEASE


def holds(user: User, run: Run) -> bool:
    """Is `run` this person's own (not an agent's they connected)?"""
    return run.connection_id is None and run.user_id == user.pk


def _held_by(user: User, run: Run, now: datetime) -> bool:
    return holds(user, run) and lease.is_live(run.state, run.lease_expires_at, now)


def person_start(*, task: Task, user: User) -> PersonRun:
    """A person starts a task (Backlog or Todo → Doing) with a lease held by them.

    The task row is locked first: an agent's claim racing this one either committed before (the
    task is then held: already_claimed) or waits on the lock and then matches no row (its
    conditional UPDATE on the old epoch), and answers already_claimed naming this person.
    """
    try:
        with transaction.atomic():
            return _start(task, user)
    except IntegrityError:
        # The unique partial index refused a second live run: someone else started it first.
        current = Task.objects.get(pk=task.pk)
        raise already_claimed(current, _live(current)) from None


def _start(task: Task, user: User) -> PersonRun:
    now = clock.db_now()
    current = locked_task(task)
    live = _live(current)
    if live is not None and lease.is_expired(live.state, live.lease_expires_at, now):
        expire_run(live, now)
        current, live = locked_task(task), None
    if live is not None:
        if not holds(user, live):
            raise already_claimed(current, live)
        return _renew(live, current, now)
    if current.board.archived_at is not None:
        raise invalid_argument(
            "id",
            f"task {current.pk} is on board {current.board.name}, which is archived; restore the board first",
        )
    if current.column not in CLAIMABLE_COLUMNS:
        where = current.get_column_display()
        raise invalid_argument(
            "id", f"task {current.pk} is in {where}; only Backlog and Todo tasks can be started"
        )
    started = replace(lease.claim(current.epoch, now), expires_at=person_expiry(now))
    assert started.expires_at is not None
    Task.objects.filter(pk=current.pk).update(
        epoch=started.epoch, column=Column.DOING, assignee_connection=None, assignee_user=user, updated_at=now
    )
    current.refresh_from_db()
    run = Run(workspace_id=current.workspace_id, task=current, user=user, epoch=started.epoch)
    run.lease_token_hash = token_hash(lease_token_for(run_id=run.run_id, epoch=started.epoch))
    run.state, run.started_at, run.last_heartbeat_at = started.state, now, now
    run.lease_expires_at = started.expires_at
    run.save(force_insert=True)
    _emit_run("run.started", run, current, user)
    return PersonRun(run=run, task=current, resumed=False)


def _renew(live: Run, task: Task, now: datetime) -> PersonRun:
    """The holder presses Start again: the same run, its lease renewed to PERSON_LEASE from now."""
    expires = max(live.lease_expires_at, person_expiry(now))
    Run.objects.filter(pk=live.pk, state__in=lease.LIVE_STATES).update(
        last_heartbeat_at=now, lease_expires_at=expires
    )
    live.last_heartbeat_at, live.lease_expires_at = now, expires
    _emit_run("run.resumed", live, task, live.user)
    return PersonRun(run=live, task=task, resumed=True)


def person_stop(*, task: Task, user: User) -> Run:
    """The person gives their task back: the run is released, the task goes back to Todo."""
    with transaction.atomic():
        now = clock.db_now()
        current = locked_task(task)
        live = _live(current)
        if live is None or not _held_by(user, live, now):
            raise not_yours(current, live)
        end_live_run(current, now, f"stopped by {user.display_name}")
    live.refresh_from_db()
    return live


def person_move(*, task: Task, column: str, position: float | None = None, by_user: User) -> TaskResult:
    """The board's Move for a person. Their own run moved to Done is completed (`run.completed`,
    then the move's `task.moved`); any other move is task_move's, which releases a live run."""
    with transaction.atomic():
        now = clock.db_now()
        current = locked_task(task)
        live = _live(current) if column == Column.DONE else None
        if live is not None and _held_by(by_user, live, now):
            _complete(live, current, now, by_user)
        return task_move(task=current, column=column, position=position, by_user=by_user)


def _complete(run: Run, task: Task, now: datetime, user: User) -> None:
    after = lease.step(lease.Lease(run.state, run.epoch, run.lease_expires_at), "complete", now)
    changed = Run.objects.filter(pk=run.pk, state=run.state).update(
        state=after.state, lease_token_hash="", ended_at=now, end_reason=f"finished by {user.display_name}"
    )
    if not changed:
        return
    Task.objects.filter(pk=task.pk).update(assignee_user=None, assignee_connection=None, updated_at=now)
    emit(
        workspace_id=run.workspace_id,
        type="run.completed",
        entity_type="run",
        entity_id=run.run_id,
        payload={"runId": str(run.run_id), "taskId": task.pk, "review": False, "reportId": None},
        epoch=run.epoch,
    )


def _live(task: Task) -> Run | None:
    rows = Run.objects.select_related("connection", "user").filter(task=task, state__in=lease.LIVE_STATES)
    return next(iter(rows.order_by()[:1]), None)


def _emit_run(type: str, run: Run, task: Task, user: User | None) -> None:
    """run.started / run.resumed of a person's run: the agents' payload, and who the person is."""
    payload = {"runId": str(run.run_id), "taskId": task.pk, "leaseExpiresAt": iso(run.lease_expires_at)}
    payload["userId"] = user.pk if user is not None else None
    emit(
        workspace_id=run.workspace_id,
        type=type,
        entity_type="run",
        entity_id=run.run_id,
        payload=payload,
        epoch=run.epoch,
    )


def not_yours(task: Task, live: Run | None) -> WeftError:
    """Stop on a task the person does not hold (nobody does, or someone else)."""
    return WeftError(
        "lease_lost",
        f"you do not hold task {task.pk}; nothing was changed",
        details={"taskId": task.pk, "column": task.column},
        fix=fix("get_task", {"id": task.pk}),
    )
