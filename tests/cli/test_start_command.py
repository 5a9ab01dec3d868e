"""`weft start ID -- COMMAND`: the lease (LEASE_SECONDS on this server) outlives a longer command
through heartbeats; exit 0 completes with the output's summary, a failure releases, and a CLI
killed with SIGKILL leaves the lease to expire as any lost agent's does."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest

from accounts.models import Workspace
from boards.models import Report, Run, Task
from boards.services import task_create
from tests.cli.conftest import LEASE_SECONDS, Cli

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
BEAT: dict[str, Any] = {"WEFT_CLI_HEARTBEAT_SECONDS": "1"}


def test_it_keeps_the_lease_through_a_longer_command_and_completes(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Run the migration").task
    script = f"echo migrating; sleep {LEASE_SECONDS * 2}; echo 42 rows moved"
    result = signed_in("start", str(task.pk), "--", "sh", "-c", script, timeout=120, **BEAT)
    assert result.code == 0, result
    assert "42 rows moved" in result.out  # the command's output streamed through
    run = Run.objects.get(task=task)
    assert run.state == "completed"
    report = Report.objects.get(run=run)
    assert "42 rows moved" in report.outcome
    assert "exited with code 0" in str(report.claims)
    assert Task.objects.get(pk=task.pk).column == "done"


def test_it_releases_the_task_when_the_command_fails(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Run the flaky test").task
    result = signed_in("start", str(task.pk), "--", "sh", "-c", "echo boom; exit 3", **BEAT)
    assert result.code == 1, result
    assert Run.objects.get(task=task).state == "released"
    assert result.markers(), result.out


def test_it_forwards_sigterm_to_the_command_then_releases(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Run forever").task
    proc = signed_in.popen("start", str(task.pk), "--", "sh", "-c", "echo up; sleep 60", **BEAT)
    assert proc.stdout is not None
    while proc.stdout.readline() not in ("up\n", ""):
        pass
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 128 + signal.SIGTERM
    assert Run.objects.get(task=task).state == "released"


def test_a_killed_cli_leaves_the_lease_to_expire(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Run and vanish").task
    proc = signed_in.popen("start", str(task.pk), "--", "sh", "-c", "echo up; sleep 60", **BEAT)
    assert proc.stdout is not None
    while proc.stdout.readline() not in ("up\n", ""):
        pass
    proc.kill()
    proc.wait(10)
    assert Run.objects.get(task=task).state == "active"  # nobody released it
    time.sleep(LEASE_SECONDS + 1)  # a real server's clock, so a real wait
    lost = signed_in("progress", "--note", "back again")
    assert lost.code == 5, lost
    assert signed_in("start", str(task.pk)).code == 0  # claimable again
