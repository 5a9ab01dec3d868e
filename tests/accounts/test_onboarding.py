"""From sign-up to a second member: the whole onboarding path through the Django test client."""

from __future__ import annotations

import re

from django.core import mail
from django.test import Client

from accounts.models import Invitation, Seat, Workspace

PASSWORD = "a long and unusual passphrase 42"
LINK = re.compile(r"https?://[^\s]+")


def _links(message: mail.EmailMessage) -> list[str]:
    return LINK.findall(str(message.body))


def _path(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url)


def _sign_up(client: Client, email: str, next_url: str = "") -> str:
    """Sign up and return the path of the verification link from the email."""
    mail.outbox.clear()
    data = {"email": email, "password1": PASSWORD, "password2": PASSWORD}
    if next_url:
        data["next"] = next_url
    response = client.post("/accounts/signup/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert response["Location"] == "/accounts/confirm-email/"
    [message] = [m for m in mail.outbox if email in m.to]
    [link] = [link for link in _links(message) if "/accounts/confirm-email/" in link]
    return _path(link)


def test_it_walks_signup_to_a_second_member(client: Client, db, django_capture_on_commit_callbacks):
    confirm = _sign_up(client, "dora@example.com")
    # Mandatory verification: no workspace pages before the address is confirmed.
    assert client.get("/workspaces/new/").status_code == 302

    page = client.get(confirm)
    assert b"Confirm my address" in page.content
    response = client.post(confirm)
    assert response.status_code == 302
    # Signed in with no seat: home sends the person to create a workspace.
    assert client.get(response["Location"], follow=True).redirect_chain[-1][0] == "/workspaces/new/"

    response = client.post("/workspaces/new/", {"name": "Dora's team"})
    workspace = Workspace.objects.get(name="Dora's team")
    assert Seat.objects.get(workspace=workspace).role == Seat.OWNER

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/w/{workspace.slug}/members/invite/", {"email": "Eve@Example.com", "role": "member"}
        )
    assert response.status_code == 302
    [invite_mail] = mail.outbox
    assert invite_mail.to == ["eve@example.com"]
    [accept_link] = [link for link in _links(invite_mail) if "/invite/" in link]
    accept = _path(accept_link)
    assert b"eve@example.com" in client.get(f"/w/{workspace.slug}/members/").content

    # Eve has no account: the invitation sends her to sign up, and `next` survives verification.
    eve = Client()
    landing = eve.get(accept)
    assert landing.status_code == 200
    assert f"/accounts/signup/?next={accept}".encode() in landing.content.replace(b"%2F", b"/")
    confirm = _sign_up(eve, "eve@example.com", next_url=accept)
    response = eve.post(confirm)
    assert response.status_code == 302
    assert response["Location"] == accept
    assert b"Accept and join" in eve.get(accept).content
    response = eve.post(accept)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/w/{workspace.slug}")

    seat = Seat.objects.get(workspace=workspace, user__email="eve@example.com")
    assert seat.role == Seat.MEMBER
    assert Invitation.objects.get(email="eve@example.com").accepted_by == seat.user
    members = client.get(f"/w/{workspace.slug}/members/").content.decode()
    assert "eve@example.com" in members
    assert "No pending invitations" in members


def test_it_lets_an_existing_user_accept_after_signing_in(client: Client, alice, ws_a, carol):
    invitation = Invitation.objects.create(
        workspace=ws_a,
        email=carol.email,
        invited_by=alice,
        expires_at=Invitation().created_at + Invitation.TTL,
    )
    accept = f"/invite/{invitation.token}/"
    assert b"Sign in to accept" in client.get(accept).content
    response = client.post(
        "/accounts/login/", {"login": carol.email, "password": "correct horse battery staple", "next": accept}
    )
    assert response["Location"] == accept
    client.post(accept)
    assert Seat.objects.filter(workspace=ws_a, user=carol, role=Seat.MEMBER).exists()


def test_it_sends_a_new_user_without_a_seat_to_create_a_workspace(client: Client, carol):
    client.force_login(carol)
    assert client.get("/").headers["Location"] == "/workspaces/new/"


def test_it_sends_home_to_the_last_workspace_switched_to(client: Client, alice, ws_a):
    other = Workspace.objects.create(name="Other", slug="other", plan=ws_a.plan)
    Seat.objects.create(workspace=other, user=alice, role=Seat.MEMBER)
    client.force_login(alice)
    client.get(f"/w/{ws_a.slug}/switch/")
    assert f"/w/{ws_a.slug}/" in client.get("/").headers["Location"]
    client.get("/w/other/switch/")
    assert "/w/other/" in client.get("/").headers["Location"]
