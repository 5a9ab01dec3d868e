"""Payment adapters for plan changes, chosen by WEFT_PAYMENTS.

`recorded` (the default) makes no network call: the change applies at once and stays in the
admin for the operators to invoice. `stripe` sends the owner to a Stripe Checkout session for
the prorated charge and applies the change when Stripe reports the session paid (the owner's
return, or a reload of the plan page, asks Stripe). A change that costs nothing now — a
downgrade, a credit — never goes to a checkout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import httpx
from django.conf import settings

from accounts.models import PlanChange


@dataclass(frozen=True)
class Checkout:
    """Where the owner pays (None: nothing to pay there) and the provider's reference."""

    url: str | None
    reference: str


class PaymentFailed(Exception):
    """The provider refused or could not be reached; nothing changed."""


class PaymentProvider(Protocol):
    name: str

    def begin(self, change: PlanChange, *, success_url: str, cancel_url: str) -> Checkout: ...

    def paid(self, change: PlanChange) -> bool: ...


class RecordedPayments:
    """No payment taken here: the operators invoice what the admin lists."""

    name = "recorded"

    def begin(self, change: PlanChange, *, success_url: str, cancel_url: str) -> Checkout:
        return Checkout(url=None, reference="")

    def paid(self, change: PlanChange) -> bool:
        return True


class StripeCheckout:
    """Stripe Checkout in payment mode for the prorated charge (the API's form encoding)."""

    name = "stripe"
    API = "https://api.stripe.com/v1"

    def __init__(self, secret_key: str, *, transport: httpx.BaseTransport | None = None) -> None:
        self.client = httpx.Client(
            base_url=self.API, auth=(secret_key, ""), timeout=10.0, transport=transport
        )

    def begin(self, change: PlanChange, *, success_url: str, cancel_url: str) -> Checkout:
        form = {
            "mode": "payment",
            "success_url": success_url + "?session_id={CHECKOUT_SESSION_ID}",
            "cancel_url": cancel_url,
            "client_reference_id": f"plan-change-{change.pk}",
            "line_items[0][quantity]": "1",
            "line_items[0][price_data][currency]": "usd",
            "line_items[0][price_data][unit_amount]": str(change.net_cents),
            "line_items[0][price_data][product_data][name]": (
                f"Weft {change.to_plan} ({change.to_period}), {change.seats} seat(s), rest of the period"
            ),
            "metadata[workspace_id]": str(change.workspace_id),
            "metadata[plan_change_id]": str(change.pk),
        }
        session = self._call("POST", "/checkout/sessions", data=form)
        return Checkout(url=str(session["url"]), reference=str(session["id"]))

    def paid(self, change: PlanChange) -> bool:
        session = self._call("GET", f"/checkout/sessions/{change.reference}")
        return session.get("payment_status") == "paid" and session.get("client_reference_id") == (
            f"plan-change-{change.pk}"
        )

    def _call(self, method: str, path: str, **kwargs: object) -> dict[str, object]:
        try:
            response = self.client.request(method, path, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            raise PaymentFailed(f"Stripe could not be reached: {exc}") from exc
        body = response.json() if response.content else {}
        if response.status_code >= 400 or not isinstance(body, dict):
            message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
            raise PaymentFailed(f"Stripe refused the request ({response.status_code}): {message}")
        return body


def provider() -> PaymentProvider:
    if settings.WEFT_PAYMENTS == "stripe":
        return StripeCheckout(settings.STRIPE_SECRET_KEY)
    return RecordedPayments()
