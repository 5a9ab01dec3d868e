"""An owner changes the workspace's plan: previewed with its proration, paid through the payment
adapter (accounts.payments), applied with its event (workspace_set_plan), kept as a PlanChange.

The limits follow the plan at once: caps are read from the workspace's plan on every call.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from accounts import billing
from accounts.models import Plan, PlanChange, Seat, Workspace
from accounts.payments import Checkout, PaymentFailed, PaymentProvider
from accounts.roles import OWNER
from accounts.services.workspaces import workspace_set_plan
from boards import clock
from weft.errors import WeftError, invalid_argument
from weft.hints import wait

CHOICES = {(Plan.FREE, billing.MONTHLY), (Plan.PRO, billing.MONTHLY), (Plan.PRO, billing.YEARLY)}


@dataclass(frozen=True)
class PlanQuote:
    """What a change would cost now, for the plan page."""

    plan: Plan
    period: str
    seats: int
    proration: billing.Proration


def _refuse_non_owner(seat: Seat) -> None:
    if seat.role != OWNER:
        raise WeftError(
            "forbidden",
            "only an owner changes the workspace's plan",
            details={"workspace": seat.workspace.slug},
            fix=wait("an owner of the workspace changes its plan"),
        )


def plan_quote(
    *, workspace: Workspace, plan_code: str, period: str, now: datetime | None = None
) -> PlanQuote:
    """The proration of moving `workspace` to `plan_code` billed `period`, at `now`."""
    if (plan_code, period) not in CHOICES:
        raise invalid_argument(
            "plan",
            "one of free (monthly), pro monthly, pro yearly",
            fix_hint=wait("pick a plan on the plan page"),
        )
    plan = Plan.named(plan_code)
    seats = workspace.seats.count()
    current = workspace.plan
    old = billing.bill_cents(
        month_cents=current.seat_price_month_cents,
        year_cents=current.seat_price_year_cents,
        period=workspace.billing_period,
        seats=seats,
    )
    new = billing.bill_cents(
        month_cents=plan.seat_price_month_cents,
        year_cents=plan.seat_price_year_cents,
        period=period,
        seats=seats,
    )
    proration = billing.prorate(
        old_bill_cents=old,
        old_period=workspace.billing_period,
        new_bill_cents=new,
        new_period=period,
        now=now or clock.db_now(),
    )
    return PlanQuote(plan=plan, period=period, seats=seats, proration=proration)


def plan_change_begin(
    *, seat: Seat, plan_code: str, period: str, payments: PaymentProvider, success_url: str, cancel_url: str
) -> tuple[PlanChange, Checkout]:
    """Start the owner's change: applied at once unless the adapter takes a payment first."""
    _refuse_non_owner(seat)
    workspace = seat.workspace
    if (workspace.plan.code, workspace.billing_period) == (plan_code, period):
        raise WeftError(
            "conflict",
            f"the workspace is on {plan_code} ({period}) already",
            details={"plan": plan_code, "period": period},
            fix=wait("pick another plan or billing period"),
        )
    quote = plan_quote(workspace=workspace, plan_code=plan_code, period=period)
    change = PlanChange.objects.create(
        workspace=workspace,
        by_user=seat.user,
        from_plan=workspace.plan.code,
        from_period=workspace.billing_period,
        to_plan=plan_code,
        to_period=period,
        seats=quote.seats,
        credit_cents=quote.proration.credit_cents,
        charge_cents=quote.proration.charge_cents,
        provider=payments.name,
        state=PlanChange.PENDING,
    )
    checkout = Checkout(url=None, reference="")
    if change.net_cents > 0:
        urls = {"success_url": success_url, "cancel_url": cancel_url}
        try:
            checkout = payments.begin(
                change, **{k: v.replace("{id}", str(change.pk)) for k, v in urls.items()}
            )
        except PaymentFailed:
            PlanChange.objects.filter(pk=change.pk).update(state=PlanChange.ABANDONED)
            raise
    if checkout.url is None:
        _apply(change, state=PlanChange.RECORDED)
    else:
        PlanChange.objects.filter(pk=change.pk).update(reference=checkout.reference)
        change.reference = checkout.reference
    return change, checkout


def plan_change_settle(*, seat: Seat, change: PlanChange, payments: PaymentProvider) -> PlanChange:
    """A pending change after its checkout: applied when the provider says it is paid."""
    _refuse_non_owner(seat)
    if change.state != PlanChange.PENDING:
        return change
    if payments.paid(change):
        _apply(change, state=PlanChange.PAID)
    return change


def _apply(change: PlanChange, *, state: str) -> None:
    with transaction.atomic():
        locked = PlanChange.objects.select_for_update().get(pk=change.pk)
        if locked.state != PlanChange.PENDING:
            return
        workspace = Workspace.objects.get(pk=change.workspace_id)
        workspace_set_plan(
            workspace=workspace, plan=Plan.named(change.to_plan), billing_period=change.to_period
        )
        locked.state, locked.applied_at = state, clock.db_now()
        locked.save(update_fields=["state", "applied_at"])
    change.state, change.applied_at = locked.state, locked.applied_at


def plan_change_abandon(*, seat: Seat, change: PlanChange) -> None:
    """The owner left the checkout: a pending change is abandoned (the plan stays)."""
    _refuse_non_owner(seat)
    PlanChange.objects.filter(pk=change.pk, state=PlanChange.PENDING).update(state=PlanChange.ABANDONED)
