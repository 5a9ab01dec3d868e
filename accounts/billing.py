"""PURE: what a plan change costs: the billing period it falls in and the prorated difference.

A monthly bill covers the calendar month, a yearly one the calendar year (UTC), the same months
the usage meters count. Changing plan or period mid-way credits what is left of the old bill and
charges what is left of the new one, to the cent; a downgrade to Free is a credit only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

MONTHLY, YEARLY = "monthly", "yearly"


@dataclass(frozen=True)
class Proration:
    """Cents for the rest of the period: the old bill's unused part, the new bill's part."""

    credit_cents: int
    charge_cents: int
    fraction_left: float
    period_end: datetime

    @property
    def net_cents(self) -> int:
        """What the change costs now (negative: what it gives back)."""
        return self.charge_cents - self.credit_cents


def period_bounds(period: str, now: datetime) -> tuple[datetime, datetime]:
    """The calendar month (monthly) or year (yearly) in UTC that `now` falls in."""
    at = now.astimezone(UTC)
    if period == YEARLY:
        return datetime(at.year, 1, 1, tzinfo=UTC), datetime(at.year + 1, 1, 1, tzinfo=UTC)
    start = datetime(at.year, at.month, 1, tzinfo=UTC)
    end = datetime(at.year + (at.month == 12), at.month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def bill_cents(*, month_cents: int, year_cents: int, period: str, seats: int) -> int:
    """A whole period's bill for `seats` seats."""
    return (year_cents if period == YEARLY else month_cents) * seats


def prorate(
    *, old_bill_cents: int, old_period: str, new_bill_cents: int, new_period: str, now: datetime
) -> Proration:
    """Credit the unused part of the old period's bill, charge the rest of the new period's."""
    old_start, old_end = period_bounds(old_period, now)
    new_start, new_end = period_bounds(new_period, now)
    old_left = _left(old_start, old_end, now)
    new_left = _left(new_start, new_end, now)
    return Proration(
        credit_cents=round(old_bill_cents * old_left),
        charge_cents=round(new_bill_cents * new_left),
        fraction_left=new_left,
        period_end=new_end,
    )


def _left(start: datetime, end: datetime, now: datetime) -> float:
    total = (end - start).total_seconds()
    return min(max((end - now).total_seconds() / total, 0.0), 1.0)
