"""The pure role and price rules the members and plan pages ask (accounts.roles, accounts.plans)."""

from __future__ import annotations

import pytest

from accounts import roles
from accounts.plans import PlanPrice, plan_price

OWNER, ADMIN, MEMBER = roles.OWNER, roles.ADMIN, roles.MEMBER


@pytest.mark.parametrize(
    ("by", "target", "new", "allowed"),
    [
        (OWNER, OWNER, MEMBER, True),
        (OWNER, MEMBER, OWNER, True),
        (ADMIN, MEMBER, ADMIN, True),
        (ADMIN, ADMIN, MEMBER, True),
        (ADMIN, MEMBER, None, True),
        (ADMIN, OWNER, MEMBER, False),
        (ADMIN, OWNER, None, False),
        (ADMIN, MEMBER, OWNER, False),
        (MEMBER, MEMBER, None, False),
        (MEMBER, MEMBER, ADMIN, False),
    ],
)
def test_it_lets_owners_manage_everyone_and_admins_everyone_but_owners(by, target, new, allowed):
    assert roles.may_change(by, target, new) is allowed


def test_it_offers_each_manager_only_the_roles_they_may_give():
    assert [value for value, _ in roles.assignable_roles(OWNER)] == [OWNER, ADMIN, MEMBER]
    assert [value for value, _ in roles.assignable_roles(ADMIN)] == [ADMIN, MEMBER]
    assert roles.assignable_roles(MEMBER) == []


def test_it_names_the_last_owner_only():
    assert roles.is_last_owner(OWNER, 1)
    assert not roles.is_last_owner(OWNER, 2)
    assert not roles.is_last_owner(ADMIN, 1)


def test_it_bills_seats_by_the_period():
    assert plan_price(month_cents=700, year_cents=6000, yearly=False, seats=3) == PlanPrice(
        per_seat_month=7.0, per_seat_year=60.0, yearly=False, total=21.0
    )
    assert plan_price(month_cents=700, year_cents=6000, yearly=True, seats=3).total == 180.0
    assert plan_price(month_cents=0, year_cents=0, yearly=False, seats=5).total == 0.0


def _members_page(client, user, workspace) -> str:
    client.force_login(user)
    return client.get(f"/w/{workspace.slug}/members/").content.decode()


@pytest.mark.django_db
def test_the_members_page_offers_each_viewer_only_the_changes_they_may_make(client, alice, bob, ws_a):
    from accounts.models import Seat, User

    dan = User.objects.create_user(email="dan@example.com", password="x")
    Seat.objects.create(workspace=ws_a, user=dan, role=Seat.ADMIN)
    alice_seat, bob_seat = Seat.objects.get(user=alice), Seat.objects.get(user=bob)

    as_owner = _members_page(client, alice, ws_a)
    assert "Last owner" in as_owner
    assert f'id="role-{bob_seat.pk}"' in as_owner and f'id="role-{alice_seat.pk}"' not in as_owner
    assert 'aria-label="Remove bob@example.com"' in as_owner
    assert '<option value="owner"' in as_owner

    as_admin = _members_page(client, dan, ws_a)
    assert f'id="role-{bob_seat.pk}"' in as_admin and f'id="role-{alice_seat.pk}"' not in as_admin
    assert 'aria-label="Remove bob@example.com"' in as_admin
    assert 'aria-label="Remove alice@example.com"' not in as_admin
    assert '<option value="owner"' not in as_admin
    assert "Leave workspace" in as_admin and "Last owner" not in as_admin

    as_member = _members_page(client, bob, ws_a)
    assert 'id="role-' not in as_member and "Remove " not in as_member
