"""Every access helper, called with workspace B's caller and workspace A's object id: the answer is
exactly the answer for an id that does not exist, and the helper does find the caller's own object."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.http import Http404

from accounts.access import (
    access_connection_for_user,
    access_invitation,
    access_managing_seat,
    access_member_seat,
    access_seat,
)
from accounts.models import AgentConnection, Seat, Workspace
from accounts.services import invitation_create
from boards.access import access_board, access_inbox_item, access_question, access_task
from boards.services import board_default, task_create
from tests.web.factories import make_question, make_review
from weft.errors import WeftError

MISSING = 987654321


def _refusal(call: Callable[[], Any]) -> tuple[Any, ...]:
    """What a refused lookup answers, with the asked id taken out (it is echoed back)."""
    try:
        found = call()
    except WeftError as error:
        ident = error.details["id"]
        return (
            "WeftError",
            error.code,
            error.message.replace(ident, "ID"),
            {**error.details, "id": "ID"},
            error.fix,
        )
    except Http404 as error:
        return ("Http404", str(error))
    raise AssertionError(f"the lookup found {found!r}")


def assert_foreign_like_missing(lookup: Callable[[Any], Any], foreign_id: Any) -> None:
    assert _refusal(lambda: lookup(foreign_id)) == _refusal(lambda: lookup(MISSING))


@pytest.fixture
def a_connection(ws_a, alice) -> AgentConnection:
    return AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")


@pytest.fixture
def b_connection(ws_b, carol) -> AgentConnection:
    return AgentConnection.objects.create(workspace=ws_b, user=carol, name="Codex")


HELPERS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "task": (access_task, lambda ws, conn, user: task_create(workspace=ws, title="T", by_user=user).task.pk),
    "board": (access_board, lambda ws, conn, user: board_default(workspace=ws).pk),
    "inbox_item": (access_inbox_item, lambda ws, conn, user: make_review(ws, conn).pk),
    "question": (access_question, lambda ws, conn, user: make_question(ws, conn).question_id),
}


@pytest.mark.parametrize("kind", sorted(HELPERS))
def test_it_answers_a_foreign_board_object_like_a_missing_one(
    kind: str, ws_a, alice, a_connection, ws_b, carol, b_connection
):
    helper, make = HELPERS[kind]
    a_id = make(ws_a, a_connection, alice)
    b_id = make(ws_b, b_connection, carol)
    assert helper(ws_a, a_id).pk == a_id
    assert helper(ws_b.pk, b_id).pk == b_id
    workspace: Workspace | int
    for workspace in (ws_b, ws_b.pk):

        def lookup(ident: Any, w: Workspace | int = workspace) -> Any:
            return helper(w, ident)

        assert_foreign_like_missing(lookup, a_id)
        assert_foreign_like_missing(lookup, str(a_id))
    assert_foreign_like_missing(lambda ident: helper(ws_a, ident), b_id)


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize("ident", ["abc", "0", -1, None, "1.5"])
def test_it_answers_an_id_that_cannot_exist_as_not_found(kind: str, ident: Any, ws_a):
    helper, _ = HELPERS[kind]
    with pytest.raises(WeftError) as exc:
        helper(ws_a, ident)
    assert exc.value.code == "not_found"


def test_it_gives_a_seat_only_to_its_holder(alice, bob, carol, ws_a, ws_b):
    # Alice holds a seat in both workspaces: the slug, not her latest seat, decides which one.
    Seat.objects.create(workspace=ws_b, user=alice, role=Seat.MEMBER)
    assert access_seat(alice, ws_a.slug).workspace_id == ws_a.pk
    assert access_seat(alice, ws_b.slug).workspace_id == ws_b.pk
    assert access_seat(bob, ws_a.slug).user_id == bob.pk
    assert access_seat(carol, ws_b.slug).workspace_id == ws_b.pk
    assert_foreign_like_missing(lambda slug: access_seat(carol, slug), ws_a.slug)
    assert _refusal(lambda: access_seat(carol, ws_a.slug)) == _refusal(lambda: access_seat(carol, "no-such"))


def test_it_gives_a_managing_seat_only_to_owners_and_admins_of_that_workspace(alice, bob, carol, ws_a, ws_b):
    assert access_managing_seat(alice, ws_a.slug).user_id == alice.pk
    assert access_managing_seat(carol, ws_b.slug).user_id == carol.pk
    missing = _refusal(lambda: access_managing_seat(carol, "no-such"))
    assert _refusal(lambda: access_managing_seat(carol, ws_a.slug)) == missing
    assert _refusal(lambda: access_managing_seat(bob, ws_a.slug)) == missing
    assert _refusal(lambda: access_managing_seat(alice, ws_b.slug)) == missing


def test_it_finds_a_member_seat_only_in_the_callers_workspace(alice, bob, carol, ws_a, ws_b):
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    carol_seat = Seat.objects.get(workspace=ws_b, user=carol)
    bob_seat = Seat.objects.get(workspace=ws_a, user=bob)
    assert access_member_seat(alice_seat, bob_seat.pk) == bob_seat
    assert_foreign_like_missing(lambda ident: access_member_seat(carol_seat, ident), bob_seat.pk)
    assert_foreign_like_missing(lambda ident: access_member_seat(alice_seat, ident), carol_seat.pk)


def test_it_finds_an_invitation_only_in_the_callers_workspace(alice, carol, ws_a, ws_b):
    invitation = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    carol_seat = Seat.objects.get(workspace=ws_b, user=carol)
    assert access_invitation(alice_seat, invitation.pk) == invitation
    assert_foreign_like_missing(lambda ident: access_invitation(carol_seat, ident), invitation.pk)


def test_it_finds_a_connection_only_for_the_user_who_signed_it_in(alice, bob, carol, a_connection):
    assert access_connection_for_user(alice, a_connection.pk) == a_connection
    assert_foreign_like_missing(lambda ident: access_connection_for_user(carol, ident), a_connection.pk)
    # Bob shares alice's workspace, not her connection.
    assert_foreign_like_missing(lambda ident: access_connection_for_user(bob, ident), a_connection.pk)
