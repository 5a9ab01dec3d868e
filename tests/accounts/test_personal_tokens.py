"""The personal access tokens page: create (shown once, hashed at rest), list, revoke; members
see and revoke their own tokens, owners and admins everyone's."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from accounts.connections import connection_revoke
from accounts.models import AgentConnection, PersonalAccessToken, Seat
from accounts.tokens import pat_create, pat_resolve

pytestmark = pytest.mark.django_db


def _seat(user, workspace) -> Seat:
    return Seat.objects.select_related("workspace", "user").get(user=user, workspace=workspace)


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _create(client: Client, workspace, **data) -> tuple[int, str]:
    answer = client.post(reverse("token_create", kwargs={"slug": workspace.slug}), data)
    return answer.status_code, answer.content.decode()


def _secret_in(page: str) -> str:
    start = page.index(PersonalAccessToken.PREFIX)
    return page[start : start + len(PersonalAccessToken.PREFIX) + 48]


def test_it_shows_the_secret_once_and_keeps_only_its_hash(alice, ws_a):
    client = _signed_in(alice)
    status, page = _create(client, ws_a, name="CI on main", expires_in="30")
    assert status == 200
    secret = _secret_in(page)
    row = PersonalAccessToken.objects.values().get()
    assert row["token_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert not any(secret in str(value) for value in row.values())
    assert secret not in str(list(AgentConnection.objects.values()))
    listing = client.get(reverse("workspace_tokens", kwargs={"slug": ws_a.slug})).content.decode()
    assert "CI on main" in listing and secret not in listing and PersonalAccessToken.PREFIX not in listing


def test_it_creates_the_token_with_its_own_connection_and_expiry(alice, ws_a):
    _create(_signed_in(alice), ws_a, name="Laptop", expires_in="7")
    token = PersonalAccessToken.objects.select_related("connection").get()
    assert (token.workspace, token.user, token.name) == (ws_a, alice, "Laptop")
    connection = token.connection
    assert (connection.workspace, connection.user, connection.application) == (ws_a, alice, None)
    assert token.expires_at == token.created_at + timedelta(days=7)


def test_a_token_decides_the_inbox_only_when_made_to(alice, ws_a):
    client = _signed_in(alice)
    _create(client, ws_a, name="Agent", expires_in="7")
    _create(client, ws_a, name="Me", expires_in="7", can_decide="on")
    made = dict(PersonalAccessToken.objects.values_list("name", "can_decide"))
    assert made == {"Agent": False, "Me": True}
    listing = client.get(reverse("workspace_tokens", kwargs={"slug": ws_a.slug})).content.decode()
    assert listing.count("decides Inbox") == 1


def test_it_creates_a_token_that_never_expires(alice, ws_a):
    _create(_signed_in(alice), ws_a, name="Forever", expires_in="never")
    assert PersonalAccessToken.objects.get().expires_at is None


def test_it_refuses_a_blank_name(alice, ws_a):
    status, page = _create(_signed_in(alice), ws_a, name="  ", expires_in="30")
    assert status == 400 and "This field is required." in page
    assert not PersonalAccessToken.objects.exists()


def test_a_member_creates_and_revokes_their_own(bob, ws_a):
    client = _signed_in(bob)
    _create(client, ws_a, name="Bob's CI", expires_in="30")
    token = PersonalAccessToken.objects.get()
    assert token.user == bob
    url = reverse("token_revoke", kwargs={"slug": ws_a.slug, "token_id": token.pk})
    assert client.post(url).status_code == 302
    token.refresh_from_db()
    token.connection.refresh_from_db()
    assert token.revoked_at is not None and token.connection.revoked_at is not None


def test_a_member_neither_sees_nor_revokes_another_members_token(alice, bob, ws_a):
    token = pat_create(seat=_seat(alice, ws_a), name="Alice's CI", expires_in_days=None).token
    client = _signed_in(bob)
    listing = client.get(reverse("workspace_tokens", kwargs={"slug": ws_a.slug})).content.decode()
    assert "Alice&#x27;s CI" not in listing and "Alice's CI" not in listing
    url = reverse("token_revoke", kwargs={"slug": ws_a.slug, "token_id": token.pk})
    missing = reverse("token_revoke", kwargs={"slug": ws_a.slug, "token_id": 987654321})
    got, expected = client.post(url), client.post(missing)
    assert got.status_code == expected.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.mark.parametrize("role", [Seat.OWNER, Seat.ADMIN])
def test_owners_and_admins_see_and_revoke_every_token(role, alice, bob, ws_a):
    token = pat_create(seat=_seat(bob, ws_a), name="Bob's CI", expires_in_days=None).token
    if role == Seat.ADMIN:
        Seat.objects.filter(user=alice, workspace=ws_a).update(role=Seat.ADMIN)
        Seat.objects.filter(user=bob, workspace=ws_a).update(role=Seat.OWNER)
    client = _signed_in(alice)
    listing = client.get(reverse("workspace_tokens", kwargs={"slug": ws_a.slug})).content.decode()
    assert "bob@example.com" in listing
    url = reverse("token_revoke", kwargs={"slug": ws_a.slug, "token_id": token.pk})
    assert client.post(url).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_the_list_shows_state_and_last_use(alice, ws_a):
    live = pat_create(seat=_seat(alice, ws_a), name="Live one", expires_in_days=None)
    gone = pat_create(seat=_seat(alice, ws_a), name="Gone one", expires_in_days=None)
    connection_revoke(connection=gone.token.connection)
    assert pat_resolve(live.secret) is not None
    page = _signed_in(alice).get(reverse("workspace_tokens", kwargs={"slug": ws_a.slug})).content.decode()
    assert page.count(">active<") == 1 and page.count(">revoked ") == 1
    # One revoke button: the revoked token has none.
    assert page.count("Revoke the token") == 1 and "Revoke the token Live one" in page


def test_a_connection_revoked_on_the_agents_page_ends_its_token(alice, ws_a):
    created = pat_create(seat=_seat(alice, ws_a), name="CI", expires_in_days=None)
    client = _signed_in(alice)
    assert "Token: CI" in client.get(reverse("connections")).content.decode()
    url = reverse("connection_revoke", kwargs={"connection_id": created.token.connection_id})
    assert client.post(url).status_code == 302
    created.token.refresh_from_db()
    assert created.token.revoked_at is not None
    assert pat_resolve(created.secret) is None


def test_it_resolves_only_the_exact_secret(alice, ws_a):
    created = pat_create(seat=_seat(alice, ws_a), name="CI", expires_in_days=None)
    assert pat_resolve(created.secret) is not None
    assert pat_resolve(created.secret[:-1] + ("0" if created.secret[-1] != "0" else "1")) is None
    assert pat_resolve(created.token.token_hash) is None


def test_it_refuses_a_revoked_token_whose_connection_is_live(alice, ws_a):
    """An operator revoking the token row alone (the admin) ends it too."""
    created = pat_create(seat=_seat(alice, ws_a), name="CI", expires_in_days=None)
    PersonalAccessToken.objects.update(revoked_at=created.token.created_at)
    assert pat_resolve(created.secret) is None


def test_it_refuses_a_token_whose_person_lost_the_seat(bob, ws_a):
    created = pat_create(seat=_seat(bob, ws_a), name="CI", expires_in_days=None)
    Seat.objects.filter(user=bob).delete()
    assert pat_resolve(created.secret) is None


def test_the_admin_lists_tokens_without_their_hash(admin_client, alice, ws_a):
    created = pat_create(seat=_seat(alice, ws_a), name="CI", expires_in_days=None)
    listing = admin_client.get(reverse("admin:accounts_personalaccesstoken_changelist"))
    change = admin_client.get(reverse("admin:accounts_personalaccesstoken_change", args=[created.token.pk]))
    assert listing.status_code == change.status_code == 200
    for page in (listing.content.decode(), change.content.decode()):
        assert created.token.token_hash not in page and created.secret not in page
