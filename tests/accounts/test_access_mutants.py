"""Account access helpers at the points the first mutation run found untested: anonymous callers,
the suspended-workspace refusal, and the rows fetched with a seat."""

from __future__ import annotations

from typing import cast

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from accounts.access import (
    access_connection_for_user,
    access_invitation,
    access_member_seat,
    access_seat,
    require_active_workspace,
)
from accounts.models import AgentConnection, Seat, User
from accounts.services import invitation_create
from weft.errors import WeftError


def test_an_anonymous_visitor_is_answered_like_a_stranger(ws_a):
    with pytest.raises(Http404) as refused:
        access_seat(cast(User, AnonymousUser()), ws_a.slug)  # what request.user is before sign-in
    assert str(refused.value) == "No such workspace"


def test_a_seat_comes_with_its_workspace_and_plan_in_one_query(alice, ws_a, django_assert_num_queries):
    with django_assert_num_queries(1):
        seat = access_seat(alice, ws_a.slug)
        assert (seat.workspace.slug, seat.workspace.plan_id) == (ws_a.slug, ws_a.plan_id)
        assert seat.workspace.plan == ws_a.plan


def test_a_connection_comes_with_its_workspace_in_one_query(alice, ws_a, django_assert_num_queries):
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    with django_assert_num_queries(1):
        assert access_connection_for_user(alice, connection.pk).workspace.slug == ws_a.slug


def test_an_active_workspace_lets_agent_calls_through(ws_a):
    require_active_workspace(ws_a)  # no WeftError


def test_a_suspended_workspace_refuses_with_a_wait_for_the_operators(ws_a):
    ws_a.is_suspended = True
    with pytest.raises(WeftError) as refused:
        require_active_workspace(ws_a)
    error = refused.value
    assert error.code == "workspace_suspended"
    assert error.message == f"workspace {ws_a.slug} is suspended by the operators; agent calls are refused"
    assert error.details == {"workspace": ws_a.slug}
    assert error.fix.lines() == [
        f"Wait: an operator lifts the suspension of workspace {ws_a.slug}; check again with get_my_work {{}}"
    ]


def test_each_refusal_is_a_404_that_names_only_the_kind_of_object(alice, carol, ws_a, ws_b):
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    refusals = {
        "No such workspace": lambda: access_seat(carol, ws_a.slug),
        "No such member": lambda: access_member_seat(alice_seat, 987654321),
        "No such invitation": lambda: access_invitation(alice_seat, 987654321),
        "No such connection": lambda: access_connection_for_user(carol, 987654321),
    }
    for message, refuse in refusals.items():
        with pytest.raises(Http404) as refused:
            refuse()
        assert str(refused.value) == message


def test_the_id_asked_for_picks_the_row_not_the_first_one_in_reach(alice, bob, ws_a):
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    first = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    second = invitation_create(workspace=ws_a, invited_by=alice, email="erin@example.com")
    assert (access_invitation(alice_seat, first.pk), access_invitation(alice_seat, second.pk)) == (
        first,
        second,
    )
    one = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    two = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Codex")
    assert (access_connection_for_user(alice, one.pk), access_connection_for_user(alice, two.pk)) == (
        one,
        two,
    )


def test_a_member_seat_comes_with_its_user_in_one_query(alice, bob, ws_a, django_assert_num_queries):
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    bob_seat_id = Seat.objects.get(workspace=ws_a, user=bob).pk
    with django_assert_num_queries(1):
        assert access_member_seat(alice_seat, bob_seat_id).user.email == bob.email
