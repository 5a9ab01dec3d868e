"""Typed results of the subscription services and selectors: each carries its hint, payload and summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hooks.models import Delivery, Subscription
from hooks.rules import stored_filter
from weft.hints import DONE, Hint, next_


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def subscription_payload(subscription: Subscription) -> dict[str, Any]:
    return {
        "id": subscription.pk,
        "url": subscription.url,
        "filter": stored_filter(vars(subscription)).as_json(),
        "state": subscription.state,
        "disabledReason": subscription.disabled_reason or None,
        "disabledAt": iso(subscription.disabled_at),
        "createdAt": iso(subscription.created_at),
    }


def delivery_payload(delivery: Delivery) -> dict[str, Any]:
    return {
        "id": delivery.pk,
        "webhookId": delivery.message_id,
        "eventId": delivery.event_id,
        "eventType": delivery.event_type,
        "state": delivery.state,
        "attempts": delivery.attempts,
        "lastStatusCode": delivery.last_status_code,
        "lastError": delivery.last_error or None,
        "lastLatencyMs": delivery.last_latency_ms,
        "nextAttemptAt": iso(delivery.next_attempt_at),
    }


def created_hint() -> Hint:
    return next_("list_subscriptions")


@dataclass
class SubscriptionCreated:
    """subscription_create: the only answer that ever shows the signing secret."""

    subscription: Subscription
    secret: str
    hint: Hint = field(default_factory=created_hint)

    def payload(self) -> dict[str, Any]:
        return {"subscription": subscription_payload(self.subscription), "secret": self.secret}

    def summary(self) -> str:
        return (
            f"Subscription {self.subscription.pk} created for {self.subscription.url}.\n"
            f"Signing secret (shown only now; store it to verify webhook-signature): {self.secret}"
        )


@dataclass
class SubscriptionDeleted:
    subscription_id: int
    url: str
    hint: Hint = DONE

    def payload(self) -> dict[str, Any]:
        return {"deleted": {"id": self.subscription_id, "url": self.url}}

    def summary(self) -> str:
        return f"Subscription {self.subscription_id} deleted; {self.url} receives no more events."


@dataclass
class SubscriptionList:
    subscriptions: list[Subscription]
    limit: int
    hint: Hint = DONE

    def payload(self) -> dict[str, Any]:
        return {
            "subscriptions": [subscription_payload(s) for s in self.subscriptions],
            "limit": self.limit,
        }

    def summary(self) -> str:
        if not self.subscriptions:
            return f"No subscriptions in this workspace (at most {self.limit})."
        lines = [f"{len(self.subscriptions)} of at most {self.limit} subscriptions:"]
        for s in self.subscriptions:
            lines.append(f"- {s.pk} {s.state} {s.url} {stored_filter(vars(s)).as_json()}")
        return "\n".join(lines)
