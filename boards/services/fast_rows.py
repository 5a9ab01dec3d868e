"""The instances a one-statement claim's or completion's row stands for (boards.services.fast).

Each statement's last SELECT (CLAIM_FINAL, COMPLETE_FINAL) returns the columns its answer is
built from; the gate riding on a statement puts its own row in front (weft.mcp.gate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Model

from boards import lease
from boards.models import InboxItem, InboxKind, InboxState, Report, Run, Task
from weft.events import attach, instance_from_row, partial_instance

# The statements' last SELECTs: the gate riding on one puts it after its own (weft.mcp.gate).
# A claim's row: the task as it now is, and of its new run what the statement decided (its id and
# lease); the rest of the run is the call's values (`claimed_row`).
_CLAIMED_RUN = ("run.id", "run.lease_expires_at")
CLAIM_RUN = ", ".join(_CLAIMED_RUN)
CLAIM_FINAL = f"SELECT task.*, {CLAIM_RUN} FROM task, run"  # noqa: S608 (the statements' own text)
# A completion's row holds what the statement decided and the call did not send: the ids, the
# task's column, the instant, the review item's minutes. The rest of the run, report and item is
# what the statement wrote from the call's values (`completed_from` fills it in): read back, the
# report's lists were decoded again and every timestamp parsed, on every call.
_COMPLETED = (
    "run.id", "run.task_id", "run.epoch", "run.ended_at", 'task."column"', "report.id", "item.id",
    "item.estimated_minutes",
)  # fmt: skip
COMPLETE_FINAL = (
    f"SELECT {', '.join(_COMPLETED)} "  # noqa: S608 (the statements' own text)
    "FROM run CROSS JOIN task CROSS JOIN report LEFT JOIN item ON true"
)


@dataclass(frozen=True)
class Completed:
    run: Run
    task: Task
    report: Report
    item: InboxItem | None


def _width(model: type[Model]) -> int:
    return len(model._meta.concrete_fields)


def claimed_row(
    row: tuple[Any, ...], *, workspace_id: int, connection_id: int, run_id: Any
) -> tuple[Task, Run]:
    """The claimed task and its new run (CLAIM_FINAL's row), the run as the claim wrote it for
    `connection_id` under `run_id`: begun at the task's update, its lease token's hash deferred."""
    task = instance_from_row(Task, row)
    pk, expires = row[_width(Task) : _width(Task) + len(_CLAIMED_RUN)]
    began = task.updated_at
    started = {"started_at": began, "last_heartbeat_at": began, "lease_expires_at": expires}
    run = partial_instance(
        Run,
        {
            "id": pk,
            "workspace_id": workspace_id,
            "task_id": task.pk,
            "run_id": run_id,
            "connection_id": connection_id,
            "user_id": None,
            "epoch": task.epoch,
            "state": lease.ACTIVE,
            **started,
            "ended_at": None,
            "end_reason": "",
            "approval_id": None,
        },
    )
    attach(run, "task", task)
    return task, run


def completed_width() -> int:
    """The columns of COMPLETE_FINAL's row."""
    return len(_COMPLETED)


def completed_from(row: tuple[Any, ...], params: dict[str, Any], lists: dict[str, Any]) -> Completed:
    """The completion's instances: what the statement returned (COMPLETE_FINAL) and what it wrote
    from the call's values (`params`, completion_of's, and the report's `lists`). The run and task
    hold what the statement set on them; their other columns are deferred."""
    pk, task_id, epoch, now, column, report_id, item_id, minutes = row[: completed_width()]
    workspace_id = params["ws"]
    task = partial_instance(
        Task,
        {
            "id": task_id,
            "workspace_id": workspace_id,
            "column": column,
            "assignee_connection_id": None,
            "assignee_user_id": None,
            "updated_at": now,
        },
    )
    run = partial_instance(
        Run,
        {
            "id": pk,
            "workspace_id": workspace_id,
            "task_id": task_id,
            "run_id": params["run_id"],
            "epoch": epoch,
            "state": lease.COMPLETED,
            "lease_token_hash": "",
            "ended_at": now,
            "end_reason": "completed",
        },
    )
    attach(run, "task", task)
    written = {"workspace_id": workspace_id, "task_id": task_id, "run_id": pk, "created_at": now}
    report = partial_instance(
        Report,
        {
            "id": report_id,
            **written,
            "outcome": params["outcome"],
            "next_step": params["next_step"],
            **{name: lists[name] for name in _REPORT_LISTS},
            "verification_passed": lists["passed"],
        },
    )
    item = None
    if item_id is not None:
        opened = {"id": item_id, "report_id": report_id, "estimated_minutes": minutes}
        item = partial_instance(InboxItem, {**_OPENED_ITEM, **written, **opened})
    return Completed(run=run, task=task, report=report, item=item)


_REPORT_LISTS = ("artifacts", "claims", "not_done", "unknowns", "not_accepted", "verification")
# The review item as COMPLETE_SQL opens it.
_OPENED_ITEM = {
    "kind": InboxKind.REVIEW.value,
    "question_id": None,
    "state": InboxState.OPEN.value,
    "decision": "",
    "note": "",
    "snoozed_until": None,
    "decided_by_id": None,
    "decided_at": None,
    "reminded_at": None,
}
