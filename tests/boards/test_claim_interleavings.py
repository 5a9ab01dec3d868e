"""The claim's race branches, on any database: a step of task_claim is patched to let a rival
write land between the claim's read and its write, the moment a real race would put it there.

The rival runs on the claim's own connection, inside its transaction: what a refused claim rolls
back includes the rival's write, so these tests judge the answers; the PostgreSQL thread races
(test_claim_races, test_holder_races) judge what stays in the database."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from boards import clock
from boards.models import Column, Run, RunState, Task
from boards.services import claim, task_claim, task_move
from tests.boards.helpers import ask, beat, refused, release


def _once(
    monkeypatch: pytest.MonkeyPatch, step: str, rival: Callable[..., Any], *, before: bool = False
) -> None:
    """Patch claim.<step> so that the rival write happens once, after (or before) the real step."""
    real = getattr(claim, step)
    done: list[bool] = []

    def patched(*args: Any, **kwargs: Any) -> Any:
        if before and not done:
            done.append(True)
            rival(*args, **kwargs)
        result = real(*args, **kwargs)
        if not before and not done:
            done.append(True)
            rival(*args, **kwargs)
        return result

    monkeypatch.setattr(claim, step, patched)


def test_a_rival_claim_between_read_and_write_wins_and_the_loser_is_told_who_holds_it(
    monkeypatch, agent, agent2, task
):
    won: list[Any] = []
    _once(monkeypatch, "_admit", lambda *a: won.append(task_claim(task_id=task.pk, connection=agent2)))
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent)
    assert error.details == {
        "taskId": task.pk,
        "holder": "Cursor",
        "until": won[0].run.lease_expires_at.isoformat(),
    }
    # The rival's write shares the refused claim's transaction here, so both are rolled back.
    assert Run.objects.count() == 0


def test_the_same_holder_racing_itself_gets_the_winning_run_back_with_its_token(monkeypatch, agent, task):
    won: list[Any] = []
    _once(monkeypatch, "_admit", lambda *a: won.append(task_claim(task_id=task.pk, connection=agent)))
    again = task_claim(task_id=task.pk, connection=agent)
    assert again.resumed
    assert again.run.pk == won[0].run.pk and again.lease_token == won[0].lease_token
    assert again.task.epoch == 1 and again.task.column == Column.DOING
    assert Run.objects.count() == 1
    beat(again)


def test_a_rival_that_claimed_and_released_in_between_leaves_another_claimer_unnamed(
    monkeypatch, agent, agent2, task
):
    _once(monkeypatch, "_admit", lambda *a: release(task_claim(task_id=task.pk, connection=agent2)))
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent)
    assert error.details == {"taskId": task.pk, "holder": "another claimer", "until": None}
    assert not Run.objects.filter(state__in=(RunState.ACTIVE, RunState.WAITING_INPUT)).exists()


def test_the_same_holders_winning_run_already_expired_is_not_resumed(monkeypatch, agent, task):
    def rival(*args: Any) -> None:
        won = task_claim(task_id=task.pk, connection=agent)
        Run.objects.filter(pk=won.run.pk).update(lease_expires_at=clock.db_now() - timedelta(minutes=5))

    _once(monkeypatch, "_admit", rival)
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent)
    assert error.details["holder"] == "Claude Code"


def test_a_second_live_run_inserted_in_between_is_refused_by_the_index(monkeypatch, agent, agent2, task):
    def rival(claimer: Any, task_row: Task, *args: Any) -> None:
        Run.objects.create(
            workspace=task_row.workspace,
            task=task_row,
            connection=agent2,
            lease_token_hash="x" * 64,
            epoch=task_row.epoch,
            state=RunState.ACTIVE,
            started_at=clock.db_now(),
            last_heartbeat_at=clock.db_now(),
            lease_expires_at=clock.db_now() + timedelta(minutes=20),
        )

    _once(monkeypatch, "_take", rival)
    error = refused("already_claimed", task_claim, task_id=task.pk, connection=agent)
    # The refused claim's transaction is rolled back whole, the rival's insert with it.
    assert error.details["holder"] == "another claimer"
    assert Run.objects.count() == 0
    task.refresh_from_db()
    assert task.column == Column.TODO and task.epoch == 0


def test_a_task_read_in_doing_whose_run_ended_meanwhile_is_judged_as_it_is_now(monkeypatch, agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    _once(monkeypatch, "_live_run", lambda *a: release(first), before=True)
    again = task_claim(task_id=task.pk, connection=agent)
    assert not again.resumed and again.run.pk != first.run.pk
    assert again.run.epoch == 3  # claimed (1), released (2), claimed again (3)


def test_a_resume_whose_run_the_holder_ended_meanwhile_claims_the_task_afresh(monkeypatch, agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    _once(monkeypatch, "_holders_run", lambda *a: release(first))
    again = task_claim(task_id=task.pk, connection=agent)
    assert not again.resumed and again.run.pk != first.run.pk and again.run.epoch == 3
    assert Run.objects.get(pk=first.run.pk).state == RunState.RELEASED


def test_a_resume_whose_run_asked_meanwhile_resumes_the_waiting_run(monkeypatch, agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    _once(monkeypatch, "_holders_run", lambda *a: ask(first))
    again = task_claim(task_id=task.pk, connection=agent)
    assert again.resumed and again.run.pk == first.run.pk and again.lease_token == first.lease_token
    assert again.run.state == RunState.WAITING_INPUT
    assert Run.objects.get(pk=first.run.pk).last_heartbeat_at == again.run.last_heartbeat_at


def test_a_resume_whose_run_changes_under_it_twice_is_lease_lost(monkeypatch, agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    real = claim._holders_run

    def toggling(*args: Any) -> Any:
        run = real(*args)
        assert run is not None
        flipped = RunState.WAITING_INPUT if run.state == RunState.ACTIVE else RunState.ACTIVE
        Run.objects.filter(pk=run.pk).update(state=flipped)
        return run

    monkeypatch.setattr(claim, "_holders_run", toggling)
    error = refused("lease_lost", task_claim, task_id=task.pk, connection=agent)
    assert error.details["runId"] == str(first.run.run_id)


def test_the_same_holders_winning_run_changing_before_its_resume_is_lease_lost(monkeypatch, agent, task):
    won: list[Any] = []
    _once(monkeypatch, "_admit", lambda *a: won.append(task_claim(task_id=task.pk, connection=agent)))

    def ask_first(claimer: Any, live: Run, *args: Any) -> None:
        Run.objects.filter(pk=live.pk).update(state=RunState.WAITING_INPUT)

    _once(monkeypatch, "_resume", ask_first, before=True)
    error = refused("lease_lost", task_claim, task_id=task.pk, connection=agent)
    assert error.details["runId"] == str(won[0].run.run_id)


@pytest.mark.parametrize("column", [Column.DONE, Column.DROPPED])
def test_a_task_a_person_moves_out_of_todo_between_read_and_write_is_not_claimed(
    monkeypatch, agent, alice, task, column
):
    _once(monkeypatch, "_admit", lambda *a: task_move(task=task, column=column, by_user=alice))
    error = refused("invalid_argument", task_claim, task_id=task.pk, connection=agent)
    assert f"task {task.pk} is in {column}" in error.message
    assert error.fix.call is not None and error.fix.call.tool == "get_my_work"


def test_the_holder_of_a_task_is_read_with_its_connection_in_one_query(
    django_assert_num_queries, agent, task
):
    task_claim(task_id=task.pk, connection=agent)
    with django_assert_num_queries(1):
        live = claim._live_run(task)
        assert live is not None and live.connection is not None
        assert live.connection.name == "Claude Code"


def test_the_holder_of_a_task_is_read_with_its_person_in_one_query(
    django_assert_num_queries, alice, ws_a, task
):
    task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    with django_assert_num_queries(1):
        live = claim._live_run(task)
        assert live is not None and live.user is not None
        assert live.user.email == "alice@example.com"
