"""Access helpers for subscriptions and deliveries: scoped by workspace; foreign ids answer as missing."""

from __future__ import annotations

from typing import Any

from accounts.models import Workspace
from hooks.models import Delivery, Subscription
from weft.errors import not_found
from weft.hints import fix


def _pk(kind: str, ident: Any) -> int:
    """Ids arrive as ints or strings of digits; anything else cannot exist."""
    try:
        value = int(str(ident).strip())
    except (TypeError, ValueError):
        raise _missing(kind, ident) from None
    if value <= 0 or value >= 2**63:
        raise _missing(kind, ident)
    return value


def _missing(kind: str, ident: Any) -> Exception:
    return not_found(kind, ident, fix_hint=fix("list_subscriptions"))


def access_subscription(workspace: Workspace | int, subscription_id: Any) -> Subscription:
    pk = _pk("subscription", subscription_id)
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    found = Subscription.objects.filter(workspace_id=workspace_id, pk=pk).first()
    if found is None:
        raise _missing("subscription", subscription_id)
    return found


def access_delivery(workspace: Workspace | int, delivery_id: Any) -> Delivery:
    pk = _pk("delivery", delivery_id)
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    found = Delivery.objects.select_related("subscription").filter(workspace_id=workspace_id, pk=pk).first()
    if found is None:
        raise _missing("delivery", delivery_id)
    return found
