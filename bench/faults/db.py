"""The database side of a fault run: seed a workspace for it, dump its records for the checker.

`python -m bench.faults.db seed NAME AGENTS TASKS` prints JSON: the workspace id, one personal
access token per agent (and one for the probe), the task ids. `python -m bench.faults.db dump
WORKSPACE_ID RUN_DIR` writes RUN_DIR/events.jsonl and RUN_DIR/runs.jsonl. Both run against
DATABASE_URL with Weft's settings.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "weft.settings")
    import django

    django.setup()


def seed(name: str, agents: int, tasks: int) -> dict[str, Any]:
    """A pro workspace (no caps) with `agents` + 1 tokens and `tasks` Todo tasks, created in bulk."""
    from accounts.models import Plan, Seat, User
    from accounts.services import workspace_create
    from accounts.tokens import pat_create
    from boards.models import Column, Task
    from boards.services import board_default

    owner = User.objects.create_user(email=f"{name}@faults.invalid", password=None)
    ws = workspace_create(owner=owner, name=name, plan_code=Plan.PRO)
    seat = Seat.objects.get(workspace=ws, user=owner)
    board = board_default(workspace=ws)
    secrets = [
        pat_create(seat=seat, name=f"agent {i}", expires_in_days=None).secret for i in range(agents + 1)
    ]
    rows = [
        Task(workspace=ws, board=board, title=f"Fault task {i}", column=Column.TODO, position=float(i))
        for i in range(tasks)
    ]
    ids = [task.pk for task in Task.objects.bulk_create(rows, batch_size=1000)]
    return {"workspace": ws.pk, "tokens": secrets[:-1], "probe": secrets[-1], "tasks": ids}


def records(workspace_id: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The workspace's event log (position order) and runs (start order), as the checker reads them."""
    from boards.models import Run
    from weft.models import Event

    events = [
        {
            "position": event.position,
            "type": event.type,
            "entity_type": event.entity_type,
            "entity_id": event.entity_id,
            "payload": event.payload,
            "epoch": event.epoch,
        }
        for event in Event.objects.filter(workspace_id=workspace_id).order_by("position", "id").iterator()
    ]
    runs = [
        {
            "run_id": str(run.run_id),
            "task_id": run.task_id,
            "epoch": run.epoch,
            "state": run.state,
            "started_at": run.started_at.isoformat(),
            "ended_at": run.ended_at.isoformat() if run.ended_at else None,
            "lease_expires_at": run.lease_expires_at.isoformat() if run.lease_expires_at else None,
        }
        for run in Run.objects.filter(workspace_id=workspace_id).order_by("started_at").iterator()
    ]
    return events, runs


def dump(workspace_id: int, run_dir: Path) -> dict[str, int]:
    """RUN_DIR/events.jsonl and RUN_DIR/runs.jsonl of the workspace."""
    events, runs = records(workspace_id)
    for name, rows in (("events", events), ("runs", runs)):
        with (run_dir / f"{name}.jsonl").open("w") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)
    return {"events": len(events), "runs": len(runs)}


if __name__ == "__main__":
    _setup()
    if sys.argv[1] == "seed":
        print(json.dumps(seed(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        print(json.dumps(dump(int(sys.argv[2]), Path(sys.argv[3]))))
