"""Invitations that cannot be used each say why and create nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from allauth.account.models import EmailAddress
from django.test import Client
from django.utils import timezone

from accounts.models import Invitation, Seat, User
from accounts.services import invitation_accept, invitation_create, invitation_revoke
from tests.accounts.helpers import refusal

PASSWORD = "correct horse battery staple"


@pytest.fixture
def dan(db) -> User:
    user = User.objects.create_user(email="dan@example.com", password=PASSWORD)
    EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
    return user


@pytest.fixture
def invitation(alice, ws_a) -> Invitation:
    return invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")


def _seats_and_invitations() -> tuple[int, list[tuple[object, ...]]]:
    return Seat.objects.count(), list(Invitation.objects.values_list("pk", "accepted_at", "revoked_at"))


def _refused(client: Client, invitation: Invitation, status: int, text: str) -> None:
    before = _seats_and_invitations()
    url = f"/invite/{invitation.token}/"
    for response in (client.get(url), client.post(url)):
        assert response.status_code == status
        assert text in response.content.decode()
    assert _seats_and_invitations() == before


def test_it_accepts_for_the_invited_address(client: Client, dan, invitation, ws_a):
    client.force_login(dan)
    assert b"Accept and join" in client.get(f"/invite/{invitation.token}/").content
    response = client.post(f"/invite/{invitation.token}/")
    assert response.status_code == 302
    assert Seat.objects.filter(workspace=ws_a, user=dan, role=Seat.MEMBER).exists()


def test_it_refuses_an_expired_invitation(client: Client, dan, invitation, moving_clock):
    client.force_login(dan)
    with time_machine.travel(timezone.now() + timedelta(days=7, minutes=1)):
        _refused(client, invitation, 410, "This invitation has expired")


def test_it_accepts_just_before_expiry(client: Client, dan, invitation, ws_a, moving_clock):
    client.force_login(dan)
    with time_machine.travel(timezone.now() + timedelta(days=6, hours=23)):
        client.post(f"/invite/{invitation.token}/")
    assert Seat.objects.filter(workspace=ws_a, user=dan).exists()


def test_it_refuses_a_revoked_invitation(client: Client, dan, invitation):
    invitation_revoke(invitation=invitation)
    client.force_login(dan)
    _refused(client, invitation, 410, "This invitation was withdrawn")


def test_it_refuses_a_reused_invitation(client: Client, dan, invitation, ws_a):
    client.force_login(dan)
    client.post(f"/invite/{invitation.token}/")
    Seat.objects.filter(workspace=ws_a, user=dan).delete()  # removed since; the link must not bring dan back
    _refused(client, invitation, 410, "This invitation was already used")


def test_it_refuses_the_wrong_account(client: Client, carol, invitation):
    client.force_login(carol)
    _refused(
        client, invitation, 403, "This invitation is for dan@example.com, but you are signed in as carol"
    )


def test_it_refuses_a_made_up_token(client: Client, dan, invitation):
    client.force_login(dan)
    response = client.get("/invite/not-a-token/")
    assert response.status_code == 404
    assert "This invitation link is not valid" in response.content.decode()


def test_it_shows_the_problem_to_a_signed_out_visitor(client: Client, invitation):
    invitation_revoke(invitation=invitation)
    response = client.get(f"/invite/{invitation.token}/")
    assert response.status_code == 410
    assert "withdrawn" in response.content.decode()


def test_it_replaces_a_pending_invitation_for_the_same_address(alice, ws_a, invitation):
    newer = invitation_create(workspace=ws_a, invited_by=alice, email="DAN@example.com")
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None
    assert newer.is_pending


def test_it_refuses_to_invite_a_member(alice, bob, ws_a):
    assert refusal(lambda: invitation_create(workspace=ws_a, invited_by=alice, email="BOB@example.com")) == (
        "conflict",
        "bob@example.com is already a member of Acme.",
        {"reason": "already_member"},
        ["Wait: bob@example.com no longer holds a seat in Acme"],
    )
    assert not Invitation.objects.exists()


def test_it_lets_only_owners_invite_owners(alice, bob, ws_a):
    bob_seat = Seat.objects.get(user=bob)
    bob_seat.role = Seat.ADMIN
    bob_seat.save()
    assert refusal(
        lambda: invitation_create(
            workspace=ws_a, invited_by=bob, email="x@example.com", role=Seat.OWNER, by=bob_seat
        )
    ) == (
        "forbidden",
        "Only an owner can invite another owner.",
        {"reason": "owner_only"},
        ["Wait: an owner of Acme sends the invitation"],
    )
    invitation_create(workspace=ws_a, invited_by=bob, email="x@example.com", role=Seat.ADMIN, by=bob_seat)


def test_it_accepts_once_in_the_service(dan, invitation):
    invitation_accept(token=invitation.token, user=dan)
    assert refusal(lambda: invitation_accept(token=invitation.token, user=dan)) == (
        "conflict",
        "This invitation has already been used.",
        {"reason": "used"},
        ["Wait: the workspace owner sends a new invitation"],
    )


def test_it_lets_a_manager_invite_and_revoke_on_the_members_page(
    client: Client, alice, ws_a, django_capture_on_commit_callbacks, mailoutbox
):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/w/{ws_a.slug}/members/invite/", {"email": "dan@example.com", "role": "admin"})
    invitation = Invitation.objects.get(email="dan@example.com")
    assert invitation.role == Seat.ADMIN
    assert f"/invite/{invitation.token}/" in mailoutbox[0].body
    client.post(f"/w/{ws_a.slug}/invitations/{invitation.pk}/revoke/")
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None


def test_it_shows_invite_form_errors(client: Client, alice, bob, ws_a):
    client.force_login(alice)
    response = client.post(f"/w/{ws_a.slug}/members/invite/", {"email": "not an email", "role": "member"})
    assert response.status_code == 400
    assert "Enter a valid email address" in response.content.decode()
    response = client.post(f"/w/{ws_a.slug}/members/invite/", {"email": "bob@example.com", "role": "member"})
    assert response.status_code == 400
    assert response.context["invite_form"].errors == {
        "email": ["bob@example.com is already a member of Acme."]
    }
    assert not Invitation.objects.exists()


def test_it_hides_inviting_from_members(client: Client, bob, ws_a):
    client.force_login(bob)
    assert client.post(f"/w/{ws_a.slug}/members/invite/", {"email": "x@example.com"}).status_code == 404
    assert b"Invite someone" not in client.get(f"/w/{ws_a.slug}/members/").content
