"""The claim loop's writes pinned whole: every refusal (code, message, details, Fix line), every
response payload, the events with their payloads, the rows each call leaves, and the limits at
their exact edges. Time is frozen, so every timestamp and lease expiry is asserted exactly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from boards import clock
from boards.evidence import verify
from boards.models import Approval, Column, InboxItem, ProgressNote, Question, Report, Run, Task
from boards.results import question_payload, report_payload, task_payload
from boards.services import (
    inbox_decide,
    lease_sweep,
    question_answer,
    run_complete,
    run_heartbeat,
    run_release,
    run_request_input,
    task_claim,
    task_move,
    task_trash,
    task_update,
    work_for_connection,
)
from boards.services.common import lease_token_for, token_hash
from boards.services.delivery import mark_delivered
from tests.boards.helpers import ask, beat, complete, refused, release
from weft.errors import WeftError
from weft.events import relay
from weft.hints import next_
from weft.models import Event

pytestmark = pytest.mark.usefixtures("moved_clock")

ARTIFACT_SHAPE = "an artifact is an object {kind, uri, httpStatus?, sha256?}"
HTTP_URL = "uri must be an http(s) URL with a host"
HTTP_STATUS = "httpStatus must be an HTTP status code from 100 to 599"
SHA256 = "sha256 must be 64 hexadecimal characters"
STATEMENT = "a statement is a string"
NUL_REASON = "must not contain NUL (\\u0000) characters"


@pytest.fixture
def frozen() -> Iterator[Any]:
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        yield traveller


def whole(error: WeftError) -> tuple[str, str, dict[str, Any], list[str]]:
    return error.code, error.message, error.details, error.fix.lines()


def limit_refusal(
    field: str, reason: str, problem: str, limit: int | None = None
) -> tuple[str, str, dict[str, Any], list[str]]:
    details: dict[str, Any] = {"field": field, "reason": reason, "problem": problem}
    if limit is not None:
        details["limit"] = limit
    return "invalid_argument", f"{field}: {reason}", details, ["Fix: get_board_state {}"]


def lost(claim: Any, epoch: int | None = None) -> tuple[str, str, dict[str, Any], list[str]]:
    run_id, task_id = claim.run.run_id, claim.task.pk
    return (
        "lease_lost",
        f"run {run_id} no longer holds task {task_id} (expired, released or superseded); nothing was changed",
        {"runId": str(run_id), "taskId": task_id, "epoch": claim.run.epoch if epoch is None else epoch},
        [f'Fix: start_task {{"id": {task_id}}}'],
    )


def events_since(seq: int) -> list[tuple[str, str, str, int | None, dict[str, Any]]]:
    return [
        (e.type, e.entity_type, e.entity_id, e.epoch, e.payload)
        for e in relayed().filter(position__gt=seq).order_by("position")
    ]


def relayed() -> Any:
    relay()  # on_commit does not fire inside the test's transaction
    return Event.objects.filter(position__isnull=False)


def last_seq() -> int:
    event = relayed().order_by("-position").first()
    return event.position or 0 if event is not None else 0


def iso(value: datetime) -> str:
    return value.isoformat()


def run_row(claim: Any) -> tuple[Any, ...]:
    run = Run.objects.get(pk=claim.run.pk)
    return (
        run.state,
        run.lease_token_hash,
        run.last_heartbeat_at,
        run.lease_expires_at,
        run.ended_at,
        run.end_reason,
    )


def task_row(task: Task) -> tuple[Any, ...]:
    row = Task.objects.get(pk=task.pk)
    return (row.column, row.epoch, row.assignee_connection_id, row.assignee_user_id, row.updated_at)


def reviewed_with_step(
    make_task: Any, agent: Any, alice: Any, step: str = "deploy to staging"
) -> tuple[Task, Approval]:
    """A task whose review a person accepted, approving `step` for the agent."""
    task = make_task("Ship the importer", review_required=True)
    result = complete(task_claim(task_id=task.pk, connection=agent), next_step=step)
    approval = inbox_decide(item=result.inbox_item, user=alice, decision="accept").approval
    assert approval is not None
    return task, approval


# --- run_complete: the refusals, each whole, and nothing stored ---------------------------------


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        pytest.param(
            {"outcome": "   "}, limit_refusal("outcome", "must not be empty", "empty"), id="blank-outcome"
        ),
        pytest.param(
            {"outcome": 7}, limit_refusal("outcome", "must be a string", "type"), id="outcome-not-text"
        ),
        pytest.param(
            {"outcome": "x" * 10_001},
            limit_refusal("outcome", "at most 10000 characters (got 10001)", "too_long", 10_000),
            id="outcome-10001",
        ),
        pytest.param(
            {"next_step": "x" * 2_001},
            limit_refusal("nextStep", "at most 2000 characters (got 2001)", "too_long", 2_000),
            id="next-step-2001",
        ),
        pytest.param(
            {"artifacts": [{"kind": "url", "uri": "https://a.example/\x00"}]},
            limit_refusal("evidence", NUL_REASON, "nul"),
            id="nul-in-an-artifact",
        ),
        pytest.param(
            {"unknowns": ["a\x00"]}, limit_refusal("evidence", NUL_REASON, "nul"), id="nul-in-unknowns"
        ),
        pytest.param(
            {"artifacts": [{"kind": "commit", "uri": "abc"}] * 51},
            limit_refusal("artifacts", "at most 50 items (got 51)", "too_long", 50),
            id="51-artifacts",
        ),
        pytest.param(
            {"claims": ["c"] * 51},
            limit_refusal("claims", "at most 50 items (got 51)", "too_long", 50),
            id="51-claims",
        ),
        pytest.param(
            {"not_done": ["n"] * 51},
            limit_refusal("notDone", "at most 50 items (got 51)", "too_long", 50),
            id="51-not-done",
        ),
        pytest.param(
            {"unknowns": ["u"] * 51},
            limit_refusal("unknowns", "at most 50 items (got 51)", "too_long", 50),
            id="51-unknowns",
        ),
        pytest.param(
            {"claims": ["x" * 1_001]},
            limit_refusal("claims[0]", "at most 1000 characters (got 1001)", "too_long", 1_000),
            id="claim-1001",
        ),
        pytest.param(
            {"not_done": ["ok", "x" * 1_001]},
            limit_refusal("notDone[1]", "at most 1000 characters (got 1001)", "too_long", 1_000),
            id="not-done-1001",
        ),
        pytest.param(
            {"unknowns": ["ok", "fine", "x" * 1_001]},
            limit_refusal("unknowns[2]", "at most 1000 characters (got 1001)", "too_long", 1_000),
            id="unknown-1001",
        ),
    ],
)
def test_complete_refuses_a_value_past_its_limit_and_stores_nothing(agent, task, frozen, evidence, expected):
    claim = task_claim(task_id=task.pk, connection=agent)
    evidence.setdefault("outcome", "done")
    before = (run_row(claim), task_row(task), last_seq())
    assert whole(refused("invalid_argument", complete, claim, **evidence)) == expected
    assert (run_row(claim), task_row(task), last_seq()) == before
    assert not Report.objects.exists()


def test_complete_accepts_every_value_at_its_limit(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    result = complete(
        claim,
        outcome="o" * 10_000,
        next_step="n" * 2_000,
        artifacts=[{"kind": "commit", "uri": f"c{i}"} for i in range(50)],
        claims=["c" * 1_000] * 50,
        not_done=["n"] * 50,
        unknowns=["u"] * 50,
    )
    report = Report.objects.get()
    assert (len(report.outcome), len(report.next_step), len(report.artifacts)) == (10_000, 2_000, 50)
    assert (report.claims, report.not_done, report.unknowns) == (["c" * 1_000] * 50, ["n"] * 50, ["u"] * 50)
    assert (report.not_accepted, result.task.column) == ([], Column.DONE)


def test_complete_with_a_wrong_token_is_lease_lost_and_changes_nothing(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    before = (run_row(claim), task_row(task), last_seq())
    error = refused(
        "lease_lost",
        run_complete,
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token="not-the-token",
        outcome="done",
    )
    assert whole(error) == lost(claim)
    assert (run_row(claim), task_row(task), last_seq()) == before
    assert not Report.objects.exists()


# --- run_complete: what it records -------------------------------------------------------------


def test_complete_of_a_task_without_review_records_the_report_and_moves_it_to_done(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=3))
    now = timezone.now()
    seq = last_seq()
    artifact = {"kind": "pr", "uri": "https://github.com/acme/app/pull/7", "httpStatus": 200}
    result = complete(
        claim,
        outcome="  Fixed the loop.  ",
        next_step="  deploy  ",
        artifacts=[artifact],
        claims="  it works  ",
    )
    report = Report.objects.get()
    assert (report.workspace_id, report.task_id, report.run_id, report.created_at) == (
        task.workspace_id,
        task.pk,
        claim.run.pk,
        now,
    )
    assert (
        report.outcome,
        report.next_step,
        report.artifacts,
        report.claims,
        report.not_done,
        report.unknowns,
    ) == (
        "Fixed the loop.",
        "deploy",
        [artifact],
        ["it works"],
        [],
        [],
    )
    assert (report.not_accepted, report.verification, report.verification_passed) == ([], [], None)
    assert result.payload() == {
        "runId": str(claim.run.run_id),
        "taskId": task.pk,
        "column": "done",
        "review": False,
        "inboxItemId": None,
        "report": report_payload(report),
        "notAccepted": [],
    }
    assert run_row(claim) == (
        "completed",
        "",
        claim.run.started_at,
        claim.run.lease_expires_at,
        now,
        "completed",
    )
    assert (result.run.state, result.run.lease_token_hash, result.run.ended_at) == ("completed", "", now)
    assert task_row(task) == (Column.DONE, 1, None, None, now)
    assert not InboxItem.objects.exists()
    assert events_since(seq) == [
        (
            "run.completed",
            "run",
            str(claim.run.run_id),
            1,
            {"runId": str(claim.run.run_id), "taskId": task.pk, "review": False, "reportId": report.pk},
        )
    ]
    assert result.hint.lines() == ["Next: get_my_work {}"]


def test_complete_of_a_task_that_needs_review_waits_in_the_inbox(agent, make_task, frozen):
    task = make_task("Ship the importer", review_required=True, estimated_review_minutes=7)
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=3))
    now = timezone.now()
    seq = last_seq()
    result = complete(claim, outcome="Imported.")
    report = Report.objects.get()
    item = InboxItem.objects.get()
    assert (item.workspace_id, item.kind, item.task_id, item.run_id, item.report_id) == (
        task.workspace_id,
        "review",
        task.pk,
        claim.run.pk,
        report.pk,
    )
    assert (item.state, item.estimated_minutes, item.created_at) == ("open", 7, now)
    assert result.payload()["column"] == "doing"
    assert (result.payload()["review"], result.payload()["inboxItemId"]) == (True, item.pk)
    assert task_row(task) == (Column.DOING, 1, None, None, now)
    assert events_since(seq) == [
        (
            "run.completed",
            "run",
            str(claim.run.run_id),
            1,
            {"runId": str(claim.run.run_id), "taskId": task.pk, "review": True, "reportId": report.pk},
        ),
        (
            "inbox.item_created",
            "inbox_item",
            str(item.pk),
            None,
            {"itemId": item.pk, "kind": "review", "taskId": task.pk},
        ),
    ]
    assert result.hint.lines() == [
        f"Wait: a person reviews task {task.pk} in the Inbox; check again with get_my_work {{}}"
    ]


def test_complete_of_a_persons_claim_unassigns_the_person(alice, ws_a, task, frozen):
    claim = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    assert task_row(task)[3] == alice.pk
    complete(claim)
    assert task_row(task) == (Column.DONE, 1, None, None, timezone.now())


def test_complete_uses_up_the_approval_the_run_started_on(agent, alice, make_task, frozen):
    task, approval = reviewed_with_step(make_task, agent, alice)
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=4))
    complete(claim)
    assert Approval.objects.get(pk=approval.pk).used_at == timezone.now()


# --- run_complete: evidence that cannot be checked is kept, marked and sent to a person ----------

LONG_UNICODE = "é" * 2_000  # 12 000 characters once JSON-escaped


@pytest.mark.parametrize(
    ("artifact", "reason"),
    [
        pytest.param("https://example.com/pr/1", ARTIFACT_SHAPE, id="a-loose-string"),
        pytest.param(["commit", "abc"], ARTIFACT_SHAPE, id="a-list"),
        pytest.param(
            {"kind": "screenshot", "uri": "s3://b/a.png"},
            "unknown kind 'screenshot'; one of url, commit, file, pr",
            id="unknown-kind",
        ),
        pytest.param({"uri": "abc"}, "unknown kind None; one of url, commit, file, pr", id="no-kind"),
        pytest.param({"kind": "commit"}, "uri must be a non-empty string", id="no-uri"),
        pytest.param({"kind": "file", "uri": "   "}, "uri must be a non-empty string", id="blank-uri"),
        pytest.param({"kind": "file", "uri": 5}, "uri must be a non-empty string", id="uri-not-text"),
        pytest.param(
            {"kind": "commit", "uri": "a" * 2_001}, "uri is longer than 2000 characters", id="uri-2001"
        ),
        pytest.param({"kind": "url", "uri": "example.com/pr/1"}, HTTP_URL, id="url-without-scheme"),
        pytest.param({"kind": "url", "uri": "ftp://example.com/a"}, HTTP_URL, id="url-ftp"),
        pytest.param({"kind": "pr", "uri": "https:///acme/pull/1"}, HTTP_URL, id="pr-without-host"),
        pytest.param({"kind": "url", "uri": "http://[::1"}, HTTP_URL, id="url-unparsable"),
        pytest.param({"kind": "commit", "uri": "abc", "httpStatus": True}, HTTP_STATUS, id="status-bool"),
        pytest.param({"kind": "commit", "uri": "abc", "httpStatus": "200"}, HTTP_STATUS, id="status-text"),
        pytest.param({"kind": "commit", "uri": "abc", "httpStatus": 99}, HTTP_STATUS, id="status-99"),
        pytest.param({"kind": "commit", "uri": "abc", "httpStatus": 600}, HTTP_STATUS, id="status-600"),
        pytest.param({"kind": "file", "uri": "a.txt", "sha256": "a" * 63}, SHA256, id="sha256-63"),
        pytest.param({"kind": "file", "uri": "a.txt", "sha256": "a" * 65}, SHA256, id="sha256-65"),
        pytest.param({"kind": "file", "uri": "a.txt", "sha256": "g" * 64}, SHA256, id="sha256-g"),
        pytest.param({"kind": "file", "uri": "a.txt", "sha256": "X" * 64}, SHA256, id="sha256-X"),
        pytest.param({"kind": "file", "uri": "a.txt", "sha256": 12}, SHA256, id="sha256-not-text"),
        pytest.param(
            {"kind": "commit", "uri": "abc", "note": "x", "by": "me"},
            "unknown fields by, note",
            id="extra-fields",
        ),
        pytest.param(
            {"kind": "commit", "uri": "abc", "size": 1}, "unknown fields size", id="one-extra-field"
        ),
    ],
)
def test_an_artifact_that_cannot_be_checked_is_kept_as_given_and_sent_to_review(
    agent, task, artifact, reason
):
    claim = task_claim(task_id=task.pk, connection=agent)
    good = {"kind": "commit", "uri": "abc123"}
    result = complete(claim, artifacts=[good, artifact])
    report = Report.objects.get()
    assert report.artifacts == [good, {"given": artifact, "unverifiable": reason}]
    assert report.not_accepted == [{"field": "artifacts[1]", "reason": reason}]
    assert result.payload()["notAccepted"] == [{"field": "artifacts[1]", "reason": reason}]
    assert (result.task.column, InboxItem.objects.get().kind) == (Column.DOING, "review")


def test_an_artifact_over_4000_characters_of_json_is_kept_cut_to_4000(agent, task):
    artifact = {"kind": "commit", "uri": LONG_UNICODE}
    text = json.dumps(artifact)
    claim = task_claim(task_id=task.pk, connection=agent)
    complete(claim, artifacts=artifact)
    reason = "larger than 4000 characters of JSON"
    report = Report.objects.get()
    assert report.artifacts == [{"given": text[:4000], "truncated": True, "unverifiable": reason}]
    assert report.not_accepted == [{"field": "artifacts[0]", "reason": reason}]


def sized_artifact(kind: str, size: int) -> dict[str, str]:
    """An artifact whose JSON is exactly `size` characters (é is six once escaped)."""
    base = len(json.dumps({"kind": kind, "uri": ""}))
    wide = (size - base - 2_000) // 5 + 1
    artifact = {"kind": kind, "uri": "é" * wide + "a" * (size - base - 6 * wide)}
    assert len(json.dumps(artifact)) == size and len(artifact["uri"]) <= 2_000
    return artifact


def test_an_artifact_of_exactly_4000_characters_of_json_is_accepted(agent, task):
    artifact = sized_artifact("file", 4_000)
    complete(task_claim(task_id=task.pk, connection=agent), artifacts=[artifact])
    report = Report.objects.get()
    assert (report.artifacts, report.not_accepted) == ([artifact], [])


def test_an_artifact_of_4001_characters_of_json_is_not_accepted_and_kept_cut(agent, task):
    artifact = sized_artifact("file", 4_001)
    complete(task_claim(task_id=task.pk, connection=agent), artifacts=[artifact])
    reason = "larger than 4000 characters of JSON"
    assert Report.objects.get().artifacts == [
        {"given": json.dumps(artifact)[:4000], "truncated": True, "unverifiable": reason}
    ]


def test_an_unusable_artifact_of_exactly_4000_characters_is_kept_whole(agent, task):
    artifact = sized_artifact("zip", 4_000)
    complete(task_claim(task_id=task.pk, connection=agent), artifacts=[artifact])
    reason = "unknown kind 'zip'; one of url, commit, file, pr"
    assert Report.objects.get().artifacts == [{"given": artifact, "unverifiable": reason}]


@pytest.mark.parametrize(
    "artifact",
    [
        pytest.param({"kind": "url", "uri": "http://example.com"}, id="http-url"),
        pytest.param({"kind": "pr", "uri": "https://github.com/acme/app/pull/1"}, id="https-pr"),
        pytest.param({"kind": "commit", "uri": "not a url at all"}, id="commit-any-text"),
        pytest.param({"kind": "file", "uri": "/srv/out.txt"}, id="file-path"),
        pytest.param({"kind": "commit", "uri": "a" * 2_000}, id="uri-2000"),
        pytest.param({"kind": "url", "uri": "https://example.com", "httpStatus": 100}, id="status-100"),
        pytest.param({"kind": "url", "uri": "https://example.com", "httpStatus": 599}, id="status-599"),
        pytest.param({"kind": "file", "uri": "a", "sha256": "0123456789abcdef" * 4}, id="sha256-lower"),
        pytest.param({"kind": "file", "uri": "a", "sha256": "ABCDEF0123456789" * 4}, id="sha256-upper"),
        pytest.param({"kind": "file", "uri": "a", "httpStatus": None, "sha256": None}, id="optional-nulls"),
    ],
)
def test_a_checkable_artifact_is_accepted_and_the_task_is_done(agent, task, artifact):
    result = complete(task_claim(task_id=task.pk, connection=agent), artifacts=[artifact])
    report = Report.objects.get()
    assert (report.artifacts, report.not_accepted, result.task.column) == ([artifact], [], Column.DONE)


def test_statements_are_kept_stripped_and_non_text_ones_marked(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    result = complete(
        claim, claims=["  ok  ", 7, {"a": 1}], not_done="  tests  ", unknowns=("u1", None), artifacts=None
    )
    report = Report.objects.get()
    assert report.claims == [
        "ok",
        {"given": 7, "unverifiable": STATEMENT},
        {"given": {"a": 1}, "unverifiable": STATEMENT},
    ]
    assert (report.not_done, report.artifacts) == (["tests"], [])
    assert report.unknowns == ["u1", {"given": None, "unverifiable": STATEMENT}]
    assert report.not_accepted == [
        {"field": "claims[1]", "reason": STATEMENT},
        {"field": "claims[2]", "reason": STATEMENT},
        {"field": "unknowns[1]", "reason": STATEMENT},
    ]
    assert result.task.column == Column.DOING


@pytest.mark.parametrize(
    ("field", "argument"), [("claims", "claims"), ("notDone", "not_done"), ("unknowns", "unknowns")]
)
def test_a_non_text_statement_of_exactly_1000_characters_is_kept_whole(agent, task, field, argument):
    statement = ["x" * 996]
    assert len(json.dumps(statement)) == 1_000
    complete(task_claim(task_id=task.pk, connection=agent), **{argument: [statement]})
    report = Report.objects.get()
    assert getattr(report, argument) == [{"given": statement, "unverifiable": STATEMENT}]
    assert report.not_accepted == [{"field": f"{field}[0]", "reason": STATEMENT}]


def test_a_non_text_statement_over_1000_characters_is_kept_cut_even_when_not_json(agent, task):
    statement = {"at": datetime(2026, 1, 1, tzinfo=UTC), "pad": "x" * 1_000}
    complete(task_claim(task_id=task.pk, connection=agent), not_done=[statement])
    text = json.dumps({"at": "2026-01-01 00:00:00+00:00", "pad": "x" * 1_000})
    assert Report.objects.get().not_done == [
        {"given": text[:1000], "truncated": True, "unverifiable": STATEMENT}
    ]


# --- verify and the task's checks ------------------------------------------------------------

PR = {"kind": "pr", "uri": "https://github.com/acme/app/pull/1"}
COMMIT = {"kind": "commit", "uri": "abc123"}
KIND_PR = {"kind": "artifact_kind", "value": "pr"}
PRESENT = {"kind": "artifact_present"}
LINT = {"kind": "lint"}


def passed_kind(check: dict[str, Any], ok: bool) -> dict[str, Any]:
    return {"check": check, "passed": ok, "detail": f"an artifact of kind {check['value']}"}


def passed_present(ok: bool) -> dict[str, Any]:
    return {"check": PRESENT, "passed": ok, "detail": "at least one artifact"}


def not_run(check: Any) -> dict[str, Any]:
    return {"check": check, "passed": None, "detail": "unknown check kind, not run"}


@pytest.mark.parametrize(
    ("checks", "artifacts", "expected"),
    [
        pytest.param([], [PR], ([], None), id="no-checks"),
        pytest.param("artifact_present", [PR], ([], None), id="checks-not-a-list"),
        pytest.param([KIND_PR], [COMMIT, PR], ([passed_kind(KIND_PR, True)], True), id="kind-found"),
        pytest.param([KIND_PR], [COMMIT], ([passed_kind(KIND_PR, False)], False), id="kind-missing"),
        pytest.param(
            [KIND_PR], ["pr", None], ([passed_kind(KIND_PR, False)], False), id="kind-of-non-objects"
        ),
        pytest.param([PRESENT], [], ([passed_present(False)], False), id="present-none"),
        pytest.param([PRESENT], ["loose"], ([passed_present(True)], True), id="present-any"),
        pytest.param([LINT], [PR], ([not_run(LINT)], None), id="unknown-kind"),
        pytest.param(
            ["artifact_present"], [PR], ([not_run("artifact_present")], None), id="check-not-an-object"
        ),
        pytest.param(
            [PRESENT, LINT, KIND_PR],
            [PR],
            ([passed_present(True), not_run(LINT), passed_kind(KIND_PR, True)], True),
            id="all-that-ran-passed",
        ),
        pytest.param(
            [PRESENT, KIND_PR],
            [COMMIT],
            ([passed_present(True), passed_kind(KIND_PR, False)], False),
            id="one-failed",
        ),
    ],
)
def test_verify_runs_each_known_check_against_the_artifacts(checks, artifacts, expected):
    assert verify(checks, artifacts) == expected


def test_checks_run_against_the_checkable_artifacts_only(agent, alice, task):
    task_update(task=task, by_user=alice, checks=[PRESENT])
    result = complete(task_claim(task_id=task.pk, connection=agent), artifacts=[{"kind": "zip", "uri": "a"}])
    report = Report.objects.get()
    assert (report.verification, report.verification_passed) == ([passed_present(False)], False)
    assert result.task.column == Column.DOING


def test_passing_checks_let_the_task_go_to_done(agent, alice, task):
    task_update(task=task, by_user=alice, checks=[KIND_PR, LINT])
    result = complete(task_claim(task_id=task.pk, connection=agent), artifacts=[PR])
    report = Report.objects.get()
    assert (report.verification, report.verification_passed) == (
        [passed_kind(KIND_PR, True), not_run(LINT)],
        True,
    )
    assert (result.task.column, InboxItem.objects.exists()) == (Column.DONE, False)


def test_checks_none_of_which_ran_let_the_task_go_to_done(agent, alice, task):
    task_update(task=task, by_user=alice, checks=[LINT])
    result = complete(task_claim(task_id=task.pk, connection=agent), artifacts=[PR])
    assert Report.objects.get().verification_passed is None
    assert result.task.column == Column.DONE


def test_a_failing_check_alone_sends_the_task_to_review(agent, alice, task):
    task_update(task=task, by_user=alice, checks=[KIND_PR])
    result = complete(task_claim(task_id=task.pk, connection=agent), artifacts=[COMMIT])
    report = Report.objects.get()
    assert (report.verification_passed, report.not_accepted) == (False, [])
    assert (result.task.column, InboxItem.objects.get().kind) == (Column.DOING, "review")


# --- task_claim: a first claim, whole --------------------------------------------------------


def claim_hint(run_id: Any, token: str, task: Task) -> list[str]:
    args = json.dumps(
        {"leaseToken": token, "note": f"working on task {task.pk}", "runId": str(run_id)},
        separators=(", ", ": "),
    )
    return [f"Next: report_progress {args}"]


def test_a_first_claim_takes_the_task_with_a_20_minute_lease(agent, task, frozen):
    now = timezone.now()
    seq = last_seq()
    claim = task_claim(task_id=task.pk, connection=agent)
    run = Run.objects.get()
    token = lease_token_for(run_id=run.run_id, epoch=1)
    assert (claim.run.pk, claim.lease_token, run.lease_token_hash) == (run.pk, token, token_hash(token))
    assert (run.workspace_id, run.task_id, run.connection_id, run.user_id, run.epoch, run.approval_id) == (
        task.workspace_id,
        task.pk,
        agent.pk,
        None,
        1,
        None,
    )
    assert (run.state, run.started_at, run.last_heartbeat_at, run.lease_expires_at) == (
        "active",
        now,
        now,
        now + timedelta(minutes=20),
    )
    assert task_row(task) == (Column.DOING, 1, agent.pk, None, now)
    assert claim.payload() == {
        "runId": str(run.run_id),
        "leaseToken": token,
        "leaseExpiresAt": iso(now + timedelta(minutes=20)),
        "renewEverySeconds": 300,
        "epoch": 1,
        "resumed": False,
        "task": task_payload(Task.objects.get(pk=task.pk)),
        "context": {
            "description": "It loops.",
            "lastRunNotes": [],
            "reworkNotes": [],
            "approvedStep": None,
            "answers": [],
        },
    }
    assert claim.task.assignee_connection == agent and claim.task.assignee_user is None
    assert events_since(seq) == [
        (
            "run.started",
            "run",
            str(run.run_id),
            1,
            {"runId": str(run.run_id), "taskId": task.pk, "leaseExpiresAt": iso(now + timedelta(minutes=20))},
        )
    ]
    assert claim.hint.lines() == claim_hint(run.run_id, token, task)


def test_a_backlog_task_can_be_claimed(agent, make_task):
    task = make_task("Someday", column=Column.BACKLOG)
    assert task_claim(task_id=task.pk, connection=agent).task.column == Column.DOING


def test_a_person_claims_for_themself(alice, ws_a, task, frozen):
    claim = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    run = Run.objects.get()
    assert (run.user_id, run.connection_id) == (alice.pk, None)
    assert task_row(task) == (Column.DOING, 1, None, alice.pk, timezone.now())
    assert (claim.task.assignee_user, claim.task.assignee_connection) == (alice, None)


@pytest.mark.parametrize(
    ("who", "message"),
    [
        pytest.param("nobody", "task_claim needs exactly one of connection or user", id="nobody"),
        pytest.param("both", "task_claim needs exactly one of connection or user", id="both"),
        pytest.param(
            "person-without-workspace", "task_claim by a person needs the workspace", id="no-workspace"
        ),
    ],
)
def test_a_claim_names_exactly_one_claimer_and_a_persons_workspace(agent, alice, task, who, message):
    kwargs = {
        "nobody": {},
        "both": {"connection": agent, "user": alice},
        "person-without-workspace": {"user": alice},
    }
    with pytest.raises(ValueError) as raised:
        task_claim(task_id=task.pk, **kwargs[who])
    assert str(raised.value) == message
    assert not Run.objects.exists()


@pytest.mark.parametrize("column", [Column.DONE, Column.DROPPED, Column.TRASH])
def test_a_task_out_of_backlog_and_todo_cannot_be_started(agent, alice, task, column):
    if column == Column.TRASH:
        task_trash(task=task, by_user=alice)
    else:
        task_move(task=task, column=column, by_user=alice)
    before = (task_row(task), last_seq())
    error = refused("invalid_argument", task_claim, task_id=task.pk, connection=agent)
    reason = f"task {task.pk} is in {column}; only Backlog and Todo tasks can be started"
    assert whole(error) == (
        "invalid_argument",
        f"id: {reason}",
        {"field": "id", "reason": reason},
        ["Fix: get_my_work {}"],
    )
    assert (task_row(task), last_seq()) == before
    assert not Run.objects.exists()


def test_a_task_waiting_for_review_in_doing_cannot_be_started(agent, agent2, make_task):
    task = make_task("Ship the importer", review_required=True)
    complete(task_claim(task_id=task.pk, connection=agent))
    error = refused("invalid_argument", task_claim, task_id=task.pk, connection=agent2)
    assert (
        error.details["reason"] == f"task {task.pk} is in doing; only Backlog and Todo tasks can be started"
    )


def test_a_full_inbox_refuses_a_claim_and_changes_nothing(agent, make_task):
    for i in range(5):
        complete(task_claim(task_id=make_task(f"Review {i}", review_required=True).pk, connection=agent))
    task = make_task("Blocked")
    before = (task_row(task), last_seq(), Run.objects.count())
    refused("attention_queue_full", task_claim, task_id=task.pk, connection=agent)
    assert (task_row(task), last_seq(), Run.objects.count()) == before


# --- task_claim: a holder that claims again gets its run back -------------------------------


def test_the_holder_claiming_again_resumes_the_same_run_and_renews_the_lease(agent, task, frozen):
    first = task_claim(task_id=task.pk, connection=agent)
    started = timezone.now()
    frozen.shift(timedelta(minutes=5))
    now = timezone.now()
    seq = last_seq()
    again = task_claim(task_id=task.pk, connection=agent)
    run_id = first.run.run_id
    assert again.payload() == {
        "runId": str(run_id),
        "leaseToken": first.lease_token,
        "leaseExpiresAt": iso(now + timedelta(minutes=20)),
        "renewEverySeconds": 300,
        "epoch": 1,
        "resumed": True,
        "task": task_payload(Task.objects.get(pk=task.pk)),
        "context": first.context,
    }
    assert run_row(first) == (
        "active",
        token_hash(first.lease_token),
        now,
        now + timedelta(minutes=20),
        None,
        "",
    )
    assert task_row(task) == (Column.DOING, 1, agent.pk, None, started)
    assert events_since(seq) == [
        (
            "run.resumed",
            "run",
            str(run_id),
            1,
            {"runId": str(run_id), "taskId": task.pk, "leaseExpiresAt": iso(now + timedelta(minutes=20))},
        )
    ]
    assert again.hint.lines() == claim_hint(run_id, first.lease_token, task)


def test_resuming_keeps_a_longer_question_hold_and_the_waiting_state(agent, task, frozen):
    first = task_claim(task_id=task.pk, connection=agent)
    ask(first)
    held_until = timezone.now() + timedelta(minutes=60)
    frozen.shift(timedelta(minutes=5))
    again = task_claim(task_id=task.pk, connection=agent)
    assert (again.run.lease_expires_at, again.payload()["leaseExpiresAt"]) == (held_until, iso(held_until))
    assert run_row(first)[0::3] == ("waiting_input", held_until)


def test_resuming_writes_the_token_hash_again_after_a_key_rotation(agent, task):
    first = task_claim(task_id=task.pk, connection=agent)
    Run.objects.filter(pk=first.run.pk).update(lease_token_hash="hash under an old key")
    refused("lease_lost", beat, first)
    again = task_claim(task_id=task.pk, connection=agent)
    assert Run.objects.get().lease_token_hash == token_hash(first.lease_token)
    assert again.run.lease_token_hash == token_hash(first.lease_token)
    beat(again)


def test_a_person_claiming_again_resumes_their_run(alice, ws_a, task):
    first = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    again = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    assert (again.resumed, again.run.pk, again.lease_token) == (True, first.run.pk, first.lease_token)


@pytest.mark.parametrize(
    ("holder", "claimer", "name"),
    [
        pytest.param("alice", "bob", "alice", id="person-then-another-person"),
        pytest.param("alice", "agent", "alice", id="person-then-an-agent-of-theirs"),
        pytest.param("agent", "alice", "Claude Code", id="agent-then-its-person"),
        pytest.param("agent", "agent2", "Claude Code", id="agent-then-another-agent"),
    ],
)
def test_anyone_but_the_holder_is_told_the_task_is_claimed(
    agent, agent2, alice, bob, ws_a, task, frozen, holder, claimer, name
):
    people = {"alice": alice, "bob": bob}
    agents = {"agent": agent, "agent2": agent2}

    def claim_as(who: str) -> Any:
        if who in people:
            return task_claim(task_id=task.pk, user=people[who], workspace=ws_a)
        return task_claim(task_id=task.pk, connection=agents[who])

    first = claim_as(holder)
    before = (run_row(first), task_row(task), last_seq())
    with pytest.raises(WeftError) as raised:
        claim_as(claimer)
    until = iso(first.run.lease_expires_at)
    assert whole(raised.value) == (
        "already_claimed",
        f"task {task.pk} is held by {name} until {until}; do not duplicate the work",
        {"taskId": task.pk, "holder": name, "until": until},
        ["Fix: get_my_work {}"],
    )
    assert (run_row(first), task_row(task), last_seq()) == before


@pytest.mark.parametrize("claimer", ["agent", "agent2"])
def test_a_claim_at_the_expiry_of_the_live_run_expires_it_and_starts_a_new_run(
    agent, agent2, task, frozen, claimer
):
    first = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=20))
    now = timezone.now()
    seq = last_seq()
    second = task_claim(task_id=task.pk, connection={"agent": agent, "agent2": agent2}[claimer])
    assert (second.resumed, second.run.epoch) == (False, 3)
    assert second.run.run_id != first.run.run_id
    assert run_row(first) == ("stale", "", first.run.started_at, now, now, "no heartbeat for 20 minutes")
    assert [(e[0], e[3]) for e in events_since(seq)] == [("run.stale", 2), ("run.started", 3)]
    assert task_row(task)[:2] == (Column.DOING, 3)


def test_a_claim_a_moment_before_expiry_resumes(agent, task, frozen):
    first = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=20) - timedelta(microseconds=1))
    assert task_claim(task_id=task.pk, connection=agent).run.run_id == first.run.run_id


# --- task_claim: the context it hands over ---------------------------------------------------


def test_the_context_carries_the_last_runs_notes_outcome_next_step_and_rework(
    agent, agent2, alice, make_task, frozen
):
    task = make_task("Ship the importer", review_required=True, description="CSV in, rows out.")
    first = task_claim(task_id=task.pk, connection=agent)
    for n in range(1, 6):
        frozen.shift(timedelta(seconds=1))
        beat(first, f"n{n}")
    frozen.shift(timedelta(seconds=1))
    beat(first, "n6")
    beat(first, "n7")  # the same instant as n6: the later row counts as later
    result = complete(first, outcome="first try", next_step="try the other parser")
    inbox_decide(item=result.inbox_item, user=alice, decision="rework", note="Handle empty files too.")
    second = task_claim(task_id=task.pk, connection=agent2)
    assert second.run.epoch == 2
    assert second.context == {
        "description": "CSV in, rows out.",
        "lastRunNotes": [
            "n3",
            "n4",
            "n5",
            "n6",
            "n7",
            "outcome: first try",
            "next step: try the other parser",
        ],
        "reworkNotes": ["Handle empty files too."],
        "approvedStep": None,
        "answers": [],
    }


def test_a_rework_without_a_note_and_a_report_without_a_next_step_add_nothing(agent, alice, make_task):
    task = make_task("Ship the importer", review_required=True)
    result = complete(task_claim(task_id=task.pk, connection=agent), outcome="first try")
    inbox_decide(item=result.inbox_item, user=alice, decision="rework")
    context = task_claim(task_id=task.pk, connection=agent).context
    assert (context["lastRunNotes"], context["reworkNotes"]) == (["outcome: first try"], [])


@pytest.mark.parametrize(
    "apart", [timedelta(0), timedelta(minutes=1)], ids=["same-instant", "a-minute-apart"]
)
def test_the_context_reads_the_latest_earlier_run(agent, task, frozen, apart):
    for note in ("first run", "second run"):
        claim = task_claim(task_id=task.pk, connection=agent)
        beat(claim, note)
        release(claim)
        frozen.shift(apart)
    context = task_claim(task_id=task.pk, connection=agent).context
    assert context["lastRunNotes"] == ["second run"]


def test_a_claim_hands_over_the_approved_step_once(agent, alice, make_task, frozen):
    task, approval = reviewed_with_step(make_task, agent, alice)
    frozen.shift(timedelta(minutes=1))
    now = timezone.now()
    seq = last_seq()
    claim = task_claim(task_id=task.pk, connection=agent)
    assert claim.context["approvedStep"] == {
        "id": approval.pk,
        "step": "deploy to staging",
        "expiresAt": iso(approval.expires_at),
    }
    assert Run.objects.get(pk=claim.run.pk).approval_id == approval.pk
    assert Approval.objects.get(pk=approval.pk).delivered_at == now
    assert [e for e in events_since(seq) if e[0] == "approval.delivered"] == [
        (
            "approval.delivered",
            "approval",
            str(approval.pk),
            None,
            {"approvalId": approval.pk, "taskId": task.pk},
        )
    ]
    # The resumed run carries the step again, without a second delivery.
    seq = last_seq()
    again = task_claim(task_id=task.pk, connection=agent)
    assert again.context["approvedStep"] == claim.context["approvedStep"]
    assert [e[0] for e in events_since(seq)] == ["run.resumed"]


def test_an_approval_get_my_work_delivered_is_not_delivered_again(agent, alice, make_task):
    task, approval = reviewed_with_step(make_task, agent, alice)
    work_for_connection(connection=agent)
    delivered_at = Approval.objects.get(pk=approval.pk).delivered_at
    seq = last_seq()
    claim = task_claim(task_id=task.pk, connection=agent)
    assert claim.context["approvedStep"]["id"] == approval.pk
    assert Approval.objects.get(pk=approval.pk).delivered_at == delivered_at
    assert [e[0] for e in events_since(seq)] == ["run.started"]


def test_an_approval_is_for_the_connection_whose_run_produced_it(agent, agent2, alice, make_task):
    task, _ = reviewed_with_step(make_task, agent, alice)
    refused("invalid_argument", task_claim, task_id=task.pk, connection=agent2)
    task_move(task=task, column=Column.TODO, by_user=alice)
    assert task_claim(task_id=task.pk, connection=agent2).context["approvedStep"] is None


def test_an_approval_is_valid_until_just_before_it_expires(agent, alice, make_task, frozen):
    task, approval = reviewed_with_step(make_task, agent, alice)
    frozen.shift(timedelta(hours=72) - timedelta(microseconds=1))
    assert task_claim(task_id=task.pk, connection=agent).context["approvedStep"]["id"] == approval.pk


def test_a_used_approval_does_not_start_the_task_again(agent, alice, make_task):
    task, _ = reviewed_with_step(make_task, agent, alice)
    review = complete(task_claim(task_id=task.pk, connection=agent)).inbox_item
    inbox_decide(item=review, user=alice, decision="accept")  # no next step: nothing approved
    assert task_row(task)[0] == Column.DONE
    refused("invalid_argument", task_claim, task_id=task.pk, connection=agent)


def test_of_two_valid_approvals_the_latest_is_the_one_started_on(agent, agent2, alice, make_task, frozen):
    task, older = reviewed_with_step(make_task, agent, alice, step="older step")
    task_move(task=task, column=Column.TODO, by_user=alice)
    frozen.shift(timedelta(minutes=1))
    result = complete(task_claim(task_id=task.pk, connection=agent2), next_step="newer step")
    newer = inbox_decide(item=result.inbox_item, user=alice, decision="accept").approval
    assert newer is not None
    Approval.objects.filter(pk=newer.pk).update(connection=agent)
    claim = task_claim(task_id=task.pk, connection=agent)
    assert claim.context["approvedStep"]["step"] == "newer step"
    assert Approval.objects.get(pk=older.pk).delivered_at is None


def answered(claim: Any, alice: Any, text: str = "PostgreSQL") -> Question:
    question = ask(claim).question
    question_answer(question=question, user=alice, answer=text)
    return Question.objects.get(pk=question.pk)


def test_a_claim_hands_over_the_answers_to_the_holders_questions_once(agent, alice, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    first = answered(claim, alice, "PostgreSQL")
    frozen.shift(timedelta(seconds=1))
    # Asked later, answered... and an older question answered later still comes after it.
    second_q = ask(claim, "Which port?").question
    third_q = ask(claim, "Which host?").question
    question_answer(question=third_q, user=alice, answer="db.internal")
    frozen.shift(timedelta(seconds=1))
    question_answer(question=second_q, user=alice, answer="5432")
    now = timezone.now()
    seq = last_seq()
    again = task_claim(task_id=task.pk, connection=agent)
    order = [first.pk, third_q.pk, second_q.pk]
    delivered = [Question.objects.get(pk=pk) for pk in order]
    assert again.context["answers"] == [question_payload(q) for q in delivered]
    assert [q["answer"] for q in again.context["answers"]] == ["PostgreSQL", "db.internal", "5432"]
    assert [q.delivered_at for q in delivered] == [now, now, now]
    assert [e for e in events_since(seq) if e[0] == "question.delivered"] == [
        ("question.delivered", "question", str(pk), None, {"questionId": pk, "taskId": task.pk})
        for pk in order
    ]
    assert task_claim(task_id=task.pk, connection=agent).context["answers"] == []


def test_answers_go_only_to_the_asking_connection_and_only_with_their_task(
    agent, agent2, alice, task, make_task, frozen
):
    theirs = task_claim(task_id=task.pk, connection=agent2)
    answered(theirs, alice)
    release(theirs)
    other = task_claim(task_id=make_task("Other").pk, connection=agent)
    answered(other, alice)
    mine = task_claim(task_id=task.pk, connection=agent)
    assert mine.context["answers"] == []
    assert Question.objects.filter(delivered_at__isnull=False).count() == 0


def test_a_persons_claim_gets_no_answers(alice, ws_a, task):
    claim = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    answered(claim, alice)
    assert task_claim(task_id=task.pk, user=alice, workspace=ws_a).context["answers"] == []


# --- the hand-over itself ---------------------------------------------------------------------


def test_an_answer_is_marked_delivered_once(agent, alice, task, frozen):
    question = answered(task_claim(task_id=task.pk, connection=agent), alice)
    now = timezone.now()
    seq = last_seq()
    assert mark_delivered(question, now) is True
    assert (question.delivered_at, Question.objects.get(pk=question.pk).delivered_at) == (now, now)
    assert events_since(seq) == [
        (
            "question.delivered",
            "question",
            str(question.pk),
            None,
            {"questionId": question.pk, "taskId": task.pk},
        )
    ]
    stale = Question.objects.get(pk=question.pk)
    stale.delivered_at = None
    frozen.shift(timedelta(minutes=1))
    assert mark_delivered(stale, timezone.now()) is False
    assert (stale.delivered_at, Question.objects.get(pk=question.pk).delivered_at, last_seq()) == (
        None,
        now,
        seq + 1,
    )


def test_an_approval_is_marked_delivered_once(agent, alice, make_task, frozen):
    task, approval = reviewed_with_step(make_task, agent, alice)
    now = timezone.now()
    seq = last_seq()
    assert mark_delivered(approval, now) is True
    assert (approval.delivered_at, Approval.objects.get(pk=approval.pk).delivered_at) == (now, now)
    assert events_since(seq) == [
        (
            "approval.delivered",
            "approval",
            str(approval.pk),
            None,
            {"approvalId": approval.pk, "taskId": task.pk},
        )
    ]
    stale = Approval.objects.get(pk=approval.pk)
    stale.delivered_at = None
    frozen.shift(timedelta(minutes=1))
    assert mark_delivered(stale, timezone.now()) is False
    assert (stale.delivered_at, Approval.objects.get(pk=approval.pk).delivered_at, last_seq()) == (
        None,
        now,
        seq + 1,
    )


# --- run_heartbeat ---------------------------------------------------------------------------


def test_a_heartbeat_renews_the_lease_to_20_minutes_and_records_the_note(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=5))
    now = timezone.now()
    seq = last_seq()
    result = run_heartbeat(
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        note="  compiling  ",
        status="  build  ",
    )
    until = now + timedelta(minutes=20)
    run_id = str(claim.run.run_id)
    assert result.payload() == {
        "runId": run_id,
        "taskId": task.pk,
        "state": "active",
        "epoch": 1,
        "leaseExpiresAt": iso(until),
        "renewEverySeconds": 300,
        "action": "heartbeat",
    }
    assert (result.run.last_heartbeat_at, result.run.lease_expires_at) == (now, until)
    assert run_row(claim) == ("active", token_hash(claim.lease_token), now, until, None, "")
    progress = ProgressNote.objects.get()
    assert (progress.workspace_id, progress.run_id, progress.note, progress.status, progress.created_at) == (
        task.workspace_id,
        claim.run.pk,
        "compiling",
        "build",
        now,
    )
    assert events_since(seq) == [
        (
            "run.heartbeat",
            "run",
            run_id,
            1,
            {"runId": run_id, "taskId": task.pk, "note": "compiling", "status": "build"},
        )
    ]
    args = json.dumps(
        {"leaseToken": claim.lease_token, "note": f"still working on task {task.pk}", "runId": run_id},
        separators=(", ", ": "),
    )
    assert result.hint.lines() == [
        f"Wait: work on task {task.pk} continues; renew within 300 seconds (lease until {iso(until)});"
        f" check again with report_progress {args}"
    ]


def test_a_heartbeat_without_a_status_records_an_empty_one(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    seq = last_seq()
    run_heartbeat(workspace=agent.workspace, run_id=claim.run.run_id, lease_token=claim.lease_token, note="")
    progress = ProgressNote.objects.get()
    assert (progress.note, progress.status) == ("", "")
    assert events_since(seq)[0][4] == {
        "runId": str(claim.run.run_id),
        "taskId": task.pk,
        "note": "",
        "status": "",
    }


def test_a_heartbeat_never_shortens_a_question_hold(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    ask(claim)
    held_until = timezone.now() + timedelta(minutes=60)
    frozen.shift(timedelta(minutes=5))
    result = beat(claim)
    assert (result.run.lease_expires_at, result.payload()["leaseExpiresAt"]) == (held_until, iso(held_until))
    assert run_row(claim)[0::3] == ("waiting_input", held_until)
    assert result.payload()["state"] == "waiting_input"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(
            {"note": "x" * 2_001},
            limit_refusal("note", "at most 2000 characters (got 2001)", "too_long", 2_000),
            id="note-2001",
        ),
        pytest.param({"note": "a\x00b"}, limit_refusal("note", NUL_REASON, "nul"), id="note-nul"),
        pytest.param(
            {"note": "ok", "status": "s" * 101},
            limit_refusal("status", "at most 100 characters (got 101)", "too_long", 100),
            id="status-101",
        ),
        pytest.param(
            {"note": "ok", "status": 3}, limit_refusal("status", "must be a string", "type"), id="status-3"
        ),
    ],
)
def test_a_heartbeat_past_a_limit_is_refused_and_changes_nothing(agent, task, frozen, values, expected):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=1))
    before = (run_row(claim), last_seq())
    error = refused(
        "invalid_argument",
        run_heartbeat,
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        **values,
    )
    assert whole(error) == expected
    assert (run_row(claim), last_seq(), ProgressNote.objects.exists()) == (*before, False)


def test_a_heartbeat_at_its_limits_is_kept_whole(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    run_heartbeat(
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        note="n" * 2_000,
        status="s" * 100,
    )
    progress = ProgressNote.objects.get()
    assert (progress.note, progress.status) == ("n" * 2_000, "s" * 100)


@pytest.mark.parametrize(
    "late", [timedelta(minutes=20), timedelta(minutes=30)], ids=["at-expiry", "after-expiry"]
)
def test_a_heartbeat_at_or_after_expiry_is_lease_lost_and_changes_nothing(agent, task, frozen, late):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(late)
    before = (run_row(claim), last_seq())
    assert whole(refused("lease_lost", beat, claim)) == lost(claim)
    assert (run_row(claim), last_seq(), ProgressNote.objects.exists()) == (*before, False)


def test_a_heartbeat_with_a_wrong_token_is_lease_lost(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    error = refused(
        "lease_lost",
        run_heartbeat,
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token="x",
        note="hi",
    )
    assert whole(error) == lost(claim)
    assert not ProgressNote.objects.exists()


# --- run_request_input -----------------------------------------------------------------------


def test_a_question_goes_to_the_inbox_and_holds_the_claim_60_minutes(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=5))
    now = timezone.now()
    seq = last_seq()
    result = ask(claim, "  Which database?  ", ["  PostgreSQL ", "SQLite"])
    until = now + timedelta(minutes=60)
    question, item = Question.objects.get(), InboxItem.objects.get()
    run_id = str(claim.run.run_id)
    assert result.payload() == {
        "questionId": question.pk,
        "inboxItemId": item.pk,
        "runId": run_id,
        "taskId": task.pk,
        "state": "waiting_input",
        "leaseExpiresAt": iso(until),
    }
    assert (result.run.state, result.run.lease_expires_at) == ("waiting_input", until)
    assert run_row(claim) == (
        "waiting_input",
        token_hash(claim.lease_token),
        claim.run.started_at,
        until,
        None,
        "",
    )
    assert (question.workspace_id, question.task_id, question.run_id, question.connection_id) == (
        task.workspace_id,
        task.pk,
        claim.run.pk,
        agent.pk,
    )
    assert (question.text, question.options, question.state, question.created_at) == (
        "Which database?",
        ["PostgreSQL", "SQLite"],
        "open",
        now,
    )
    assert (item.workspace_id, item.kind, item.task_id, item.run_id, item.question_id) == (
        task.workspace_id,
        "question",
        task.pk,
        claim.run.pk,
        question.pk,
    )
    assert (item.state, item.estimated_minutes, item.created_at, item.report_id) == ("open", 2, now, None)
    assert events_since(seq) == [
        (
            "run.input_requested",
            "run",
            run_id,
            1,
            {"runId": run_id, "taskId": task.pk, "questionId": question.pk},
        ),
        (
            "inbox.item_created",
            "inbox_item",
            str(item.pk),
            None,
            {"itemId": item.pk, "kind": "question", "taskId": task.pk},
        ),
    ]
    assert result.hint.lines() == [
        f"Wait: a person answers question {question.pk} on task {task.pk} in the Inbox"
        f" (the claim holds until {iso(until)}); check again with get_my_work {{}}"
    ]


def test_a_question_by_a_person_has_no_connection(alice, ws_a, task):
    claim = task_claim(task_id=task.pk, user=alice, workspace=ws_a)
    assert ask(claim).question.connection_id is None


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param({"question": "  "}, limit_refusal("question", "must not be empty", "empty"), id="blank"),
        pytest.param(
            {"question": "q" * 501},
            limit_refusal("question", "at most 500 characters (got 501)", "too_long", 500),
            id="question-501",
        ),
        pytest.param(
            {"options": "PostgreSQL"},
            limit_refusal("options", "must be a list of strings", "type"),
            id="options-text",
        ),
        pytest.param(
            {"options": ["o"] * 11},
            limit_refusal("options", "at most 10 items (got 11)", "too_long", 10),
            id="11-options",
        ),
        pytest.param(
            {"options": ["ok", "o" * 201]},
            limit_refusal("options[1]", "at most 200 characters (got 201)", "too_long", 200),
            id="option-201",
        ),
        pytest.param(
            {"options": ["ok", "  "]},
            limit_refusal("options[1]", "must not be empty", "empty"),
            id="blank-option",
        ),
        pytest.param(
            {"options": [5]}, limit_refusal("options[0]", "must be a string", "type"), id="option-5"
        ),
    ],
)
def test_a_question_past_a_limit_is_refused_and_changes_nothing(agent, task, frozen, values, expected):
    claim = task_claim(task_id=task.pk, connection=agent)
    values.setdefault("question", "Which database?")
    before = (run_row(claim), last_seq())
    assert whole(refused("invalid_argument", ask, claim, **values)) == expected
    assert (run_row(claim), last_seq(), Question.objects.exists(), InboxItem.objects.exists()) == (
        *before,
        False,
        False,
    )


def test_a_question_at_its_limits_is_kept_whole(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    options = [f"{i}" * 200 for i in range(10)]
    ask(claim, "q" * 500, options)
    assert (Question.objects.get().text, Question.objects.get().options) == ("q" * 500, options)


def test_a_question_with_a_wrong_token_is_lease_lost_and_changes_nothing(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    before = (run_row(claim), last_seq())
    error = refused(
        "lease_lost",
        run_request_input,
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token="x",
        question="Which?",
    )
    assert whole(error) == lost(claim)
    assert (run_row(claim), last_seq(), Question.objects.exists(), InboxItem.objects.exists()) == (
        *before,
        False,
        False,
    )


# --- run_release -----------------------------------------------------------------------------


def test_a_release_gives_the_task_back_to_todo_at_a_new_epoch(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=2))
    now = timezone.now()
    seq = last_seq()
    result = release(claim, "  blocked on credentials  ")
    run_id = str(claim.run.run_id)
    assert result.payload() == {
        "runId": run_id,
        "taskId": task.pk,
        "state": "released",
        "epoch": 1,
        "leaseExpiresAt": None,
        "renewEverySeconds": 300,
        "action": "released",
    }
    assert (result.run.state, result.run.ended_at) == ("released", now)
    assert run_row(claim) == (
        "released",
        "",
        claim.run.started_at,
        claim.run.lease_expires_at,
        now,
        "blocked on credentials",
    )
    assert task_row(task) == (Column.TODO, 2, None, None, now)
    assert events_since(seq) == [
        (
            "run.released",
            "run",
            run_id,
            2,
            {"runId": run_id, "taskId": task.pk, "reason": "blocked on credentials"},
        )
    ]
    assert result.hint.lines() == ["Next: get_my_work {}"]


def test_a_release_without_a_reason_is_recorded_as_released(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    seq = last_seq()
    release(claim, "   ")
    assert run_row(claim)[-1] == "released"
    assert events_since(seq)[0][4]["reason"] == ""


def test_a_release_reason_of_200_characters_is_kept_and_201_refused(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    before = (run_row(claim), last_seq())
    assert whole(refused("invalid_argument", release, claim, "r" * 201)) == limit_refusal(
        "reason", "at most 200 characters (got 201)", "too_long", 200
    )
    assert (run_row(claim), last_seq()) == before
    release(claim, "r" * 200)
    assert run_row(claim)[-1] == "r" * 200


def test_a_release_with_a_wrong_token_is_lease_lost_and_changes_nothing(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    before = (run_row(claim), task_row(task), last_seq())
    error = refused(
        "lease_lost",
        run_release,
        workspace=agent.workspace,
        run_id=claim.run.run_id,
        lease_token="x",
        reason="r",
    )
    assert whole(error) == lost(claim)
    assert (run_row(claim), task_row(task), last_seq()) == before


def test_a_second_release_is_lease_lost(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    release(claim)
    assert whole(refused("lease_lost", release, claim)) == lost(claim, epoch=2)


# --- every lease-guarded write refuses a suspended workspace ----------------------------------


@pytest.mark.parametrize("call", ["heartbeat", "question", "complete", "release"])
def test_a_suspended_workspace_refuses_every_write_of_a_run(agent, task, ws_a, call):
    claim = task_claim(task_id=task.pk, connection=agent)
    ws_a.is_suspended = True
    ws_a.save()
    common = {"workspace": ws_a, "run_id": claim.run.run_id, "lease_token": claim.lease_token}
    calls = {
        "heartbeat": lambda: run_heartbeat(**common, note="hi"),
        "question": lambda: run_request_input(**common, question="Which?"),
        "complete": lambda: run_complete(**common, outcome="done"),
        "release": lambda: run_release(**common, reason="r"),
    }
    before = (run_row(claim), task_row(task), last_seq())
    refused("workspace_suspended", calls[call])
    assert (run_row(claim), task_row(task), last_seq()) == before


# --- lease_sweep -----------------------------------------------------------------------------


def test_a_sweep_expires_the_earliest_leases_first_up_to_its_batch(agent, agent2, make_task, frozen):
    claims = []
    for title, connection in (("First", agent), ("Second", agent2), ("Third", agent)):
        claims.append(task_claim(task_id=make_task(title).pk, connection=connection))
        frozen.shift(timedelta(minutes=1))
    frozen.shift(timedelta(minutes=20))
    assert lease_sweep(batch=2) == 2
    assert [Run.objects.get(pk=c.run.pk).state for c in claims] == ["stale", "stale", "active"]
    assert lease_sweep() == 1
    assert lease_sweep() == 0


def test_a_sweep_at_a_given_time_expires_what_ends_by_then(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    expiry = claim.run.lease_expires_at
    assert lease_sweep(now=expiry - timedelta(microseconds=1)) == 0
    assert lease_sweep(now=expiry) == 1
    assert run_row(claim)[-2:] == (expiry, "no heartbeat for 20 minutes")
    assert task_row(task) == (Column.TODO, 2, None, None, expiry)


# --- what a claim reads and writes belongs to its own task and run ---------------------------


def test_the_context_reads_the_last_run_of_this_task_not_of_another(agent, task, make_task, frozen):
    first = task_claim(task_id=task.pk, connection=agent)
    beat(first, "on this task")
    release(first)
    frozen.shift(timedelta(minutes=1))
    other = task_claim(task_id=make_task("Other").pk, connection=agent)
    beat(other, "on the other task")
    release(other)
    frozen.shift(timedelta(minutes=1))
    assert task_claim(task_id=task.pk, connection=agent).context["lastRunNotes"] == ["on this task"]


def test_the_last_notes_are_the_latest_by_time_not_by_row(agent, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=10))
    for n in range(1, 6):
        beat(claim, f"late {n}")
    frozen.shift(timedelta(minutes=-5))
    beat(claim, "recorded last, timed earlier")
    release(claim)
    frozen.shift(timedelta(minutes=10))
    notes = task_claim(task_id=task.pk, connection=agent).context["lastRunNotes"]
    assert notes == ["late 1", "late 2", "late 3", "late 4", "late 5"]


def test_rework_notes_come_from_the_last_run_only(agent, alice, make_task, frozen):
    task = make_task("Ship the importer", review_required=True)
    for note in ("First rework.", "Second rework."):
        result = complete(task_claim(task_id=task.pk, connection=agent))
        inbox_decide(item=result.inbox_item, user=alice, decision="rework", note=note)
        frozen.shift(timedelta(minutes=1))
    assert task_claim(task_id=task.pk, connection=agent).context["reworkNotes"] == ["Second rework."]


def test_a_dropped_questions_note_is_not_a_rework_note(agent, alice, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    item = ask(claim).item
    inbox_decide(item=item, user=alice, decision="drop", note="Not needed.")
    release(claim)
    assert task_claim(task_id=task.pk, connection=agent).context["reworkNotes"] == []


def test_a_resume_hands_over_no_open_question(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    ask(claim)
    assert task_claim(task_id=task.pk, connection=agent).context["answers"] == []
    assert Question.objects.get().delivered_at is None


def test_a_resume_renews_only_its_own_run(agent, agent2, task, make_task, frozen):
    other = task_claim(task_id=make_task("Other").pk, connection=agent2)
    mine = task_claim(task_id=task.pk, connection=agent)
    frozen.shift(timedelta(minutes=5))
    now = timezone.now()
    again = task_claim(task_id=task.pk, connection=agent)
    assert (again.run.last_heartbeat_at, again.run.lease_expires_at) == (now, now + timedelta(minutes=20))
    assert run_row(mine)[2:4] == (now, now + timedelta(minutes=20))
    assert run_row(other)[1:4] == (
        token_hash(other.lease_token),
        other.run.last_heartbeat_at,
        other.run.lease_expires_at,
    )


def test_marking_one_answer_delivered_leaves_the_others(agent, alice, task, frozen):
    claim = task_claim(task_id=task.pk, connection=agent)
    one, two = answered(claim, alice, "a"), answered(claim, alice, "b")
    assert mark_delivered(one, timezone.now()) is True
    assert Question.objects.get(pk=two.pk).delivered_at is None


def test_marking_one_approval_delivered_leaves_the_others(agent, alice, make_task):
    _, one = reviewed_with_step(make_task, agent, alice, step="first")
    _, two = reviewed_with_step(make_task, agent, alice, step="second")
    assert mark_delivered(one, timezone.now()) is True
    assert Approval.objects.get(pk=two.pk).delivered_at is None


def test_complete_uses_up_only_its_own_approval(agent, alice, make_task):
    task, mine = reviewed_with_step(make_task, agent, alice, step="first")
    _, other = reviewed_with_step(make_task, agent, alice, step="second")
    complete(task_claim(task_id=task.pk, connection=agent))
    assert Approval.objects.get(pk=mine.pk).used_at is not None
    assert Approval.objects.get(pk=other.pk).used_at is None


def test_the_context_reads_the_run_that_started_last_even_when_the_clock_went_back(agent, task, frozen):
    frozen.shift(timedelta(minutes=10))
    for note, back in (("started later", timedelta(minutes=-5)), ("started earlier", timedelta(minutes=20))):
        claim = task_claim(task_id=task.pk, connection=agent)
        beat(claim, note)
        release(claim)
        frozen.shift(back)
    assert task_claim(task_id=task.pk, connection=agent).context["lastRunNotes"] == ["started later"]


def test_every_row_of_the_claim_loop_is_stamped_with_the_database_clock(agent, make_task, monkeypatch):
    database_now = timezone.now() + timedelta(hours=3)  # the database's clock, not the process's
    monkeypatch.setattr(clock, "db_now", lambda: database_now)
    claim = task_claim(task_id=make_task("Ship the importer", review_required=True).pk, connection=agent)
    beat(claim)
    ask(claim)
    complete(claim)
    question_item, review_item = InboxItem.objects.order_by("pk")
    assert [
        ProgressNote.objects.get().created_at,
        Question.objects.get().created_at,
        question_item.created_at,
        Report.objects.get().created_at,
        review_item.created_at,
    ] == [database_now] * 5


def test_get_my_work_lists_the_connections_unused_approvals_oldest_first(agent, agent2, alice, make_task):
    approvals = [reviewed_with_step(make_task, agent, alice, step=f"step {n}")[1] for n in range(4)]
    first, second, foreign, used = approvals
    # Created in the order second, first: the listing follows creation, not row order.
    Approval.objects.filter(pk=first.pk).update(created_at=second.created_at + timedelta(seconds=1))
    Approval.objects.filter(pk=foreign.pk).update(connection=agent2)
    Approval.objects.filter(pk=used.pk).update(used_at=timezone.now())
    work = work_for_connection(connection=agent)
    assert [a.pk for a in work.approvals] == [second.pk, first.pk]
    assert work.hint == next_("start_task", {"id": second.task_id})
    assert work_for_connection(connection=agent).approvals == []  # delivered once


def test_a_sweep_batch_is_filled_with_live_runs_only(agent, make_task):
    """Ended runs keep their last expiry; a batch that took them would never reach a live one."""
    for n in range(3):
        release(task_claim(task_id=make_task(f"Ended {n}").pk, connection=agent))
    Run.objects.update(lease_expires_at=clock.db_now() - timedelta(hours=1))
    live = task_claim(task_id=make_task("Live, expired").pk, connection=agent)
    Run.objects.filter(pk=live.run.pk).update(lease_expires_at=clock.db_now() - timedelta(minutes=1))
    assert lease_sweep(batch=2) == 1
    assert Run.objects.get(pk=live.run.pk).state == "stale"


def test_a_lease_token_is_the_salted_hmac_of_its_run_and_epoch_under_the_current_key(settings) -> None:
    """Tokens handed out before stay valid: the token is Django's salted HMAC, whatever computes it,
    and a new SECRET_KEY gives new tokens (it ends every live lease)."""
    import uuid

    from django.utils.crypto import salted_hmac

    from boards.services.common import LEASE_TOKEN_SALT

    run_id = uuid.UUID("12345678-1234-5678-1234-567812345678")
    for secret in ("one key", "another key"):
        settings.SECRET_KEY = secret
        for epoch in (1, 2, 2**31):
            expected = salted_hmac(LEASE_TOKEN_SALT, f"{run_id}:{epoch}", algorithm="sha256").hexdigest()
            assert lease_token_for(run_id=run_id, epoch=epoch) == expected
