"""Workspaces: creating one, its plan, the operators' kill switch, and usage metering against the plan."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Plan, Seat, Usage, User, Workspace, month_start, next_month_start
from accounts.services.common import seat_added
from boards import clock
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import wait


def workspace_create(*, owner: User, name: str, plan_code: str = Plan.FREE) -> Workspace:
    """A new workspace on the given plan, with `owner` in its first seat."""
    name = name.strip()
    if not name:
        raise invalid_argument(
            "name", "a workspace needs a name", fix_hint=wait("the new workspace is given a name")
        )
    with transaction.atomic():
        now = clock.db_now()
        workspace = Workspace.objects.create(
            name=name[:100], slug=Workspace.unique_slug(name), plan=Plan.named(plan_code), created_at=now
        )
        seat = Seat.objects.create(workspace=workspace, user=owner, role=Seat.OWNER, created_at=now)
        emit(
            workspace_id=workspace.pk,
            type="workspace.created",
            entity_type="workspace",
            entity_id=workspace.pk,
            payload={
                "workspaceId": workspace.pk,
                "name": workspace.name,
                "slug": workspace.slug,
                "plan": workspace.plan.code,
            },
        )
        seat_added(seat, None)
    return workspace


def _locked_workspace(workspace: Workspace) -> Workspace:
    return Workspace.objects.select_for_update().select_related("plan").get(pk=workspace.pk)


def workspace_set_plan(*, workspace: Workspace, plan: Plan, billing_period: str) -> bool:
    """Move the workspace to `plan`, billed `billing_period`; False when it is there already."""
    if billing_period not in {Workspace.BILLING_MONTHLY, Workspace.BILLING_YEARLY}:
        raise invalid_argument(
            "billing_period",
            f"{billing_period!r} is not one of {Workspace.BILLING_MONTHLY}, {Workspace.BILLING_YEARLY}",
            fix_hint=wait("the billing period is monthly or yearly"),
        )
    with transaction.atomic():
        current = _locked_workspace(workspace)
        before = {"plan": current.plan.code, "billingPeriod": current.billing_period}
        after = {"plan": plan.code, "billingPeriod": billing_period}
        if before == after:
            return False
        Workspace.objects.filter(pk=current.pk).update(plan=plan, billing_period=billing_period)
        emit(
            workspace_id=current.pk,
            type="workspace.plan_changed",
            entity_type="workspace",
            entity_id=current.pk,
            payload={"workspaceId": current.pk, "from": before, "to": after},
        )
    workspace.plan, workspace.billing_period = plan, billing_period
    return True


def workspace_set_suspended(*, workspace: Workspace, suspended: bool) -> bool:
    """The operators' kill switch: on, every agent call refuses; False when it is so already."""
    with transaction.atomic():
        if not Workspace.objects.filter(pk=workspace.pk, is_suspended=not suspended).update(
            is_suspended=suspended
        ):
            return False
        emit(
            workspace_id=workspace.pk,
            type="workspace.suspended" if suspended else "workspace.suspension_lifted",
            entity_type="workspace",
            entity_id=workspace.pk,
            payload={"workspaceId": workspace.pk},
        )
    workspace.is_suspended = suspended
    return True


def usage_consume(*, workspace: Workspace, kind: str, n: int = 1, now: datetime | None = None) -> None:
    """Count `n` units of `kind` against this month's plan cap; refuse with plan_limit_reached past it.

    The increment is one conditional UPDATE (`count + n <= cap`), so concurrent callers can
    neither lose a count nor overshoot the cap. It runs on every agent call, so the usual case
    is that single query; the month's row is created only when the UPDATE finds none.

    Callers inside a write pass the database time they read (`now`). Without it — the meter
    around each agent call — the month is this server's: reading the database clock would cost
    every agent call a query, and a skew of seconds only decides, at a month's edge, which of
    two months one call counts in. Metering is not an event: the counter is the record.
    """
    now = now or timezone.now()
    period = month_start(now.date())
    cap = workspace.plan.cap_for(kind)
    rows = Usage.objects.filter(workspace=workspace, period=period, kind=kind)
    if cap is not None:
        rows = rows.filter(count__lte=cap - n)
    if rows.update(count=F("count") + n):
        return
    # No row for this month yet, or the cap is reached. Create the row (a racing creator is
    # harmless: ignore_conflicts) and try once more.
    Usage.objects.bulk_create(
        [Usage(workspace=workspace, period=period, kind=kind, count=0)], ignore_conflicts=True
    )
    if rows.update(count=F("count") + n):
        return
    used = Usage.objects.get(workspace=workspace, period=period, kind=kind).count
    raise usage_refusal(workspace=workspace, kind=kind, used=used, now=now)


def usage_refusal(*, workspace: Workspace, kind: str, used: int, now: datetime) -> WeftError:
    """plan_limit_reached: `used` of this month's cap of `kind` are spent (also weft.mcp.gate's answer)."""
    cap = workspace.plan.cap_for(kind)
    resets = next_month_start(now.date())
    label = dict(Usage.KINDS)[kind].lower()
    return WeftError(
        "plan_limit_reached",
        f"the {workspace.plan.name} plan allows {cap} {label} a month; {used} used,"
        f" resets {resets.isoformat()}. Upgrade to Pro for no cap.",
        details={
            "kind": kind,
            "used": used,
            "limit": cap,
            "resets_at": resets.isoformat(),
            "upgrade": "pro",
        },
        fix=wait(f"the monthly allowance resets on {resets.isoformat()} or the workspace moves to Pro"),
    )


def usage_for(*, workspace: Workspace, now: datetime | None = None) -> dict[str, dict[str, int | None]]:
    """This month's counters and caps, by kind."""
    now = now or clock.db_now()
    period = month_start(now.date())
    counts = dict(Usage.objects.filter(workspace=workspace, period=period).values_list("kind", "count"))
    return {
        kind: {"used": counts.get(kind, 0), "limit": workspace.plan.cap_for(kind)} for kind, _ in Usage.KINDS
    }
