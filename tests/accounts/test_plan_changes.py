"""An owner changes plan on the plan page: the prorated preview, the change applied at once with
its event, limits that follow at once, the operators' admin, and the Stripe Checkout adapter
against responses in the shape of Stripe's API reference (tests/accounts/stripe/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs

import httpx
import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from accounts import billing
from accounts.models import Plan, PlanChange, Seat, Usage, User, Workspace
from accounts.payments import StripeCheckout
from accounts.services import usage_consume
from weft.errors import WeftError
from weft.models import Event

pytestmark = pytest.mark.django_db

STRIPE = Path(__file__).with_name("stripe")
MID_JUNE = datetime(2026, 6, 16, tzinfo=UTC)  # 15 of June's 30 days left


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _plan_url(ws: Workspace, name: str = "workspace_plan", **kwargs: object) -> str:
    return reverse(name, kwargs={"slug": ws.slug, **kwargs})


# The proration rule, at its edges.


@pytest.mark.parametrize(
    ("period", "now", "start", "end"),
    [
        (
            "monthly",
            datetime(2026, 12, 31, 23, 59, tzinfo=UTC),
            datetime(2026, 12, 1, tzinfo=UTC),
            datetime(2027, 1, 1, tzinfo=UTC),
        ),
        (
            "monthly",
            datetime(2026, 2, 1, tzinfo=UTC),
            datetime(2026, 2, 1, tzinfo=UTC),
            datetime(2026, 3, 1, tzinfo=UTC),
        ),
        (
            "yearly",
            datetime(2026, 7, 2, tzinfo=UTC),
            datetime(2026, 1, 1, tzinfo=UTC),
            datetime(2027, 1, 1, tzinfo=UTC),
        ),
    ],
)
def test_the_billing_period_is_the_calendar_month_or_year(period, now, start, end) -> None:
    assert billing.period_bounds(period, now) == (start, end)


def test_half_a_month_left_charges_half_the_new_bill_and_credits_half_the_old() -> None:
    up = billing.prorate(
        old_bill_cents=0, old_period="monthly", new_bill_cents=1400, new_period="monthly", now=MID_JUNE
    )
    assert (up.credit_cents, up.charge_cents, up.net_cents) == (0, 700, 700)
    down = billing.prorate(
        old_bill_cents=1400, old_period="monthly", new_bill_cents=0, new_period="monthly", now=MID_JUNE
    )
    assert (down.credit_cents, down.charge_cents, down.net_cents) == (700, 0, -700)


def test_at_the_first_instant_the_whole_bill_and_at_the_end_nothing() -> None:
    start = datetime(2026, 6, 1, tzinfo=UTC)
    whole = billing.prorate(
        old_bill_cents=0, old_period="monthly", new_bill_cents=700, new_period="monthly", now=start
    )
    assert whole.charge_cents == 700 and whole.fraction_left == 1.0
    last = billing.prorate(
        old_bill_cents=0,
        old_period="monthly",
        new_bill_cents=700,
        new_period="monthly",
        now=datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC),
    )
    assert last.charge_cents == 0


# The plan page and the change.


@pytest.fixture
def mid_june(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan change reads the database's clock, which time_machine cannot move on PostgreSQL."""
    monkeypatch.setattr("accounts.services.plan_changes.clock", SimpleNamespace(db_now=lambda: MID_JUNE))


@pytest.mark.usefixtures("mid_june")
@time_machine.travel(MID_JUNE, tick=False)
def test_an_owner_previews_then_upgrades_and_the_caps_go_at_once(
    alice: User, bob: User, ws_a: Workspace
) -> None:
    Usage.objects.create(workspace=ws_a, period=datetime(2026, 6, 1).date(), kind=Usage.TASKS, count=50)
    with pytest.raises(WeftError):
        usage_consume(workspace=ws_a, kind=Usage.TASKS)
    owner = _signed_in(alice)
    preview = owner.get(_plan_url(ws_a), {"plan": "pro", "period": "monthly"}).content.decode()
    assert "Due now: <strong data-net>$7.00</strong>" in preview  # 2 seats × $7 × half of June
    answer = owner.post(_plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "monthly"})
    assert answer.status_code == 302
    ws_a.refresh_from_db()
    assert (ws_a.plan.code, ws_a.billing_period) == ("pro", "monthly")
    usage_consume(workspace=ws_a, kind=Usage.TASKS)  # no cap on Pro
    change = PlanChange.objects.get()
    assert (change.state, change.provider, change.seats, change.net_cents) == ("recorded", "recorded", 2, 700)
    assert change.by_user == alice and change.applied_at is not None
    event = Event.objects.get(type="workspace.plan_changed")
    assert event.payload["to"] == {"plan": "pro", "billingPeriod": "monthly"}


@pytest.mark.usefixtures("mid_june")
@time_machine.travel(MID_JUNE, tick=False)
def test_an_owner_moves_back_to_free_with_a_credit(alice: User, ws_a: Workspace) -> None:
    owner = _signed_in(alice)
    owner.post(_plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "yearly"})
    preview = owner.get(_plan_url(ws_a), {"plan": "free", "period": "monthly"}).content.decode()
    assert "Nothing due now" in preview
    owner.post(_plan_url(ws_a, "plan_change"), {"plan": "free", "period": "monthly"})
    ws_a.refresh_from_db()
    assert ws_a.plan.code == "free"
    back = PlanChange.objects.order_by("-pk").first()
    assert back is not None and back.net_cents < 0 and back.state == "recorded"
    Usage.objects.create(workspace=ws_a, period=datetime(2026, 6, 1).date(), kind=Usage.TASKS, count=50)
    with pytest.raises(WeftError):
        usage_consume(workspace=ws_a, kind=Usage.TASKS)  # the Free cap is back at once


@pytest.mark.parametrize("role", [Seat.ADMIN, Seat.MEMBER])
def test_only_an_owner_changes_the_plan(role: str, bob: User, ws_a: Workspace) -> None:
    Seat.objects.filter(user=bob, workspace=ws_a).update(role=role)
    client = _signed_in(bob)
    page = client.get(_plan_url(ws_a)).content.decode()
    assert "Only an owner" in page
    client.post(_plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "monthly"})
    ws_a.refresh_from_db()
    assert ws_a.plan.code == "free" and not PlanChange.objects.exists()


def test_an_unknown_plan_and_the_current_plan_are_refused(alice: User, ws_a: Workspace) -> None:
    owner = _signed_in(alice)
    assert owner.get(_plan_url(ws_a), {"plan": "enterprise", "period": "monthly"}).status_code == 400
    owner.post(_plan_url(ws_a, "plan_change"), {"plan": "free", "period": "monthly"})
    owner.post(_plan_url(ws_a, "plan_change"), {"plan": "free", "period": "weekly"})
    assert not PlanChange.objects.exists()


def test_another_workspaces_change_is_not_found(
    alice: User, carol: User, ws_a: Workspace, ws_b: Workspace
) -> None:
    _signed_in(carol).post(_plan_url(ws_b, "plan_change"), {"plan": "pro", "period": "monthly"})
    theirs = PlanChange.objects.get(workspace=ws_b)
    owner = _signed_in(alice)
    for name in ("plan_change_return", "plan_change_cancel"):
        assert owner.get(_plan_url(ws_a, name, change_id=theirs.pk)).status_code == 404
        assert owner.get(_plan_url(ws_a, name, change_id=987654)).status_code == 404


def test_the_operators_see_the_change_in_the_admin(alice: User, ws_a: Workspace) -> None:
    _signed_in(alice).post(_plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "monthly"})
    operator = User.objects.create_user(
        email="ops@example.com", password="x", is_staff=True, is_superuser=True
    )
    admin = _signed_in(operator)
    listed = admin.get("/admin/accounts/planchange/", {"q": ws_a.slug}).content.decode()
    assert ws_a.name in listed and "recorded" in listed.lower()
    assert ws_a.name in admin.get(f"/admin/accounts/workspace/{ws_a.pk}/change/").content.decode()


# Stripe Checkout, against Stripe-shaped responses.


class FakeStripe:
    """Answers Stripe's two calls from the JSON files, with this change's reference filled in."""

    def __init__(self, paid: bool = False, refuse: bool = False) -> None:
        self.paid, self.refuse = paid, refuse
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.refuse:
            return httpx.Response(400, json=json.loads((STRIPE / "error_invalid_amount.json").read_text()))
        name = "session_paid.json" if request.method == "GET" and self.paid else "session_created.json"
        body = json.loads((STRIPE / name).read_text())
        body["client_reference_id"] = (
            f"plan-change-{PlanChange.objects.order_by('-pk').values_list('pk', flat=True).first()}"
        )
        return httpx.Response(200, json=body)


@pytest.fixture
def stripe(monkeypatch: pytest.MonkeyPatch) -> FakeStripe:
    fake = FakeStripe()
    monkeypatch.setattr(
        "accounts.plan_views.provider",
        lambda: StripeCheckout("sk_test_x", transport=httpx.MockTransport(fake)),
    )
    return fake


@pytest.mark.usefixtures("mid_june")
@time_machine.travel(MID_JUNE, tick=False)
def test_with_stripe_the_owner_pays_at_checkout_before_the_plan_changes(
    stripe: FakeStripe, alice: User, bob: User, ws_a: Workspace
) -> None:
    owner = _signed_in(alice)
    answer = owner.post(_plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "monthly"})
    assert answer["Location"] == "https://checkout.stripe.com/c/pay/cs_test_a1B2c3D4e5F6g7H8i9J0"
    sent = parse_qs(stripe.requests[0].content.decode())
    assert sent["line_items[0][price_data][unit_amount]"] == ["700"]
    assert sent["mode"] == ["payment"]
    change = PlanChange.objects.get()
    assert sent["success_url"][0].endswith(
        f"/plan/changes/{change.pk}/return/?session_id={{CHECKOUT_SESSION_ID}}"
    )
    assert (change.state, change.reference) == ("pending", "cs_test_a1B2c3D4e5F6g7H8i9J0")
    ws_a.refresh_from_db()
    assert ws_a.plan.code == "free"
    owner.get(_plan_url(ws_a, "plan_change_return", change_id=change.pk))  # not paid yet
    assert PlanChange.objects.get().state == "pending"
    stripe.paid = True
    owner.get(_plan_url(ws_a, "plan_change_return", change_id=change.pk))
    change.refresh_from_db()
    ws_a.refresh_from_db()
    assert change.state == "paid" and ws_a.plan.code == "pro"
    assert stripe.requests[-1].url.path == "/v1/checkout/sessions/cs_test_a1B2c3D4e5F6g7H8i9J0"
    owner.get(_plan_url(ws_a, "plan_change_return", change_id=change.pk))  # a second return changes nothing
    assert Event.objects.filter(type="workspace.plan_changed").count() == 1


def test_a_cancelled_checkout_leaves_the_plan(stripe: FakeStripe, alice: User, ws_a: Workspace) -> None:
    owner = _signed_in(alice)
    owner.post(_plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "monthly"})
    change = PlanChange.objects.get()
    owner.get(_plan_url(ws_a, "plan_change_cancel", change_id=change.pk))
    stripe.paid = True
    owner.get(_plan_url(ws_a, "plan_change_return", change_id=change.pk))
    change.refresh_from_db()
    ws_a.refresh_from_db()
    assert change.state == "abandoned" and ws_a.plan.code == "free"


def test_a_stripe_refusal_changes_nothing_and_says_why(
    alice: User, ws_a: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeStripe(refuse=True)
    monkeypatch.setattr(
        "accounts.plan_views.provider",
        lambda: StripeCheckout("sk_test_x", transport=httpx.MockTransport(fake)),
    )
    answer = _signed_in(alice).post(
        _plan_url(ws_a, "plan_change"), {"plan": "pro", "period": "monthly"}, follow=True
    )
    assert "Stripe refused the request (400): Invalid integer" in answer.content.decode()
    ws_a.refresh_from_db()
    assert ws_a.plan.code == "free"
    assert PlanChange.objects.get().state == "abandoned"


def test_a_downgrade_never_goes_to_a_checkout(stripe: FakeStripe, alice: User, ws_a: Workspace) -> None:
    ws_a.plan = Plan.named(Plan.PRO)
    ws_a.save(update_fields=["plan"])
    _signed_in(alice).post(_plan_url(ws_a, "plan_change"), {"plan": "free", "period": "monthly"})
    assert stripe.requests == []
    ws_a.refresh_from_db()
    assert ws_a.plan.code == "free"
