"""The one-statement claim and completion (boards/services/fast.py) on PostgreSQL: they answer
and write exactly what the ORM path does, in one statement, and step aside for every other case.

Each test runs a case twice, once with the statement switched off (the ORM path) and once with
it, and compares the answers and the rows written, ids and instants aside."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards.models import Column, InboxItem, Report, Run
from boards.services import fast, task_claim
from boards.services.common import lease_token_for, token_hash
from tests.boards.helpers import beat, complete, release
from weft import events
from weft.models import Event

pytestmark = pytest.mark.usefixtures("on_postgres")


def _orm(monkeypatch: pytest.MonkeyPatch, fn: Any, *args: Any, **kwargs: Any) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(fast, "enabled", lambda: False)
        return fn(*args, **kwargs)


def _statements(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, list[str]]:
    """What fn did, and the statements it sent (the test helpers' workspace read loaded first)."""
    for arg in args:
        assert arg.task.workspace is not None
    with CaptureQueriesContext(connection) as captured:
        result = fn(*args, **kwargs)
    return result, [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


IDS_AND_INSTANTS = {
    "id",
    "position",
    "runId",
    "taskId",
    "reportId",
    "inboxItemId",
    "leaseToken",
    "createdAt",
    "updatedAt",
}


def _same_shape(orm: Any, sql: Any) -> None:
    """Equal but for ids, tokens and instants (each case has its own)."""

    def norm(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items() if k not in IDS_AND_INSTANTS}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    assert norm(sql) == norm(orm)


def _events_of(*entity_ids: object) -> list[Event]:
    return list(Event.objects.filter(entity_id__in=[str(e) for e in entity_ids]).order_by("id"))


def test_a_fresh_claim_is_one_statement_and_answers_as_the_orm_path(
    monkeypatch, agent, make_task, django_capture_on_commit_callbacks
):
    one, two = make_task("same", description="d"), make_task("same", description="d")
    orm = _orm(monkeypatch, task_claim, task_id=one.pk, connection=agent)
    with django_capture_on_commit_callbacks() as relays:
        sql, statements = _statements(task_claim, task_id=two.pk, connection=agent)
    assert len(statements) == 1 and statements[0].lstrip().startswith("WITH")
    assert len(relays) == 1  # the relay positions the event once the statement commits
    assert sql.run.lease_token_hash == token_hash(sql.lease_token)
    assert sql.lease_token == lease_token_for(run_id=sql.run.run_id, epoch=1)
    assert sql.run.lease_expires_at - sql.run.started_at == timedelta(minutes=20)
    payload, expected = sql.payload(), orm.payload()
    assert payload.pop("leaseExpiresAt") and expected.pop("leaseExpiresAt")
    _same_shape(expected, payload)
    assert (payload["runId"], payload["task"]["id"]) == (str(sql.run.run_id), two.pk)
    assert sql.hint.call is not None and sql.hint.call.args["leaseToken"] == sql.lease_token
    (orm_event,), (sql_event,) = _events_of(orm.run.run_id), _events_of(sql.run.run_id)
    assert sql_event.payload["leaseExpiresAt"] == sql.run.lease_expires_at.isoformat()
    assert (sql_event.type, sql_event.epoch, sql_event.position) == (orm_event.type, orm_event.epoch, None)
    beat(sql)  # the token the statement hashed is the one the fence takes


def test_the_event_writes_a_whole_second_expiry_as_python_does(agent, task, moved_clock):
    with time_machine.travel(datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC), tick=False):
        claim = task_claim(task_id=task.pk, connection=agent)
    (event,) = _events_of(claim.run.run_id)
    assert (
        event.payload["leaseExpiresAt"]
        == "2026-05-01T12:20:00+00:00"
        == claim.run.lease_expires_at.isoformat()
    )
    assert claim.run.started_at == datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


def test_a_claim_after_an_earlier_run_carries_its_notes(monkeypatch, agent, agent2, make_task):
    one, two = make_task("one"), make_task("two")
    for each in (one, two):
        first = task_claim(task_id=each.pk, connection=agent2)
        beat(first, note="half way")
        release(first)
    orm = _orm(monkeypatch, task_claim, task_id=one.pk, connection=agent)
    sql, statements = _statements(task_claim, task_id=two.pk, connection=agent)
    assert statements[0].lstrip().startswith("WITH") and len(statements) == 4  # + the earlier run's notes
    assert sql.context == orm.context and sql.context["lastRunNotes"] == ["half way"]
    assert sql.run.epoch == orm.run.epoch == 3


def test_a_resume_is_not_the_statements_and_runs_the_orm_path(agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    again, statements = _statements(task_claim, task_id=task.pk, connection=agent)
    assert again.resumed and again.lease_token == first.lease_token
    assert statements[0].lstrip().startswith("WITH") and len(statements) > 1
    assert Run.objects.filter(task=task).count() == 1


@pytest.mark.parametrize("review_required", [False, True])
def test_a_completion_is_one_statement_and_writes_as_the_orm_path(
    monkeypatch, agent, make_task, review_required, django_capture_on_commit_callbacks
):
    one = make_task("same", review_required=review_required)
    two = make_task("same", review_required=review_required)
    a, b = task_claim(task_id=one.pk, connection=agent), task_claim(task_id=two.pk, connection=agent)
    given = {"outcome": "shipped", "next_step": "tell them", "claims": ["it works"], "unknowns": ["speed"]}
    orm = _orm(monkeypatch, complete, a, **given)
    with django_capture_on_commit_callbacks() as relays:
        sql, statements = _statements(complete, b, **given)
    assert len(statements) == 1 and statements[0].lstrip().startswith("WITH") and len(relays) == 1
    _same_shape(orm.payload(), sql.payload())
    got = sql.payload()
    assert (got["runId"], got["taskId"], got["report"]["id"]) == (str(b.run.run_id), two.pk, sql.report.pk)
    assert got["inboxItemId"] == (sql.inbox_item.pk if review_required else None)
    assert sql.summary() == orm.summary().replace(str(one.pk), str(two.pk))
    assert (sql.hint.marker, sql.task.column) == (
        orm.hint.marker,
        Column.DOING if review_required else Column.DONE,
    )
    rows = [Run.objects.get(pk=r.run.pk) for r in (a, b)]
    assert [(r.state, r.lease_token_hash, r.end_reason, r.ended_at is not None) for r in rows] == [
        ("completed", "", "completed", True)
    ] * 2
    reports = [Report.objects.get(run=r) for r in rows]
    fields = (
        "outcome",
        "artifacts",
        "claims",
        "not_done",
        "unknowns",
        "next_step",
        "not_accepted",
        "verification",
    )
    orm_report, sql_report = ([getattr(r, f) for f in (*fields, "verification_passed")] for r in reports)
    assert sql_report == orm_report
    orm_events = [(e.type, e.epoch) for e in _events_of(a.run.run_id, *_items(one))]
    assert [(e.type, e.epoch) for e in _events_of(b.run.run_id, *_items(two))] == orm_events
    (done_event,) = [e for e in _events_of(b.run.run_id) if e.type == "run.completed"]
    assert done_event.payload == {
        "runId": str(b.run.run_id),
        "taskId": two.pk,
        "review": review_required,
        "reportId": sql.report.pk,
    }


def _items(task: Any) -> list[int]:
    return list(InboxItem.objects.filter(task=task).values_list("pk", flat=True))


def test_evidence_not_accepted_sends_the_statements_completion_to_the_inbox(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    done, statements = _statements(complete, claim, artifacts=[{"kind": "pr", "url": "not a url"}])
    assert len(statements) == 1
    assert done.inbox_item is not None and done.task.column == Column.DOING and done.report.not_accepted


def test_a_task_with_checks_is_completed_through_the_orm_path(agent, make_task):
    task = make_task("checked", checks=[{"kind": "artifact_kind", "value": "pr"}])
    claim = task_claim(task_id=task.pk, connection=agent)
    done, statements = _statements(complete, claim)
    assert len(statements) > 1 and done.report.verification_passed is False and done.inbox_item is not None


def test_a_completion_with_a_wrong_token_changes_nothing_and_is_lease_lost(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    claim.lease_token = "0" * 64
    from tests.boards.helpers import refused

    refused("lease_lost", complete, claim)
    assert Run.objects.get(pk=claim.run.pk).state == "active" and not Report.objects.exists()
    assert [e.type for e in _events_of(claim.run.run_id)] == ["run.started"]
    events.relay()


@pytest.mark.parametrize(
    "ident", [float, lambda pk: pk + 0.5, lambda pk: f"{pk}.0", lambda pk: True, lambda pk: f" {pk} "]
)
def test_an_id_is_read_by_the_statement_as_the_orm_path_reads_it(agent, task, ident):
    """A float or a bool never names a task; digits with spaces around do (access._int_id)."""
    given = ident(task.pk)
    if isinstance(given, str) and "." not in given:
        assert task_claim(task_id=given, connection=agent).task.pk == task.pk
    else:
        from tests.boards.helpers import refused

        refused("not_found", task_claim, task_id=given, connection=agent)
        assert not Run.objects.exists()
