"""Shared pieces of the board services: token hashing, the lease fence, expiry, attention, errors."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from typing import Any

from django.conf import settings
from django.db.models import (
    Case,
    Count,
    F,
    FilteredRelation,
    Min,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)

from accounts.models import Seat, Workspace
from boards import attention as attention_rules
from boards import lease, queries
from boards.limits import LimitError
from boards.models import Column, Run, Task
from boards.payloads import holder_name, iso
from weft.errors import WeftError
from weft.events import emit
from weft.hints import Hint, fix, wait

CLAIMABLE_COLUMNS = (Column.BACKLOG, Column.TODO)
LEASE_TOKEN_SALT = "weft.boards.lease-token"
# Estimated minutes of a person's attention one question takes.
QUESTION_MINUTES = 2


def lease_token_for(*, run_id: uuid.UUID, epoch: int) -> str:
    """The run's lease token: HMAC of (run id, epoch) under the server's key.

    Derived rather than random so that every start_task by the holder hands back the same
    token for the whole run (only its hash is stored, so a random one could not be given
    again). Lowercase hex, so it never reads as a placeholder inside a hint. Rotating
    SECRET_KEY ends every live lease (lease_lost; start_task gets the run back).
    """
    return hmac.digest(lease_key(settings.SECRET_KEY), f"{run_id}:{epoch}".encode(), "sha256").hex()


@cache
def lease_key(secret: str) -> bytes:
    """The lease tokens' HMAC key: Django's `salted_hmac` key for LEASE_TOKEN_SALT, derived once."""
    return hashlib.sha256(LEASE_TOKEN_SALT.encode() + secret.encode()).digest()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def fenced(*, run: Run, lease_token: str, now: datetime) -> QuerySet[Run]:
    """The rows a lease-guarded write may change: this run, this token, the task's current epoch,
    a live state and an unexpired lease. Every guarded write is one UPDATE on this queryset, and
    0 changed rows means lease_lost.
    """
    task_epoch = Task.objects.filter(pk=OuterRef("task_id")).values("epoch")[:1]
    return Run.objects.filter(
        queries.held(now),
        pk=run.pk,
        lease_token_hash=token_hash(lease_token or ""),
        epoch=Subquery(task_epoch),
    )


def run_for_write(workspace_id: int, run_id: Any) -> Run:
    """The run a lease-guarded call names, locked; an unknown or foreign run id is lease_lost too."""
    try:
        ident = uuid.UUID(str(run_id))
    except ValueError:
        found = None  # a run id that is not a UUID cannot name a run
    else:
        # Locked (the run row only) for the rest of the write, so the lease the rules step from
        # is the one the fenced UPDATE replaces.
        runs = Run.objects.select_for_update(of=("self",)).select_related("task")
        found = runs.filter(workspace_id=workspace_id, run_id=ident).first()
    if found is None:
        raise WeftError(
            "lease_lost",
            f"run {run_id} holds no lease in this workspace",
            details={"runId": str(run_id)},
            fix=fix("get_my_work"),
        )
    return found


def lease_lost(run: Run) -> WeftError:
    task = run.task
    claimable = task.column in (*CLAIMABLE_COLUMNS, Column.DOING)
    return WeftError(
        "lease_lost",
        f"run {run.run_id} no longer holds task {task.pk} (expired, released or superseded);"
        " nothing was changed",
        details={"runId": str(run.run_id), "taskId": task.pk, "epoch": task.epoch},
        fix=fix("start_task", {"id": task.pk}) if claimable else fix("get_my_work"),
    )


def already_claimed(task: Task, holder: Run | None) -> WeftError:
    name = holder_name(holder) if holder is not None else "another claimer"
    until = iso(holder.lease_expires_at) if holder is not None else None
    when = f" until {until}" if until else ""
    return WeftError(
        "already_claimed",
        f"task {task.pk} is held by {name}{when}; do not duplicate the work",
        details={"taskId": task.pk, "holder": name, "until": until},
        fix=fix("get_my_work"),
    )


def expire_run(run: Run, now: datetime) -> bool:
    """Mark one expired live run stale (or released, when a question hold ran out).

    A conditional UPDATE on the run's state and expiry: a concurrent sweep or claim that got
    there first leaves 0 rows, and then nothing else happens here. On success the task's epoch
    is bumped (fencing any old token) and a task left in Doing goes back to Todo, unassigned.
    """
    try:
        after = lease.step(lease.Lease(run.state, run.epoch, run.lease_expires_at), "expire", now)
    except lease.LeaseLost:
        return False
    reason = "question hold ran out" if after.state == lease.RELEASED else "no heartbeat for 20 minutes"
    if run.connection_id is None and run.user_id is not None:
        reason = "the person's 7-day lease ran out"  # people send no heartbeats (services.person)
    changed = Run.objects.filter(pk=run.pk, state=run.state, lease_expires_at__lte=now).update(
        state=after.state, lease_token_hash="", ended_at=now, end_reason=reason
    )
    if not changed:
        return False
    release_task_row(run.task_id, now)
    emit(
        workspace_id=run.workspace_id,
        type=f"run.{after.state}",
        entity_type="run",
        entity_id=run.run_id,
        payload={"runId": str(run.run_id), "taskId": run.task_id, "reason": reason},
        epoch=after.epoch,
    )
    return True


def release_task_row(task_id: int, now: datetime) -> None:
    """The task side of a lease ending early: epoch bumped, back to Todo from Doing, unassigned."""
    Task.objects.filter(pk=task_id).update(
        epoch=F("epoch") + 1,
        column=Case(When(column=Column.DOING, then=Value(Column.TODO)), default=F("column")),
        assignee_connection=None,
        assignee_user=None,
        updated_at=now,
    )


def attention_now(workspace_id: int, now: datetime) -> attention_rules.Attention:
    """The workspace's attention state in one query: the waiting items' count, minutes and oldest
    creation time, and the number of seats (which sets the item limit).

    The waiting items are joined through a FilteredRelation, so the waiting condition sits in the
    join's ON clause: only open and snoozed rows are joined (decided history is not aggregated),
    and a workspace with none still yields its one row. Seats are a scalar subquery, not a second
    join, which would multiply the inbox rows and inflate the sums.
    """
    seats = (
        Seat.objects.filter(workspace_id=OuterRef("pk"))
        .order_by()
        .values("workspace_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    row = (
        Workspace.objects.filter(pk=workspace_id)
        .annotate(waiting=FilteredRelation("inbox", condition=queries.waiting(now, via="inbox")))
        .values("pk")
        .annotate(
            n=Count("waiting__id"),
            minutes=Sum("waiting__estimated_minutes"),
            oldest=Min("waiting__created_at"),
            people=Subquery(seats),
        )
        .values("n", "minutes", "oldest", "people")
        .get()
    )
    return attention_rules.assess(
        waiting=row["n"] or 0,
        minutes=row["minutes"] or 0,
        oldest_at=row["oldest"],
        people=row["people"] or 0,
        now=now,
    )


def attention_full(attention: attention_rules.Attention) -> WeftError:
    return WeftError(
        "attention_queue_full",
        attention_rules.refusal_message(attention),
        details=attention_rules.refusal_details(attention),
        fix=wait(f"{attention_rules.refusal_condition(attention)}, in about 10 minutes", "get_my_work"),
    )


def attention_wait(attention: attention_rules.Attention) -> Hint:
    return wait(f"{attention_rules.refusal_condition(attention)}, in about 10 minutes", "get_my_work")


@contextmanager
def within_limits() -> Iterator[None]:
    """Values checked by boards.limits inside the block; one past its limit is invalid_argument."""
    try:
        yield
    except LimitError as error:
        raise limit_error(error) from None


def limit_error(error: LimitError) -> WeftError:
    """A value past its documented limit (boards/limits.py), as invalid_argument.

    The details name the argument path, the problem and the limit, so the MCP surface can
    answer with the same call corrected (a cut to the limit).
    """
    details: dict[str, Any] = {"field": error.field, "reason": error.reason, "problem": error.problem}
    if error.limit is not None:
        details["limit"] = error.limit
    return WeftError(
        "invalid_argument", f"{error.field}: {error.reason}", details=details, fix=fix("get_board_state")
    )


def forbidden(message: str, *, condition: str, task: Task) -> WeftError:
    """An act that is a person's (deciding a review, dropping, waiving review): refused to agents."""
    return WeftError(
        "forbidden",
        message,
        details={"taskId": task.pk, "column": task.column},
        fix=wait(condition, "get_task", {"id": task.pk}),
    )
