"""PURE: what a workspace's plan costs, from the plan's prices, the billing period and the seats."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlanPrice:
    """Dollar amounts for the plan page (prices are kept in cents)."""

    per_seat_month: float
    per_seat_year: float
    yearly: bool
    total: float


def plan_price(*, month_cents: int, year_cents: int, yearly: bool, seats: int) -> PlanPrice:
    """The seat prices, and the bill for `seats` seats in the billing period."""
    per_seat = year_cents if yearly else month_cents
    return PlanPrice(
        per_seat_month=month_cents / 100,
        per_seat_year=year_cents / 100,
        yearly=yearly,
        total=per_seat * seats / 100,
    )
