"""Accounts' writes stamp, and judge expiry by, the database clock (boards.clock), as boards does.

The database clock is pinned here to an instant far from this process's clock, so a time read
from the wrong clock shows.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from oauth2_provider.models import Application, RefreshToken

from accounts.connections import connection_authorize, connection_revoke
from accounts.models import Invitation, Seat, Usage, User, Workspace
from accounts.services import (
    invitation_accept,
    invitation_check,
    invitation_create,
    invitation_revoke,
    usage_consume,
    usage_for,
    workspace_create,
)
from boards import clock
from tests.accounts.helpers import refusal

DB_NOW = datetime(2031, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)


@pytest.fixture
def db_clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    """The database clock reads the last instant of the returned list (append to move it)."""
    now = [DB_NOW]
    monkeypatch.setattr(clock, "db_now", lambda: now[-1])
    return now


@pytest.fixture
def dan(db) -> User:
    return User.objects.create_user(email="dan@example.com", password="x")


@pytest.fixture
def app(db) -> Application:
    return Application.objects.create(
        name="Claude Code",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )


def test_a_new_workspace_and_its_owners_seat_are_stamped_by_the_database_clock(carol, db_clock):
    workspace = workspace_create(owner=carol, name="Gamma")
    stored = Workspace.objects.get(pk=workspace.pk)
    assert (stored.created_at, Seat.objects.get(workspace=workspace).created_at) == (DB_NOW, DB_NOW)


def test_an_invitation_is_stamped_and_expires_by_the_database_clock(alice, ws_a, db_clock):
    first = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    db_clock.append(DB_NOW + timedelta(minutes=5))
    second = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    first.refresh_from_db()
    assert (first.created_at, first.expires_at, first.revoked_at) == (
        DB_NOW,
        DB_NOW + timedelta(days=7),
        DB_NOW + timedelta(minutes=5),
    )
    db_clock.append(DB_NOW + timedelta(minutes=9))
    invitation_revoke(invitation=second)
    assert Invitation.objects.get(pk=second.pk).revoked_at == DB_NOW + timedelta(minutes=9)


def test_an_acceptance_and_its_seat_are_stamped_by_the_database_clock(alice, ws_a, dan, db_clock):
    invitation = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    db_clock.append(DB_NOW + timedelta(hours=1))
    seat = invitation_accept(token=invitation.token, user=dan)
    invitation.refresh_from_db()
    assert (invitation.accepted_at, Seat.objects.get(pk=seat.pk).created_at) == (
        DB_NOW + timedelta(hours=1),
        DB_NOW + timedelta(hours=1),
    )


EXPIRED = (
    "conflict",
    "This invitation has expired. Ask the workspace owner to send a new one.",
    {"reason": "expired"},
    ["Wait: the workspace owner sends a new invitation"],
)


def test_an_invitation_is_judged_expired_by_the_database_clock(alice, ws_a, dan, db_clock):
    invitation = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    db_clock.append(DB_NOW + timedelta(days=7) - timedelta(microseconds=1))
    assert invitation_check(token=invitation.token, user=dan) == invitation
    db_clock.append(DB_NOW + timedelta(days=7))
    assert refusal(lambda: invitation_check(token=invitation.token, user=None)) == EXPIRED
    assert refusal(lambda: invitation_accept(token=invitation.token, user=dan)) == EXPIRED
    assert not Seat.objects.filter(user=dan).exists()


def test_a_connection_is_stamped_and_ended_by_the_database_clock(alice, ws_a, app, db_clock):
    connection = connection_authorize(user=alice, application=app, workspace=ws_a)
    RefreshToken.objects.create(user=alice, application=app, token="refresh-1")
    db_clock.append(DB_NOW + timedelta(minutes=3))
    connection_revoke(connection=connection)
    connection.refresh_from_db()
    assert (connection.created_at, connection.revoked_at) == (DB_NOW, DB_NOW + timedelta(minutes=3))
    assert list(RefreshToken.objects.values_list("revoked", flat=True)) == [DB_NOW + timedelta(minutes=3)]


def test_a_connection_replaced_by_a_consent_elsewhere_ends_by_the_database_clock(alice, ws_a, app, db_clock):
    old = connection_authorize(user=alice, application=app, workspace=ws_a)
    ws_c = workspace_create(owner=alice, name="Gamma")
    db_clock.append(DB_NOW + timedelta(minutes=4))
    new = connection_authorize(user=alice, application=app, workspace=ws_c)
    old.refresh_from_db()
    assert (old.revoked_at, new.created_at) == (DB_NOW + timedelta(minutes=4), DB_NOW + timedelta(minutes=4))


def test_this_months_usage_is_the_database_clocks_month(alice, ws_a, db_clock, client: Client):
    usage_consume(workspace=ws_a, kind=Usage.TASKS, now=DB_NOW)
    assert usage_for(workspace=ws_a) == {
        Usage.TASKS: {"used": 1, "limit": 50},
        Usage.AGENT_CALLS: {"used": 0, "limit": 200},
    }
    client.force_login(alice)
    page = client.get(f"/w/{ws_a.slug}/plan/").content.decode()
    assert "<span>1 of 50</span>" in page
    assert "Counters reset on 1 April 2031 (UTC)." in page
