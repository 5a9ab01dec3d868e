"""Members: roles, removal, leaving; the last owner always stays."""

from __future__ import annotations

from typing import Any

from django.test import Client

from accounts.models import Seat
from accounts.services import seat_remove, seat_set_role
from tests.accounts.helpers import Refusal, refusal


def _seat(user) -> Seat:
    return Seat.objects.get(user=user)


def _last_owner(message: str) -> Refusal:
    return (
        "conflict",
        message,
        {"reason": "last_owner"},
        ["Wait: someone else is made an owner of the workspace"],
    )


OWNER_ONLY = (
    "forbidden",
    "Only an owner can change an owner or make someone an owner.",
    {"reason": "owner_only"},
    ["Wait: an owner of the workspace makes the change"],
)


def test_it_refuses_to_remove_the_last_owner(alice, ws_a):
    assert refusal(lambda: seat_remove(seat=_seat(alice))) == _last_owner(
        "The last owner cannot leave or be removed. Make someone else an owner first."
    )
    assert Seat.objects.filter(user=alice).exists()


def test_it_refuses_to_let_the_last_owner_step_down(alice, ws_a):
    assert refusal(lambda: seat_set_role(seat=_seat(alice), role=Seat.MEMBER)) == _last_owner(
        "The last owner cannot step down. Make someone else an owner first."
    )
    assert _seat(alice).role == Seat.OWNER


def test_it_lets_an_owner_leave_once_there_is_another(alice, bob, ws_a):
    seat_set_role(seat=_seat(bob), role=Seat.OWNER, by=_seat(alice))
    seat_remove(seat=_seat(alice), by=_seat(alice))
    assert list(ws_a.seats.values_list("user__email", "role")) == [("bob@example.com", Seat.OWNER)]


def test_it_keeps_admins_off_owners(alice, bob, ws_a):
    bob_seat = _seat(bob)
    seat_set_role(seat=bob_seat, role=Seat.ADMIN)
    assert refusal(lambda: seat_remove(seat=_seat(alice), by=bob_seat)) == OWNER_ONLY
    assert refusal(lambda: seat_set_role(seat=bob_seat, role=Seat.OWNER, by=bob_seat)) == OWNER_ONLY
    assert (_seat(alice).role, _seat(bob).role) == (Seat.OWNER, Seat.ADMIN)


def _shown(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_it_shows_the_last_owner_rule_on_the_page(client: Client, alice, ws_a):
    client.force_login(alice)
    leave = "The last owner cannot leave or be removed. Make someone else an owner first."
    response = client.post(f"/w/{ws_a.slug}/leave/", follow=True)
    assert _shown(response) == [leave]
    assert leave in response.content.decode()
    response = client.post(f"/w/{ws_a.slug}/members/{_seat(alice).pk}/role/", {"role": "member"}, follow=True)
    assert _shown(response) == ["The last owner cannot step down. Make someone else an owner first."]
    response = client.post(f"/w/{ws_a.slug}/members/{_seat(alice).pk}/remove/", follow=True)
    assert _shown(response) == [leave]
    assert _seat(alice).role == Seat.OWNER


def test_it_lets_an_owner_change_a_role_and_remove_a_member(client: Client, alice, bob, ws_a):
    client.force_login(alice)
    client.post(f"/w/{ws_a.slug}/members/{_seat(bob).pk}/role/", {"role": "admin"})
    assert _seat(bob).role == Seat.ADMIN
    client.post(f"/w/{ws_a.slug}/members/{_seat(bob).pk}/remove/")
    assert not Seat.objects.filter(user=bob).exists()


def test_it_lets_a_member_leave(client: Client, bob, ws_a):
    client.force_login(bob)
    response = client.post(f"/w/{ws_a.slug}/leave/")
    assert response.headers["Location"] == "/"
    assert not Seat.objects.filter(user=bob).exists()


def test_it_hides_member_changes_from_members(client: Client, alice, bob, ws_a):
    client.force_login(bob)
    assert client.post(f"/w/{ws_a.slug}/members/{_seat(alice).pk}/remove/").status_code == 404
    assert (
        client.post(f"/w/{ws_a.slug}/members/{_seat(alice).pk}/role/", {"role": "member"}).status_code == 404
    )
    assert _seat(alice).role == Seat.OWNER


def test_it_shows_plan_and_usage(client: Client, alice, ws_a):
    from accounts.models import Usage
    from accounts.services import usage_consume

    for _ in range(3):
        usage_consume(workspace=ws_a, kind=Usage.TASKS)
    client.force_login(alice)
    page = client.get(f"/w/{ws_a.slug}/plan/").content.decode()
    assert "Free plan" in page or "free" in page.lower()
    assert "3 of 50" in page
    assert "0 of 200" in page
    assert "Counters reset on" in page
