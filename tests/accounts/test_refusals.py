"""Every refusal of accounts' services, whole: the WeftError code, the sentence a person reads, the
rule in `details.reason`, and the condition under which the same act would work."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Invitation, Seat, User, Workspace
from accounts.services import (
    invitation_accept,
    invitation_check,
    invitation_create,
    invitation_revoke,
    seat_remove,
    seat_set_role,
)
from tests.accounts.helpers import Refusal, refusal

NEW_ONE = ["Wait: the workspace owner sends a new invitation"]
INVALID_LINK: Refusal = (
    "not_found",
    "This invitation link is not valid. Ask for a new invitation.",
    {"reason": "invalid"},
    ["Wait: someone in the workspace sends you a new invitation"],
)


@pytest.fixture
def dan(db) -> User:
    return User.objects.create_user(email="dan@example.com", password="x")


@pytest.fixture
def invitation(alice, ws_a) -> Invitation:
    return invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")


def _as(user: User, ws: Workspace, role: str) -> Seat:
    seat = Seat.objects.get(user=user, workspace=ws)
    seat.role = role
    seat.save()
    return seat


INVITING: dict[str, tuple[Callable[[User, User, Workspace], object], Refusal]] = {
    "an unknown role": (
        lambda alice, bob, ws: invitation_create(
            workspace=ws, invited_by=alice, email="x@example.com", role="boss"
        ),
        (
            "invalid_argument",
            "role: 'boss' is not one of owner, admin, member",
            {"field": "role", "reason": "'boss' is not one of owner, admin, member"},
            ["Wait: the role is one of owner, admin, member"],
        ),
    ),
    "a member inviting": (
        lambda alice, bob, ws: invitation_create(
            workspace=ws, invited_by=bob, email="x@example.com", by=_as(bob, ws, Seat.MEMBER)
        ),
        (
            "forbidden",
            "Only owners and admins can invite people.",
            {"reason": "not_a_manager"},
            ["Wait: an owner or admin of Acme sends the invitation"],
        ),
    ),
    "an admin inviting an owner": (
        lambda alice, bob, ws: invitation_create(
            workspace=ws, invited_by=bob, email="x@example.com", role=Seat.OWNER, by=_as(bob, ws, Seat.ADMIN)
        ),
        (
            "forbidden",
            "Only an owner can invite another owner.",
            {"reason": "owner_only"},
            ["Wait: an owner of Acme sends the invitation"],
        ),
    ),
    "a member's address": (
        lambda alice, bob, ws: invitation_create(workspace=ws, invited_by=alice, email=" Bob@Example.com "),
        (
            "conflict",
            "bob@example.com is already a member of Acme.",
            {"reason": "already_member"},
            ["Wait: bob@example.com no longer holds a seat in Acme"],
        ),
    ),
}


@pytest.mark.parametrize("scenario", sorted(INVITING))
def test_it_refuses_an_invitation(scenario: str, alice, bob, ws_a):
    call, expected = INVITING[scenario]
    assert refusal(lambda: call(alice, bob, ws_a)) == expected
    assert not Invitation.objects.exists()


def test_it_lets_an_admin_invite_an_admin_and_an_owner_invite_an_owner(alice, bob, ws_a):
    by_admin = invitation_create(
        workspace=ws_a, invited_by=bob, email="x@example.com", role=Seat.ADMIN, by=_as(bob, ws_a, Seat.ADMIN)
    )
    by_owner = invitation_create(
        workspace=ws_a,
        invited_by=alice,
        email="y@example.com",
        role=Seat.OWNER,
        by=Seat.objects.get(user=alice, workspace=ws_a),
    )
    assert (by_admin.role, by_owner.role) == (Seat.ADMIN, Seat.OWNER)


def _withdrawn(invitation: Invitation) -> None:
    invitation_revoke(invitation=invitation)


def _used(invitation: Invitation) -> None:
    invitation.accepted_at = timezone.now()
    invitation.save()


def _expired(invitation: Invitation) -> None:
    invitation.expires_at = timezone.now() - timedelta(seconds=1)
    invitation.save()


UNUSABLE: dict[str, tuple[Callable[[Invitation], None], Refusal]] = {
    "withdrawn": (
        _withdrawn,
        (
            "conflict",
            "This invitation was withdrawn. Ask the workspace owner for a new one.",
            {"reason": "revoked"},
            NEW_ONE,
        ),
    ),
    "used": (_used, ("conflict", "This invitation has already been used.", {"reason": "used"}, NEW_ONE)),
    "expired": (
        _expired,
        (
            "conflict",
            "This invitation has expired. Ask the workspace owner to send a new one.",
            {"reason": "expired"},
            NEW_ONE,
        ),
    ),
}


@pytest.mark.parametrize("scenario", sorted(UNUSABLE))
def test_it_refuses_an_unusable_invitation_alike_when_checked_and_when_accepted(
    scenario: str, dan, ws_a, invitation
):
    spoil, expected = UNUSABLE[scenario]
    spoil(invitation)
    assert refusal(lambda: invitation_check(token=invitation.token, user=None)) == expected
    assert refusal(lambda: invitation_check(token=invitation.token, user=dan)) == expected
    assert refusal(lambda: invitation_accept(token=invitation.token, user=dan)) == expected
    assert not Seat.objects.filter(user=dan).exists()


def test_it_refuses_a_link_that_names_no_invitation(dan, invitation):
    assert refusal(lambda: invitation_check(token="not-a-token", user=dan)) == INVALID_LINK
    assert refusal(lambda: invitation_accept(token="not-a-token", user=dan)) == INVALID_LINK


def test_it_refuses_the_invitation_to_another_address(carol, invitation):
    expected: Refusal = (
        "forbidden",
        "This invitation is for dan@example.com, but you are signed in as carol@example.com. "
        "Sign out and sign in with the invited address.",
        {"reason": "wrong_account"},
        ["Wait: you are signed in as dan@example.com"],
    )
    assert refusal(lambda: invitation_check(token=invitation.token, user=carol)) == expected
    assert refusal(lambda: invitation_accept(token=invitation.token, user=carol)) == expected
    assert invitation_check(token=invitation.token, user=None) == invitation


def test_it_accepts_for_the_invited_address_in_any_letter_case(invitation, ws_a):
    dan = User.objects.create_user(email="Dan@Example.com", password="x")
    dan.email = "Dan@Example.com"  # the address as a sign-in may carry it: letter case is no difference
    assert invitation_accept(token=invitation.token, user=dan).workspace_id == ws_a.pk


NOT_A_MANAGER: Refusal = (
    "forbidden",
    "Only owners and admins can change members.",
    {"reason": "not_a_manager"},
    ["Wait: an owner or admin of the workspace makes the change"],
)
OWNER_ONLY: Refusal = (
    "forbidden",
    "Only an owner can change an owner or make someone an owner.",
    {"reason": "owner_only"},
    ["Wait: an owner of the workspace makes the change"],
)


def _last_owner(message: str) -> Refusal:
    return (
        "conflict",
        message,
        {"reason": "last_owner"},
        ["Wait: someone else is made an owner of the workspace"],
    )


SEAT_CHANGES: dict[str, tuple[str, Callable[[Seat, Seat], object], Refusal]] = {
    "a member removing the owner": (
        Seat.MEMBER,
        lambda owner, other: seat_remove(seat=owner, by=other),
        NOT_A_MANAGER,
    ),
    "a member changing a role": (
        Seat.MEMBER,
        lambda owner, other: seat_set_role(seat=other, role=Seat.ADMIN, by=other),
        NOT_A_MANAGER,
    ),
    "an admin removing the owner": (
        Seat.ADMIN,
        lambda owner, other: seat_remove(seat=owner, by=other),
        OWNER_ONLY,
    ),
    "an admin demoting the owner": (
        Seat.ADMIN,
        lambda owner, other: seat_set_role(seat=owner, role=Seat.MEMBER, by=other),
        OWNER_ONLY,
    ),
    "an admin making an owner": (
        Seat.ADMIN,
        lambda owner, other: seat_set_role(seat=other, role=Seat.OWNER, by=other),
        OWNER_ONLY,
    ),
    "the last owner leaving": (
        Seat.ADMIN,
        lambda owner, other: seat_remove(seat=owner, by=owner),
        _last_owner("The last owner cannot leave or be removed. Make someone else an owner first."),
    ),
    "the last owner stepping down": (
        Seat.ADMIN,
        lambda owner, other: seat_set_role(seat=owner, role=Seat.ADMIN, by=owner),
        _last_owner("The last owner cannot step down. Make someone else an owner first."),
    ),
    "an unknown role": (
        Seat.ADMIN,
        lambda owner, other: seat_set_role(seat=other, role="boss", by=owner),
        (
            "invalid_argument",
            "role: 'boss' is not one of owner, admin, member",
            {"field": "role", "reason": "'boss' is not one of owner, admin, member"},
            ["Wait: the role is one of owner, admin, member"],
        ),
    ),
}


@pytest.mark.parametrize("scenario", sorted(SEAT_CHANGES))
def test_it_refuses_a_seat_change(scenario: str, alice, bob, ws_a, ws_b):
    """ws_b's owner is there to show only ws_a's owners count."""
    role, call, expected = SEAT_CHANGES[scenario]
    owner, other = Seat.objects.get(user=alice), _as(bob, ws_a, role)
    before = list(Seat.objects.order_by("pk").values_list("pk", "role"))
    assert refusal(lambda: call(owner, other)) == expected
    assert list(Seat.objects.order_by("pk").values_list("pk", "role")) == before


def test_it_lets_an_admin_manage_admins_and_members(alice, bob, carol, ws_a):
    admin = _as(bob, ws_a, Seat.ADMIN)
    member = Seat.objects.create(workspace=ws_a, user=carol, role=Seat.MEMBER)
    assert seat_set_role(seat=member, role=Seat.ADMIN, by=admin).role == Seat.ADMIN
    assert seat_remove(seat=member, by=admin) is True
    assert list(Seat.objects.filter(workspace=ws_a).order_by("pk").values_list("role", flat=True)) == [
        Seat.OWNER,
        Seat.ADMIN,
    ]


def test_it_lets_a_second_owner_make_the_first_step_down(alice, bob, ws_a):
    owner = Seat.objects.get(user=alice)
    second = _as(bob, ws_a, Seat.OWNER)
    seat_set_role(seat=owner, role=Seat.MEMBER, by=second)
    assert Seat.objects.get(user=alice).role == Seat.MEMBER
