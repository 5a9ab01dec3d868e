"""The whole loop through the installed `weft`: sign in, work, start, progress, complete; refusals
as exit codes; `--json` as the API's payload; the config file readable by its owner only."""

from __future__ import annotations

import stat

import pytest

from accounts.models import Workspace
from boards.models import Run, Task
from boards.services import task_create
from tests.cli.conftest import Cli

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_it_runs_the_whole_loop(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Write the changelog").task
    work = signed_in("work")
    assert work.code == 0, work
    assert work.markers() == [f"Next: weft start-task --id {task.pk}"]
    started = signed_in("start", str(task.pk))
    assert started.code == 0, started
    assert started.markers()[0].startswith("Next: weft report-progress --lease-token ")
    progress = signed_in("progress", "--note", "halfway")
    assert progress.code == 0, progress
    done = signed_in("complete", "--outcome", "The changelog is written.", "--claim", "CHANGELOG.md has 1.2")
    assert done.code == 0, done
    assert Task.objects.get(pk=task.pk).column == "done"
    assert done.markers()[-1].startswith(("Next: weft ", "Done."))


def test_it_prints_the_api_payload_with_json(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Tag the release").task
    answer = signed_in("task", str(task.pk), "--json").json()
    assert answer["task"]["id"] == task.pk
    assert answer["_next_action"] == f"Next: POST /api/v1/tasks/{task.pk}/start {{}}"


def test_it_keeps_the_token_in_a_file_only_its_owner_reads(signed_in: Cli) -> None:
    path = signed_in.home / "weft" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_it_answers_refusals_with_their_exit_codes(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Ship it").task
    missing = signed_in("task", "987654321")
    assert missing.code == 4, missing
    assert "Error: not_found" in missing.out
    assert signed_in("start", str(task.pk)).code == 0
    assert signed_in("start", str(task.pk)).code in (0, 6)  # the same agent resumes its own claim
    assert signed_in("release", "--reason", "handing over").code == 0
    lost = signed_in("progress", "--note", "still here?")
    assert lost.code == 5, lost
    assert signed_in("bogus-command").code == 2


def test_it_refuses_without_a_sign_in(cli: Cli) -> None:
    answer = cli("work")
    assert answer.code == 7, answer
    assert answer.markers()[-1] == "Fix: weft discover-sign-in"
    assert cli("discover-sign-in").code == 0


def test_it_forgets_the_token_on_logout(signed_in: Cli) -> None:
    assert signed_in("logout").code == 0
    assert not (signed_in.home / "weft" / "credentials.json").exists()
    assert signed_in("work").code == 7


def test_it_runs_every_tool_by_its_own_name(signed_in: Cli, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Read me").task
    answer = signed_in("get-task", "--id", str(task.pk))
    assert answer.code == 0, answer
    assert Run.objects.count() == 0


def test_complete_with_start_next_starts_the_next_task_and_saves_its_run(
    signed_in: Cli, ws_a: Workspace
) -> None:
    first = task_create(workspace=ws_a, title="Write the changelog", priority=3).task
    second = task_create(workspace=ws_a, title="Tag the release", priority=1).task
    assert signed_in("start", str(first.pk)).code == 0
    done = signed_in("complete", "--outcome", "The changelog is written.", "--start-next", "--json")
    assert done.code == 0, done
    following = done.json()["next"]
    assert following["started"] is True and following["task"]["id"] == second.pk
    assert Task.objects.get(pk=first.pk).column == "done"
    assert Task.objects.get(pk=second.pk).column == "doing"
    # The saved run is now the second task's: progress and complete act on it without flags.
    assert signed_in("progress", "--note", "tagging").code == 0
    run = Run.objects.get(task=second)
    assert str(run.run_id) == following["runId"] and run.state == "active"
    last = signed_in("complete", "--outcome", "Tagged 1.4.", "--start-next")
    assert last.code == 0, last
    assert 'next: {"started": false, "error": null}' in last.out and last.markers()[-1] == "Done."
    assert Task.objects.get(pk=second.pk).column == "done"
