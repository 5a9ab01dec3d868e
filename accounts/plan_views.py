"""The plan page: the plan, its price and usage; for owners, changing plan with its proration.

Choosing a plan shows what it costs for the rest of the period (GET ?plan=…&period=…); the owner
confirms with a POST. With a payment adapter that takes payment (Stripe), the owner goes to its
checkout and comes back to /plan/changes/<id>/return/, which applies the change once paid.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts import selectors, services
from accounts.access import access_plan_change, access_seat
from accounts.models import PlanChange, Seat, User, next_month_start
from accounts.payments import PaymentFailed, provider
from accounts.plans import plan_price
from accounts.roles import OWNER
from boards import clock
from weft.errors import WeftError

OPTIONS = [("free", "monthly", "Free"), ("pro", "monthly", "Pro, monthly"), ("pro", "yearly", "Pro, yearly")]


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


def _page(request: HttpRequest, seat: Seat, *, status: int = 200, **extra: Any) -> HttpResponse:
    workspace = seat.workspace
    seats = workspace.seats.count()
    plan = workspace.plan
    now = clock.db_now()
    current = (plan.code, workspace.billing_period)
    context = {
        "seat": seat,
        "workspace": workspace,
        "plan": plan,
        "is_free": plan.code == plan.FREE,
        "is_owner": seat.role == OWNER,
        "seats": seats,
        "price": plan_price(
            month_cents=plan.seat_price_month_cents,
            year_cents=plan.seat_price_year_cents,
            yearly=workspace.billing_period == workspace.BILLING_YEARLY,
            seats=seats,
        ),
        "options": [
            {"plan": code, "period": period, "label": label, "current": (code, period) == current}
            for code, period, label in OPTIONS
        ],
        "changes": selectors.plan_changes(workspace=workspace),
        "usage": selectors.usage_rows(seat, now),
        "resets_on": next_month_start(now.date()),
        **extra,
    }
    return render(request, "accounts/plan.html", context, status=status)


@login_required
def workspace_plan(request: HttpRequest, slug: str) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    plan_code, period = request.GET.get("plan"), request.GET.get("period")
    if not plan_code or not period:
        return _page(request, seat)
    try:
        quote = services.plan_quote(workspace=seat.workspace, plan_code=plan_code, period=period)
    except WeftError as error:
        return _page(request, seat, status=400, problem=error.message)
    return _page(request, seat, quote=quote, quote_dollars=_dollars(quote.proration))


def _dollars(proration: Any) -> dict[str, float | bool]:
    return {
        "due": proration.net_cents > 0,
        "credit": proration.credit_cents / 100,
        "charge": proration.charge_cents / 100,
        "net": proration.net_cents / 100,
        "refund": -proration.net_cents / 100,
    }


@login_required
def plan_change(request: HttpRequest, slug: str) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    plan_code, period = request.POST.get("plan", ""), request.POST.get("period", "")
    base = request.build_absolute_uri(reverse("workspace_plan", kwargs={"slug": slug}))
    try:
        change, checkout = services.plan_change_begin(
            seat=seat,
            plan_code=plan_code,
            period=period,
            payments=provider(),
            success_url=f"{base}changes/{{id}}/return/",
            cancel_url=f"{base}changes/{{id}}/cancel/",
        )
    except (WeftError, PaymentFailed) as error:
        messages.error(request, getattr(error, "message", str(error)))
        query = urlencode({"plan": plan_code, "period": period})
        return redirect(f"{reverse('workspace_plan', kwargs={'slug': slug})}?{query}")
    if checkout.url:
        return redirect(checkout.url)
    messages.success(request, f"{seat.workspace.name} is on {change.to_plan} ({change.to_period}) now.")
    return redirect("workspace_plan", slug=slug)


@login_required
def plan_change_return(request: HttpRequest, slug: str, change_id: int) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    change = access_plan_change(seat, change_id)
    try:
        settled = services.plan_change_settle(seat=seat, change=change, payments=provider())
    except (WeftError, PaymentFailed) as error:
        messages.error(request, getattr(error, "message", str(error)))
        return redirect("workspace_plan", slug=slug)
    if settled.state == PlanChange.PAID:
        messages.success(
            request, f"Paid: {seat.workspace.name} is on {settled.to_plan} ({settled.to_period}) now."
        )
    else:
        messages.info(request, "The payment is not confirmed yet; the plan changes once it is.")
    return redirect("workspace_plan", slug=slug)


@login_required
def plan_change_cancel(request: HttpRequest, slug: str, change_id: int) -> HttpResponse:
    seat = access_seat(_user(request), slug)
    change = access_plan_change(seat, change_id)
    services.plan_change_abandon(seat=seat, change=change)
    messages.info(request, "The plan did not change: the checkout was cancelled.")
    return redirect("workspace_plan", slug=slug)
