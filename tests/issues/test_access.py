"""issues/access.py called directly: each scope at its edges, every link kind found in the
reporter's own workspace and refused outside it, and the exact refusals (code, details, Fix)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from boards.models import Board
from boards.services import task_claim
from issues import limits
from issues.access import (
    access_issue,
    access_issue_by_guest_token,
    access_issue_for_reporter,
    issue_pk,
    link_target,
)
from issues.models import GuestToken
from tests.issues.helpers import submit
from weft.errors import WeftError
from weft.hints import fix, wait

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(ws_a, alice):
    from boards.services import task_create

    return task_create(workspace=ws_a, title="Fix the login redirect", by_user=alice).task


AGAIN = wait("the reporter shares a live guest token")


def refused(code: str, fn, *args, **kwargs) -> WeftError:
    with pytest.raises(WeftError) as caught:
        fn(*args, **kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


def test_a_missing_issue_is_not_found_with_its_id_and_a_fix_that_reads_my_work():
    error = refused("not_found", issue_pk, "x")
    assert error.details == {"kind": "issue", "id": "x"}
    assert error.fix == fix("get_my_work")


@pytest.mark.parametrize("ident", [0, -1, limits.ID_MAX + 1, "12a", None, " "])
def test_ids_outside_the_id_range_or_not_numbers_cannot_exist(ident):
    error = refused("not_found", issue_pk, ident)
    assert error.details == {"kind": "issue", "id": str(ident)}


@pytest.mark.parametrize("ident,expected", [(1, 1), ("7", 7), (" 9 ", 9), (limits.ID_MAX, limits.ID_MAX)])
def test_ids_at_the_edges_of_the_range_are_read(ident, expected):
    assert issue_pk(ident) == expected


def test_the_maintainers_scope_is_the_receiving_workspace_given_as_a_row_or_an_id(agent, ws_a, ws_b):
    issue = submit(agent).issue
    assert access_issue(ws_a, issue.pk) == issue
    assert access_issue(ws_a.pk, str(issue.pk)) == issue
    refused("not_found", access_issue, ws_b, issue.pk)
    refused("not_found", access_issue, ws_b.pk, issue.pk)


def test_a_reporter_reads_what_its_workspace_filed_elsewhere_and_received(agent_b, ws_a, ws_b, carol, alice):
    from issues.models import IntakeSettings

    IntakeSettings.objects.update_or_create(workspace=ws_a, defaults={"open_intake": True})
    filed_elsewhere = submit(agent_b, workspace=ws_a.slug).issue
    assert filed_elsewhere.workspace_id == ws_a.pk and filed_elsewhere.reporter_workspace_id == ws_b.pk
    assert access_issue_for_reporter(ws_b, filed_elsewhere.pk) == filed_elsewhere  # filed from B
    assert access_issue_for_reporter(ws_a, filed_elsewhere.pk) == filed_elsewhere  # received by A
    third = _third_workspace()
    refused("not_found", access_issue_for_reporter, third, filed_elsewhere.pk)


def _third_workspace():
    from accounts.models import User
    from accounts.services import workspace_create

    dora = User.objects.create_user(email="dora@example.com", password="pw-long-enough-1")
    return workspace_create(owner=dora, name="Gamma")


def _token(issue, *, days: float = 30) -> tuple[str, GuestToken]:
    from accounts.connections import token_checksum

    plain = f"wgt_test_{issue.pk}_{days}"
    row = GuestToken.objects.create(
        issue=issue,
        workspace_id=issue.workspace_id,
        token_hash=token_checksum(plain),
        expires_at=timezone.now() + timedelta(days=days),
    )
    return plain, row


def test_a_guest_token_reads_its_issue_with_the_issue_loaded(agent, django_assert_num_queries):
    issue = submit(agent).issue
    plain, _ = _token(issue)
    with django_assert_num_queries(1):
        read = access_issue_by_guest_token(plain, issue.pk, now=timezone.now(), again=AGAIN)
        assert read.title == issue.title


def test_an_unknown_token_is_refused_naming_the_issue_id(agent):
    issue = submit(agent).issue
    error = refused(
        "guest_token_invalid",
        access_issue_by_guest_token,
        "wgt_nope",
        issue.pk,
        now=timezone.now(),
        again=AGAIN,
    )
    assert error.details == {"issueId": str(issue.pk)}
    assert error.message == "this guest token names no issue thread" and error.fix == AGAIN


def test_a_revoked_token_is_refused_naming_the_issue_id(agent):
    issue = submit(agent).issue
    plain, row = _token(issue)
    GuestToken.objects.filter(pk=row.pk).update(revoked_at=timezone.now())
    error = refused(
        "guest_token_invalid", access_issue_by_guest_token, plain, issue.pk, now=timezone.now(), again=AGAIN
    )
    assert error.details == {"issueId": str(issue.pk)} and error.message == "this guest token was revoked"


def test_a_token_is_expired_at_its_expiry_exactly_and_live_a_moment_before(agent):
    issue = submit(agent).issue
    plain, row = _token(issue)
    before = row.expires_at - timedelta(microseconds=1)
    assert access_issue_by_guest_token(plain, issue.pk, now=before, again=AGAIN) == issue
    error = refused(
        "guest_token_expired", access_issue_by_guest_token, plain, issue.pk, now=row.expires_at, again=AGAIN
    )
    assert error.details == {"issueId": str(issue.pk)}
    assert error.message == f"this guest token expired at {row.expires_at.isoformat()}"


# Link targets --------------------------------------------------------------------------------------


def test_every_link_kind_is_found_in_the_reporters_workspace(agent, ws_a, task):
    board = Board.objects.get(pk=task.board_id)
    claim = task_claim(task_id=task.pk, connection=agent)
    issue = submit(agent).issue
    assert link_target(ws_a, "task", str(task.pk)) == task
    assert link_target(ws_a, "board", str(board.pk)) == board
    assert link_target(ws_a, "issue", str(issue.pk)) == issue
    assert link_target(ws_a, "run", str(claim.run.run_id)) == claim.run


def test_link_targets_of_another_workspace_are_not_found(agent, agent_b, ws_a, ws_b, task):
    board = Board.objects.get(pk=task.board_id)
    claim = task_claim(task_id=task.pk, connection=agent)
    issue = submit(agent).issue
    for kind, ident in (
        ("task", task.pk),
        ("board", board.pk),
        ("issue", issue.pk),
        ("run", claim.run.run_id),
    ):
        refused("not_found", link_target, ws_b, kind, str(ident))


@pytest.mark.parametrize("ident", ["not-a-uuid", "00000000-0000-4000-8000-000000000000"])
def test_a_run_link_that_names_no_run_is_not_found_as_a_run(ws_a, ident):
    error = refused("not_found", link_target, ws_a, "run", ident)
    assert error.details == {"kind": "run", "id": ident}


def test_each_scope_finds_the_issue_named_among_several(agent, ws_a):
    first, second = submit(agent).issue, submit(agent, title="Second report").issue
    assert access_issue(ws_a, second.pk) == second and access_issue(ws_a, first.pk) == first
    assert access_issue_for_reporter(ws_a, second.pk) == second


@pytest.mark.parametrize("scope", [access_issue, access_issue_for_reporter])
def test_a_missing_issue_in_scope_is_refused_naming_its_id(agent, ws_a, scope):
    submit(agent)
    error = refused("not_found", scope, ws_a, 987654)
    assert error.details == {"kind": "issue", "id": "987654"}


def test_a_run_link_names_that_run_among_several(agent, ws_a, alice, task):
    from boards.services import task_create

    task_claim(task_id=task.pk, connection=agent)
    another = task_create(workspace=ws_a, title="Another", by_user=alice).task
    other = task_claim(task_id=another.pk, connection=agent)
    assert link_target(ws_a, "run", str(other.run.run_id)) == other.run
