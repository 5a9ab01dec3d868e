"""Subscription reads for the web pages and the MCP tools alike."""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import AgentConnection, Seat, Workspace
from hooks.models import Delivery, Subscription
from hooks.results import SubscriptionList
from hooks.rules import MAX_PER_WORKSPACE
from hooks.services import require_manager

LOG_LENGTH = 50


def subscriptions_list(
    *, workspace: Workspace, by_seat: Seat | None = None, by_connection: AgentConnection | None = None
) -> SubscriptionList:
    """The workspace's subscriptions, for its owners and admins (their URLs may carry credentials)."""
    require_manager(workspace, by_seat=by_seat, by_connection=by_connection)
    rows = list(Subscription.objects.filter(workspace=workspace).order_by("pk"))
    return SubscriptionList(subscriptions=rows, limit=MAX_PER_WORKSPACE)


@dataclass(frozen=True)
class SubscriptionLog:
    """One subscription with its latest deliveries, newest first."""

    subscription: Subscription
    deliveries: list[Delivery]


def subscription_log(*, subscription: Subscription) -> SubscriptionLog:
    rows = list(Delivery.objects.filter(subscription=subscription).order_by("-pk")[:LOG_LENGTH])
    return SubscriptionLog(subscription=subscription, deliveries=rows)
