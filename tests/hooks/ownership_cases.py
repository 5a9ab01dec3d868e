"""Ownership cases of the webhook pages, merged into tests/ownership_cases.py's CASES."""

from __future__ import annotations

from typing import Any

from tests.ownership_cases import Case, Kwargs, Objects, extra


@extra("subscription")
def _subscription(o: Objects) -> object:
    from hooks import vault
    from hooks.models import Subscription
    from hooks.signing import new_secret

    return Subscription.objects.create(
        workspace=o.ws,
        url="https://hooks.example.com/ownership",
        event_types=["task.created"],
        secret_sealed=vault.seal(new_secret()),
    )


@extra("delivery")
def _delivery(o: Objects) -> object:
    from hooks.models import Delivery

    return Delivery.objects.create(
        workspace=o.ws, subscription=o.subscription, event_id="1", event_type="task.created", body="{}"
    )


def _ws(o: Objects) -> dict[str, Any]:
    return {"slug": o.ws.slug}


def _subscription_kwargs(o: Objects) -> dict[str, Any]:
    return {"slug": o.ws.slug, "subscription_id": o.subscription.pk}


def _post(kwargs: Kwargs, **data: Any) -> Case:
    return Case(kwargs, alice_get=None, post=data)


CASES: dict[str, Kwargs | Case] = {
    "hooks:subscriptions": _ws,
    "hooks:subscription_create": _post(
        _ws, url="https://hooks.example.com/taken", event_types="task.created"
    ),
    "hooks:subscription": _subscription_kwargs,
    "hooks:subscription_delete": _post(_subscription_kwargs),
    "hooks:delivery_redeliver": _post(lambda o: {"slug": o.ws.slug, "delivery_id": o.delivery.pk}),
}
