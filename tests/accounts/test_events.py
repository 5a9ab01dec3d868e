"""Every accounts write that changes a workspace logs one event per changed row, in that workspace;
a write that changes nothing or is refused logs none. Payloads carry ids and changed fields only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from oauth2_provider.models import Application

from accounts.connections import connection_authorize, connection_revoke
from accounts.models import AgentConnection, Invitation, Plan, Seat, User, Workspace
from accounts.services import (
    invitation_accept,
    invitation_create,
    invitation_revoke,
    seat_remove,
    seat_set_role,
    workspace_create,
    workspace_set_plan,
    workspace_set_suspended,
)
from tests.accounts.helpers import refusal
from weft.errors import WeftError
from weft.models import Event

Logged = tuple[int, str, str, str, dict[str, Any]]


def logged(call: Callable[[], object]) -> list[Logged]:
    """The events `call` appended: workspace, type, entity type and id, payload."""
    last = Event.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    call()
    return [
        (e.workspace_id, e.type, e.entity_type, e.entity_id, e.payload)
        for e in Event.objects.filter(pk__gt=last).order_by("pk")
    ]


def refused_without_event(call: Callable[[], object]) -> None:
    def attempt() -> None:
        with pytest.raises(WeftError):
            call()

    assert logged(attempt) == []


def _seat(user: User, workspace: Workspace) -> Seat:
    return Seat.objects.get(user=user, workspace=workspace)


@pytest.fixture
def dan(db) -> User:
    return User.objects.create_user(email="dan@example.com", password="x")


@pytest.fixture
def invitation(alice, ws_a) -> Invitation:
    return invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com", role=Seat.ADMIN)


@pytest.fixture
def app(db) -> Application:
    return Application.objects.create(
        name="Claude Code",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )


def test_creating_a_workspace_logs_the_workspace_and_its_owners_seat(carol):
    events = logged(lambda: workspace_create(owner=carol, name="  Gamma  "))
    workspace = Workspace.objects.get(name="Gamma")
    seat = _seat(carol, workspace)
    assert events == [
        (
            workspace.pk,
            "workspace.created",
            "workspace",
            str(workspace.pk),
            {"workspaceId": workspace.pk, "name": "Gamma", "slug": "gamma", "plan": "free"},
        ),
        (
            workspace.pk,
            "seat.added",
            "seat",
            str(seat.pk),
            {"seatId": seat.pk, "userId": carol.pk, "role": "owner", "invitationId": None},
        ),
    ]


def test_a_workspace_without_a_name_is_refused_and_created_nowhere(carol):
    assert refusal(lambda: workspace_create(owner=carol, name="   ")) == (
        "invalid_argument",
        "name: a workspace needs a name",
        {"field": "name", "reason": "a workspace needs a name"},
        ["Wait: the new workspace is given a name"],
    )
    refused_without_event(lambda: workspace_create(owner=carol, name=""))
    assert not Workspace.objects.filter(seats__user=carol).exists()


def test_a_plan_change_logs_from_and_to_once(ws_a):
    pro = Plan.named(Plan.PRO)
    events = logged(lambda: workspace_set_plan(workspace=ws_a, plan=pro, billing_period="yearly"))
    assert events == [
        (
            ws_a.pk,
            "workspace.plan_changed",
            "workspace",
            str(ws_a.pk),
            {
                "workspaceId": ws_a.pk,
                "from": {"plan": "free", "billingPeriod": "monthly"},
                "to": {"plan": "pro", "billingPeriod": "yearly"},
            },
        )
    ]
    stored = Workspace.objects.select_related("plan").get(pk=ws_a.pk)
    assert (stored.plan.code, stored.billing_period) == ("pro", "yearly")
    assert (ws_a.plan.code, ws_a.billing_period) == ("pro", "yearly")
    assert logged(lambda: workspace_set_plan(workspace=ws_a, plan=pro, billing_period="yearly")) == []
    assert workspace_set_plan(workspace=ws_a, plan=pro, billing_period="yearly") is False


def test_a_billing_period_alone_is_a_plan_change(ws_a):
    free = Plan.named(Plan.FREE)
    [(_, type_, _, _, payload)] = logged(
        lambda: workspace_set_plan(workspace=ws_a, plan=free, billing_period="yearly")
    )
    assert (type_, payload["from"], payload["to"]) == (
        "workspace.plan_changed",
        {"plan": "free", "billingPeriod": "monthly"},
        {"plan": "free", "billingPeriod": "yearly"},
    )


def test_an_unknown_billing_period_is_refused_and_changes_nothing(ws_a):
    pro = Plan.named(Plan.PRO)
    assert refusal(lambda: workspace_set_plan(workspace=ws_a, plan=pro, billing_period="weekly")) == (
        "invalid_argument",
        "billing_period: 'weekly' is not one of monthly, yearly",
        {"field": "billing_period", "reason": "'weekly' is not one of monthly, yearly"},
        ["Wait: the billing period is monthly or yearly"],
    )
    refused_without_event(lambda: workspace_set_plan(workspace=ws_a, plan=pro, billing_period="weekly"))
    assert Workspace.objects.get(pk=ws_a.pk).plan.code == "free"


def test_suspending_and_lifting_log_once_each(ws_a):
    entity = (ws_a.pk, "workspace", str(ws_a.pk), {"workspaceId": ws_a.pk})

    def as_logged(type_: str) -> list[Logged]:
        return [(entity[0], type_, entity[1], entity[2], entity[3])]

    assert logged(lambda: workspace_set_suspended(workspace=ws_a, suspended=True)) == as_logged(
        "workspace.suspended"
    )
    assert Workspace.objects.get(pk=ws_a.pk).is_suspended and ws_a.is_suspended
    assert logged(lambda: workspace_set_suspended(workspace=ws_a, suspended=True)) == []
    assert logged(lambda: workspace_set_suspended(workspace=ws_a, suspended=False)) == as_logged(
        "workspace.suspension_lifted"
    )
    assert not Workspace.objects.get(pk=ws_a.pk).is_suspended
    assert logged(lambda: workspace_set_suspended(workspace=ws_a, suspended=False)) == []


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser(email="ops@example.com", password="x")


def test_the_admins_kill_switch_and_plan_field_log_through_the_services(client: Client, operator, ws_a):
    client.force_login(operator)
    events = logged(
        lambda: client.post(
            "/admin/accounts/workspace/", {"action": "suspend", "_selected_action": [ws_a.pk]}
        )
    )
    assert [(e[1], e[4]) for e in events] == [("workspace.suspended", {"workspaceId": ws_a.pk})]
    pro = Plan.named(Plan.PRO)
    form = {
        "name": ws_a.name,
        "slug": ws_a.slug,
        "plan": pro.pk,
        "billing_period": "monthly",
        "is_suspended": "",
        **{
            f"{prefix}-{field}": "0"
            for prefix in ("seats", "usage", "invitations", "plan_changes")
            for field in ("TOTAL_FORMS", "INITIAL_FORMS")
        },
    }
    seat = _seat(ws_a.seats.get().user, ws_a)
    form.update({"seats-TOTAL_FORMS": "1", "seats-INITIAL_FORMS": "1", "seats-0-id": seat.pk})
    form.update({"seats-0-workspace": ws_a.pk, "seats-0-user": seat.user_id, "seats-0-role": seat.role})
    events = logged(lambda: client.post(f"/admin/accounts/workspace/{ws_a.pk}/change/", form))
    assert [(e[1], e[4]) for e in events] == [
        (
            "workspace.plan_changed",
            {
                "workspaceId": ws_a.pk,
                "from": {"plan": "free", "billingPeriod": "monthly"},
                "to": {"plan": "pro", "billingPeriod": "monthly"},
            },
        ),
        ("workspace.suspension_lifted", {"workspaceId": ws_a.pk}),
    ]
    stored = Workspace.objects.select_related("plan").get(pk=ws_a.pk)
    assert (stored.plan.code, stored.is_suspended) == ("pro", False)


def test_an_invitation_logs_its_role_inviter_and_expiry_never_its_address_or_token(alice, ws_a):
    events = logged(lambda: invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com"))
    invitation = Invitation.objects.get()
    assert events == [
        (
            ws_a.pk,
            "invitation.created",
            "invitation",
            str(invitation.pk),
            {
                "invitationId": invitation.pk,
                "role": "member",
                "invitedByUserId": alice.pk,
                "expiresAt": invitation.expires_at.isoformat(),
            },
        )
    ]


def test_a_new_invitation_for_the_same_address_logs_the_old_ones_revocation_first(alice, ws_a, invitation):
    events = logged(lambda: invitation_create(workspace=ws_a, invited_by=alice, email="Dan@example.com"))
    newer = Invitation.objects.exclude(pk=invitation.pk).get()
    assert [(e[1], e[3], e[4].get("reason")) for e in events] == [
        ("invitation.revoked", str(invitation.pk), "replaced"),
        ("invitation.created", str(newer.pk), None),
    ]
    assert events[0][4] == {"invitationId": invitation.pk, "reason": "replaced"}


def test_an_invitation_for_another_address_replaces_nothing(alice, ws_a, invitation):
    events = logged(lambda: invitation_create(workspace=ws_a, invited_by=alice, email="erin@example.com"))
    assert [e[1] for e in events] == ["invitation.created"]
    invitation.refresh_from_db()
    assert invitation.is_pending


@pytest.mark.parametrize(
    "scenario",
    ["a member's address", "an owner invited by an admin", "an unknown role", "a member inviting"],
)
def test_a_refused_invitation_logs_nothing(scenario: str, alice, bob, ws_a):
    bob_seat = _seat(bob, ws_a)
    bob_seat.role = Seat.ADMIN if scenario == "an owner invited by an admin" else Seat.MEMBER
    bob_seat.save()
    calls = {
        "a member's address": lambda: invitation_create(
            workspace=ws_a, invited_by=alice, email="bob@example.com"
        ),
        "an owner invited by an admin": lambda: invitation_create(
            workspace=ws_a, invited_by=bob, email="x@example.com", role=Seat.OWNER, by=bob_seat
        ),
        "an unknown role": lambda: invitation_create(
            workspace=ws_a, invited_by=alice, email="x@example.com", role="boss"
        ),
        "a member inviting": lambda: invitation_create(
            workspace=ws_a, invited_by=bob, email="x@example.com", by=bob_seat
        ),
    }
    refused_without_event(calls[scenario])
    assert not Invitation.objects.exists()


def test_accepting_logs_the_invitation_and_the_new_seat(dan, ws_a, invitation):
    events = logged(lambda: invitation_accept(token=invitation.token, user=dan))
    seat = _seat(dan, ws_a)
    assert events == [
        (
            ws_a.pk,
            "invitation.accepted",
            "invitation",
            str(invitation.pk),
            {"invitationId": invitation.pk, "userId": dan.pk, "seatId": seat.pk},
        ),
        (
            ws_a.pk,
            "seat.added",
            "seat",
            str(seat.pk),
            {"seatId": seat.pk, "userId": dan.pk, "role": "admin", "invitationId": invitation.pk},
        ),
    ]
    refused_without_event(lambda: invitation_accept(token=invitation.token, user=dan))


def test_accepting_with_a_seat_already_held_logs_the_acceptance_only(dan, ws_a, invitation):
    seat = Seat.objects.create(workspace=ws_a, user=dan, role=Seat.MEMBER)
    events = logged(lambda: invitation_accept(token=invitation.token, user=dan))
    assert [(e[1], e[4]) for e in events] == [
        ("invitation.accepted", {"invitationId": invitation.pk, "userId": dan.pk, "seatId": seat.pk})
    ]
    assert _seat(dan, ws_a).role == Seat.MEMBER


def test_accepting_a_link_that_is_not_an_invitation_logs_nothing(dan, ws_a, invitation):
    refused_without_event(lambda: invitation_accept(token="not-a-token", user=dan))
    refused_without_event(
        lambda: invitation_accept(token=invitation.token, user=User.objects.get(email="alice@example.com"))
    )
    assert not Seat.objects.filter(user=dan).exists()


def test_withdrawing_an_invitation_logs_once(ws_a, invitation):
    assert logged(lambda: invitation_revoke(invitation=invitation)) == [
        (
            ws_a.pk,
            "invitation.revoked",
            "invitation",
            str(invitation.pk),
            {"invitationId": invitation.pk, "reason": "withdrawn"},
        )
    ]
    assert invitation_revoke(invitation=invitation) is False
    assert logged(lambda: invitation_revoke(invitation=invitation)) == []


def test_withdrawing_a_used_invitation_logs_nothing(dan, invitation):
    invitation_accept(token=invitation.token, user=dan)
    assert logged(lambda: invitation_revoke(invitation=invitation)) == []
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


def test_a_role_change_logs_from_and_to_once(alice, bob, ws_a):
    seat = _seat(bob, ws_a)
    assert logged(lambda: seat_set_role(seat=seat, role=Seat.ADMIN, by=_seat(alice, ws_a))) == [
        (
            ws_a.pk,
            "seat.role_changed",
            "seat",
            str(seat.pk),
            {"seatId": seat.pk, "userId": bob.pk, "from": "member", "to": "admin"},
        )
    ]
    assert _seat(bob, ws_a).role == Seat.ADMIN
    assert logged(lambda: seat_set_role(seat=_seat(bob, ws_a), role=Seat.ADMIN)) == []


def test_a_role_change_reads_the_role_the_seat_has_now(alice, bob, ws_a):
    stale = _seat(bob, ws_a)
    Seat.objects.filter(pk=stale.pk).update(role=Seat.ADMIN)
    [(_, _, _, _, payload)] = logged(lambda: seat_set_role(seat=stale, role=Seat.OWNER))
    assert (payload["from"], payload["to"]) == ("admin", "owner")


def test_a_role_change_of_a_seat_removed_meanwhile_is_not_found(bob, ws_a):
    seat = _seat(bob, ws_a)
    Seat.objects.filter(pk=seat.pk).delete()
    assert refusal(lambda: seat_set_role(seat=seat, role=Seat.ADMIN)) == (
        "not_found",
        f"member {seat.pk} does not exist in this workspace",
        {"kind": "member", "id": str(seat.pk)},
        ["Fix: get_board_state {}"],
    )
    refused_without_event(lambda: seat_set_role(seat=seat, role=Seat.ADMIN))


def test_removing_a_seat_logs_once(alice, bob, ws_a):
    seat = _seat(bob, ws_a)
    assert logged(lambda: seat_remove(seat=seat, by=_seat(alice, ws_a))) == [
        (
            ws_a.pk,
            "seat.removed",
            "seat",
            str(seat.pk),
            {"seatId": seat.pk, "userId": bob.pk, "role": "member"},
        )
    ]
    assert not Seat.objects.filter(pk=seat.pk).exists()
    assert seat_remove(seat=seat) is False
    assert logged(lambda: seat_remove(seat=seat)) == []


@pytest.mark.parametrize(
    "scenario",
    [
        "the last owner leaving",
        "the last owner stepping down",
        "an admin removing an owner",
        "a member removing",
    ],
)
def test_a_refused_seat_change_logs_nothing(scenario: str, alice, bob, ws_a):
    owner, other = _seat(alice, ws_a), _seat(bob, ws_a)
    if scenario == "an admin removing an owner":
        seat_set_role(seat=other, role=Seat.ADMIN)
    calls = {
        "the last owner leaving": lambda: seat_remove(seat=owner, by=owner),
        "the last owner stepping down": lambda: seat_set_role(seat=owner, role=Seat.ADMIN),
        "an admin removing an owner": lambda: seat_remove(seat=owner, by=other),
        "a member removing": lambda: seat_remove(seat=owner, by=other),
    }
    before = list(Seat.objects.order_by("pk").values_list("pk", "role"))
    refused_without_event(calls[scenario])
    assert list(Seat.objects.order_by("pk").values_list("pk", "role")) == before


def test_a_rolled_back_seat_change_leaves_no_event(alice, bob, ws_a):
    seat = _seat(bob, ws_a)

    def remove_then_fail() -> None:
        with pytest.raises(RuntimeError), transaction.atomic():
            seat_remove(seat=seat)
            raise RuntimeError("the caller fails after the write")

    assert logged(remove_then_fail) == []
    assert Seat.objects.filter(pk=seat.pk).exists()


def test_a_first_consent_logs_the_new_connection(alice, ws_a, app):
    events = logged(lambda: connection_authorize(user=alice, application=app, workspace=ws_a))
    connection = AgentConnection.objects.get()
    assert events == [
        (
            ws_a.pk,
            "connection.created",
            "connection",
            str(connection.pk),
            {"connectionId": connection.pk, "userId": alice.pk, "name": "Claude Code"},
        )
    ]
    assert logged(lambda: connection_authorize(user=alice, application=app, workspace=ws_a)) == []


def test_a_consent_under_a_new_client_name_logs_the_rename(alice, ws_a, app):
    connection = connection_authorize(user=alice, application=app, workspace=ws_a)
    app.name = "Claude Code 2"
    app.save()
    assert logged(lambda: connection_authorize(user=alice, application=app, workspace=ws_a)) == [
        (
            ws_a.pk,
            "connection.updated",
            "connection",
            str(connection.pk),
            {"connectionId": connection.pk, "fields": ["name"]},
        )
    ]


def test_a_consent_for_another_workspace_logs_the_old_connections_end_in_its_own_workspace(alice, ws_a, app):
    ws_c = workspace_create(owner=alice, name="Gamma")
    old = connection_authorize(user=alice, application=app, workspace=ws_a)
    events = logged(lambda: connection_authorize(user=alice, application=app, workspace=ws_c))
    new = AgentConnection.objects.get(workspace=ws_c)
    assert events == [
        (
            ws_a.pk,
            "connection.revoked",
            "connection",
            str(old.pk),
            {"connectionId": old.pk, "userId": alice.pk, "reason": "replaced"},
        ),
        (
            ws_c.pk,
            "connection.created",
            "connection",
            str(new.pk),
            {"connectionId": new.pk, "userId": alice.pk, "name": "Claude Code"},
        ),
    ]


def test_disconnecting_logs_once(alice, ws_a, app):
    connection = connection_authorize(user=alice, application=app, workspace=ws_a)
    assert logged(lambda: connection_revoke(connection=connection)) == [
        (
            ws_a.pk,
            "connection.revoked",
            "connection",
            str(connection.pk),
            {"connectionId": connection.pk, "userId": alice.pk, "reason": "disconnected"},
        )
    ]
    assert logged(lambda: connection_revoke(connection=connection)) == []


@pytest.mark.django_db(transaction=True)
def test_each_write_logs_inside_its_own_transaction_when_called_outside_one(alice, bob, dan, app):
    """emit() refuses outside a transaction: a write whose event were logged after its commit fails here."""
    workspace = workspace_create(owner=alice, name="Delta")
    Seat.objects.create(workspace=workspace, user=bob, role=Seat.MEMBER)
    invitation = invitation_create(workspace=workspace, invited_by=alice, email="dan@example.com")
    invitation_create(workspace=workspace, invited_by=alice, email="dan@example.com")
    invitation_revoke(invitation=Invitation.objects.get(revoked_at=None))
    invitation = invitation_create(workspace=workspace, invited_by=alice, email="dan@example.com")
    invitation_accept(token=invitation.token, user=dan)
    seat_set_role(seat=_seat(bob, workspace), role=Seat.ADMIN)
    seat_remove(seat=_seat(bob, workspace))
    workspace_set_plan(workspace=workspace, plan=Plan.named(Plan.PRO), billing_period="monthly")
    workspace_set_suspended(workspace=workspace, suspended=True)
    connection = connection_authorize(user=alice, application=app, workspace=workspace)
    app.name = "Renamed"
    app.save()
    connection_authorize(user=alice, application=app, workspace=workspace)
    connection_revoke(connection=connection)
    types = list(Event.objects.filter(workspace=workspace).order_by("id").values_list("type", flat=True))
    assert types == [
        "workspace.created",
        "seat.added",
        "invitation.created",
        "invitation.revoked",
        "invitation.created",
        "invitation.revoked",
        "invitation.created",
        "invitation.accepted",
        "seat.added",
        "seat.role_changed",
        "seat.removed",
        "workspace.plan_changed",
        "workspace.suspended",
        "connection.created",
        "connection.updated",
        "connection.revoked",
    ]
