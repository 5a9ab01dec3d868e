"""Account access helpers at the points the first mutation run found untested: anonymous callers,
the suspended-workspace refusal, and the rows fetched with a seat."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from accounts.access import (
    access_connection_for_user,
    access_invitation,
    access_managing_seat,
    access_member_seat,
    access_seat,
    find_seat,
    require_active_workspace,
)
from accounts.models import AgentConnection, Seat, User
from accounts.services import invitation_create
from tests.accounts.helpers import refusal
from weft.errors import WeftError


def test_an_anonymous_visitor_is_answered_like_a_stranger_without_a_query(
    carol, ws_a, django_assert_num_queries
):
    anonymous = cast(User, AnonymousUser())  # what request.user is before sign-in
    stranger = refusal(lambda: access_seat(carol, ws_a.slug))
    with django_assert_num_queries(0):
        assert refusal(lambda: access_seat(anonymous, ws_a.slug)) == stranger
        assert find_seat(anonymous, ws_a.slug) is None
        assert find_seat(None, ws_a.slug) is None


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


def _refusals(alice_seat: Seat, carol: User, slug: str) -> dict[str, Callable[[], object]]:
    return {
        "workspace": lambda: access_seat(carol, slug),
        "managing workspace": lambda: access_managing_seat(carol, slug),
        "member": lambda: access_member_seat(alice_seat, 987654321),
        "invitation": lambda: access_invitation(alice_seat, 987654321),
        "connection": lambda: access_connection_for_user(carol, 987654321),
    }


def test_each_refusal_is_not_found_naming_only_the_kind_and_the_id_asked(alice, carol, ws_a):
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    refusals = {name: refusal(call) for name, call in _refusals(alice_seat, carol, ws_a.slug).items()}
    fix = ["Fix: get_board_state {}"]
    assert refusals == {
        "workspace": (
            "not_found",
            f"workspace {ws_a.slug} does not exist or you have no seat in it",
            {"kind": "workspace", "id": ws_a.slug},
            fix,
        ),
        "managing workspace": (
            "not_found",
            f"workspace {ws_a.slug} does not exist or you have no seat in it",
            {"kind": "workspace", "id": ws_a.slug},
            fix,
        ),
        "member": (
            "not_found",
            "member 987654321 does not exist in this workspace",
            {"kind": "member", "id": "987654321"},
            fix,
        ),
        "invitation": (
            "not_found",
            "invitation 987654321 does not exist in this workspace",
            {"kind": "invitation", "id": "987654321"},
            fix,
        ),
        "connection": (
            "not_found",
            "connection 987654321 is not one you signed in",
            {"kind": "connection", "id": "987654321"},
            fix,
        ),
    }


def test_each_refusal_is_also_djangos_404_so_every_web_view_answers_it_with_the_404_page(alice, carol, ws_a):
    alice_seat = Seat.objects.get(workspace=ws_a, user=alice)
    for call in _refusals(alice_seat, carol, ws_a.slug).values():
        with pytest.raises(Http404):
            call()


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


# A person's credential for the Inbox over REST, and the plan changes of a workspace.


def _tokens(alice: User, ws_a):
    from accounts.tokens import pat_create

    seat = Seat.objects.get(user=alice, workspace=ws_a)
    deciding = pat_create(seat=seat, name="Me", expires_in_days=None, can_decide=True).token
    plain = pat_create(seat=seat, name="Agent", expires_in_days=None).token
    return deciding, plain


def test_only_the_callers_own_deciding_token_makes_it_a_person(alice, ws_a, django_assert_num_queries):
    from accounts.access import access_deciding_person

    deciding, plain = _tokens(alice, ws_a)
    with django_assert_num_queries(1):  # the token and its person in one query
        person = access_deciding_person(deciding.connection)
        assert person.email == alice.email
    refused = refusal(lambda: access_deciding_person(plain.connection))
    expected_hint = [
        "Wait: a person creates a personal access token with “May decide my Inbox” on the tokens page; "
        "check again with get_my_work {}"
    ]
    assert refused == (
        "forbidden",
        "only a personal access token made with “May decide my Inbox” decides the Inbox as its person",
        {"connectionId": plain.connection.pk},
        expected_hint,
    )


def test_a_revoked_deciding_token_is_no_person(alice, ws_a):
    from django.utils import timezone

    from accounts.access import access_deciding_person
    from accounts.models import PersonalAccessToken

    deciding, _ = _tokens(alice, ws_a)
    PersonalAccessToken.objects.filter(pk=deciding.pk).update(revoked_at=timezone.now())
    assert refusal(lambda: access_deciding_person(deciding.connection))[0] == "forbidden"


def test_a_plan_change_is_found_by_its_id_within_the_workspace(alice, ws_a, carol, ws_b):
    from accounts.access import access_plan_change
    from accounts.models import PlanChange

    def change(ws) -> PlanChange:
        return PlanChange.objects.create(
            workspace=ws, from_plan="free", from_period="monthly", to_plan="pro", to_period="monthly",
            seats=1, provider="recorded", state=PlanChange.RECORDED,
        )  # fmt: skip

    first, second, theirs = change(ws_a), change(ws_a), change(ws_b)
    seat = Seat.objects.select_related("workspace").get(user=alice, workspace=ws_a)
    assert access_plan_change(seat, second.pk) == second
    assert access_plan_change(seat, first.pk) == first
    with pytest.raises(Http404):
        access_plan_change(seat, theirs.pk)
    foreign = refusal(lambda: access_plan_change(seat, theirs.pk))
    missing = refusal(lambda: access_plan_change(seat, 987654))
    assert foreign[1] == f"plan change {theirs.pk} does not exist in this workspace"
    assert missing[:2] == ("not_found", "plan change 987654 does not exist in this workspace")
    assert (foreign[2], missing[2]) == (
        {"kind": "plan change", "id": str(theirs.pk)},
        {"kind": "plan change", "id": "987654"},
    )


def test_a_token_page_names_the_token_it_did_not_find_and_reads_its_connection_with_it(
    alice, bob, ws_a, django_assert_num_queries
):
    from accounts.access import access_personal_token

    deciding, _ = _tokens(alice, ws_a)
    owner = Seat.objects.select_related("workspace").get(user=alice, workspace=ws_a)
    with django_assert_num_queries(1):
        found = access_personal_token(owner, deciding.pk)
        assert found.connection.pk == deciding.connection_id
    member = Seat.objects.select_related("workspace").get(user=bob, workspace=ws_a)
    refused = refusal(lambda: access_personal_token(member, deciding.pk))
    assert refused[:3] == (
        "not_found",
        f"token {deciding.pk} does not exist in this workspace",
        {"kind": "token", "id": str(deciding.pk)},
    )


def test_a_managing_seat_refusal_names_the_workspace_asked_for(bob, ws_a):
    refused = refusal(lambda: access_managing_seat(bob, ws_a.slug))
    assert ws_a.slug in refused[1] or ws_a.slug in str(refused[2])
