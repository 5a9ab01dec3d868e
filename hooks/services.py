"""Subscription writes, one transaction each, keyword-only arguments; each emits its event.

Subscriptions are seen and managed by the workspace's owners and admins only, on the web and
through their agents alike (`require_manager`). Delivery bookkeeping (hooks/delivery.py) emits
no events: an event per attempt would feed the log with its own deliveries, and a subscriber of
those would never go quiet.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from accounts.models import AgentConnection, Seat, Workspace
from boards import clock
from hooks import addresses, vault
from hooks.models import Delivery, Subscription
from hooks.results import SubscriptionCreated, SubscriptionDeleted
from hooks.rules import EVENT_TYPES, MAX_PER_WORKSPACE, Filter, FilterError, clean_filter, stored_filter
from hooks.signing import new_secret
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import Hint, fix, wait


def _call(url: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The subscribe call's arguments, without the empty ones."""
    return {"url": url, **{k: v for k, v in spec.items() if v not in (None, "", [])}}


def _corrected(error: FilterError, url: str, spec: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The refused call with the refused part replaced by a valid value, where Weft knows one."""
    if error.field == "url" and url.startswith("http://") and "https" in error.reason:
        return "https://" + url.removeprefix("http://"), spec
    if error.field in {"filter", "entityType"} and not spec.get("entityType"):
        return url, {**spec, "entityType": "task"}
    if error.field.startswith("eventTypes"):
        # Each valid type once, at most the limit: the corrected call must itself be accepted.
        valid = list(dict.fromkeys(t for t in spec.get("eventTypes") or [] if _valid_type(t)))[:EVENT_TYPES]
        return url, {**spec, "eventTypes": valid} if valid else {
            **spec,
            "eventTypes": None,
            "entityType": "task",
        }
    return None


def _refused(error: FilterError, url: str, spec: dict[str, Any]) -> WeftError:
    """invalid_argument whose Fix: is the corrected call when that call is accepted, else the list."""
    hint: Hint = fix("list_subscriptions")
    corrected = _corrected(error, url, spec)
    # A correction that changes nothing would be refused the same way, again and again.
    if corrected is not None and corrected != (url, spec):
        try:
            _checked(*corrected)
        except WeftError:
            pass
        else:
            hint = fix("subscribe", _call(*corrected))
    return invalid_argument(error.field, error.reason, fix_hint=hint)


def _valid_type(value: Any) -> bool:
    try:
        clean_filter(event_types=[value], entity_type=None, entity_id=None)
    except FilterError:
        return False
    return True


def require_manager(
    workspace: Workspace, *, by_seat: Seat | None, by_connection: AgentConnection | None
) -> None:
    """Owners and admins manage subscriptions, and so do the agents they signed in."""
    if by_seat is not None and by_seat.workspace_id == workspace.pk and by_seat.can_manage:
        return
    if by_connection is not None and by_connection.workspace_id == workspace.pk:
        role = (
            Seat.objects.filter(workspace=workspace, user_id=by_connection.user_id)
            .values_list("role", flat=True)
            .first()
        )
        if role in {Seat.OWNER, Seat.ADMIN}:
            return
    raise WeftError(
        "permission_denied",
        f"only owners and admins of workspace {workspace.slug} (or their agents) manage webhooks",
        details={"workspace": workspace.slug},
        fix=wait(f"an owner or admin of workspace {workspace.slug} manages its webhooks", "get_my_work"),
    )


def _checked(url: str, spec: dict[str, Any]) -> tuple[str, Filter]:
    """The URL and filter as stored; outside debug the host must resolve to public addresses only."""
    try:
        target = addresses.target(url, debug=settings.DEBUG)
        found = clean_filter(
            event_types=spec.get("eventTypes"),
            entity_type=spec.get("entityType"),
            entity_id=spec.get("entityId"),
        )
        if not settings.DEBUG:
            addresses.resolve(target.host, target.port, allow_private=False)
    except FilterError as error:
        raise _refused(error, url, spec) from None
    return url.strip(), found


def _limit_reached(workspace: Workspace) -> WeftError:
    return WeftError(
        "subscription_limit_reached",
        f"workspace {workspace.slug} already has {MAX_PER_WORKSPACE} subscriptions, the most it may hold",
        details={"limit": MAX_PER_WORKSPACE},
        fix=fix("list_subscriptions"),
    )


def _duplicate_of(workspace: Workspace, url: str, found: Filter) -> WeftError | None:
    """An active subscription that already sends the same events to the same URL (a retried call)."""
    for row in Subscription.objects.filter(workspace=workspace, url=url, state=Subscription.ACTIVE):
        same = stored_filter(vars(row))
        if (set(same.event_types), same.entity_type, same.entity_id) == (
            set(found.event_types),
            found.entity_type,
            found.entity_id,
        ):
            return WeftError(
                "conflict",
                f"subscription {row.pk} already sends these events to {url}; to get a new signing "
                "secret, unsubscribe it and subscribe again",
                details={"subscriptionId": row.pk},
                fix=fix("list_subscriptions"),
            )
    return None


def subscription_create(
    *,
    workspace: Workspace,
    url: str,
    event_types: list[str] | None = None,
    entity_type: str | None = None,
    entity_id: str | None = None,
    by_seat: Seat | None = None,
    by_connection: AgentConnection | None = None,
) -> SubscriptionCreated:
    """A new subscription with a fresh signing secret, returned this once only."""
    require_manager(workspace, by_seat=by_seat, by_connection=by_connection)
    spec = {"eventTypes": event_types, "entityType": entity_type, "entityId": entity_id}
    # The host is resolved before the transaction: no lock is held while DNS answers.
    clean_url, found = _checked(url, spec)
    secret = new_secret()
    with transaction.atomic():
        # The workspace row orders concurrent subscribes, so the limit holds at its edge.
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        if (duplicate := _duplicate_of(workspace, clean_url, found)) is not None:
            raise duplicate
        if Subscription.objects.filter(workspace=workspace).count() >= MAX_PER_WORKSPACE:
            raise _limit_reached(workspace)
        subscription = Subscription.objects.create(
            workspace=workspace,
            url=clean_url,
            event_types=list(found.event_types),
            entity_type=found.entity_type,
            entity_id=found.entity_id,
            secret_sealed=vault.seal(secret),
            created_by_user=by_seat.user if by_seat is not None else None,
            created_by_connection=by_connection,
            created_at=clock.db_now(),
        )
        _emit(subscription, "subscription.created", filter=found.as_json())
    return SubscriptionCreated(subscription=subscription, secret=secret)


def _emit(subscription: Subscription, type: str, **payload: Any) -> None:
    host = addresses.target(subscription.url, debug=True).host
    emit(
        workspace_id=subscription.workspace_id,
        type=type,
        entity_type="subscription",
        entity_id=subscription.pk,
        payload={"subscriptionId": subscription.pk, "host": host, **payload},
    )


def subscription_delete(
    *,
    subscription: Subscription,
    by_seat: Seat | None = None,
    by_connection: AgentConnection | None = None,
) -> SubscriptionDeleted:
    """The subscription and its delivery log are gone; nothing more is sent to it."""
    require_manager(subscription.workspace, by_seat=by_seat, by_connection=by_connection)
    pk, url = subscription.pk, subscription.url
    with transaction.atomic():
        deleted, _ = Subscription.objects.filter(pk=pk).delete()
        if deleted:
            _emit(subscription, "subscription.deleted")
    return SubscriptionDeleted(subscription_id=pk, url=url)


def subscription_disable(*, subscription_id: int, reason: str) -> bool:
    """Stop sending to a subscription (its receiver answered 410 Gone); False when it already was."""
    with transaction.atomic():
        now = clock.db_now()
        # Compare-and-set: two senders meeting a 410 at once disable it, and emit, once.
        changed = Subscription.objects.filter(pk=subscription_id, state=Subscription.ACTIVE).update(
            state=Subscription.DISABLED, disabled_reason=reason[:200], disabled_at=now
        )
        if not changed:
            return False
        Delivery.objects.filter(subscription_id=subscription_id, state=Delivery.PENDING).update(
            state=Delivery.FAILED, next_attempt_at=None, last_error="subscription disabled"
        )
        subscription = Subscription.objects.get(pk=subscription_id)
        _emit(subscription, "subscription.disabled", reason=subscription.disabled_reason)
    return True
