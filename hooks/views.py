"""The webhook pages of a workspace's settings. Thin: parse → access → service/selector → render.

Only owners and admins reach them; anyone else gets the same 404 as a missing workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.models import Seat
from boards.views import workspace_view
from hooks import delivery, selectors, services
from hooks.access import access_delivery, access_subscription
from hooks.forms import SubscriptionForm
from weft.errors import WeftError

View = Callable[..., HttpResponse]


def managing_view(view: View) -> View:
    """As boards' workspace_view, for owners and admins: anyone else gets a missing workspace's 404."""

    @wraps(view)
    def managed(request: HttpRequest, seat: Seat, **kwargs: Any) -> HttpResponse:
        if not seat.can_manage:
            raise Http404(f"workspace {seat.workspace.slug} does not exist or you have no seat in it")
        return view(request, seat, **kwargs)

    return workspace_view(managed)


def _page(
    request: HttpRequest, seat: Seat, form: SubscriptionForm, *, status: int = 200, **extra: Any
) -> HttpResponse:
    listing = selectors.subscriptions_list(workspace=seat.workspace, by_seat=seat)
    context = {
        "seat": seat,
        "workspace": seat.workspace,
        "subscriptions": listing.subscriptions,
        "disabled": [s for s in listing.subscriptions if s.state == s.DISABLED],
        "limit": listing.limit,
        "form": form,
        **extra,
    }
    return render(request, "hooks/subscriptions.html", context, status=status)


@managing_view
@require_GET
def subscriptions(request: HttpRequest, seat: Seat) -> HttpResponse:
    return _page(request, seat, SubscriptionForm())


@managing_view
@require_POST
def subscription_create(request: HttpRequest, seat: Seat) -> HttpResponse:
    form = SubscriptionForm(request.POST)
    if not form.is_valid():
        return _page(request, seat, form, status=400)
    try:
        created = services.subscription_create(
            workspace=seat.workspace,
            url=form.cleaned_data["url"],
            event_types=form.types(),
            entity_type=form.cleaned_data["entity_type"],
            entity_id=form.cleaned_data["entity_id"],
            by_seat=seat,
        )
    except WeftError as error:
        form.add_error(None, error.message)
        return _page(request, seat, form, status=error.http_status)
    # Rendered, not redirected: the secret is in this answer only and is never stored readable.
    return _page(request, seat, SubscriptionForm(), created=created.subscription, secret=created.secret)


@managing_view
@require_GET
def subscription(request: HttpRequest, seat: Seat, subscription_id: int) -> HttpResponse:
    log = selectors.subscription_log(subscription=access_subscription(seat.workspace, subscription_id))
    context = {"seat": seat, "workspace": seat.workspace, "log": log}
    return render(request, "hooks/subscription.html", context)


@managing_view
@require_POST
def subscription_delete(request: HttpRequest, seat: Seat, subscription_id: int) -> HttpResponse:
    found = access_subscription(seat.workspace, subscription_id)
    services.subscription_delete(subscription=found, by_seat=seat)
    messages.success(request, f"Subscription {subscription_id} deleted.")
    return redirect("hooks:subscriptions", slug=seat.workspace.slug)


@managing_view
@require_POST
def delivery_redeliver(request: HttpRequest, seat: Seat, delivery_id: int) -> HttpResponse:
    found = access_delivery(seat.workspace, delivery_id)
    try:
        delivery.delivery_redeliver(delivery=found, by_seat=seat)
        messages.success(request, f"Delivery {found.message_id} goes out again with the same webhook-id.")
    except WeftError as error:
        messages.error(request, error.message)
    return redirect("hooks:subscription", slug=seat.workspace.slug, subscription_id=found.subscription_id)
