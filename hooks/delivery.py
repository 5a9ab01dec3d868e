"""Webhook deliveries: created in the relay's transaction, sent after commit, retried with backoff.

The relay hands every freshly positioned event to `deliveries_create` inside its own
transaction, so a committed event always has its deliveries (durable: a crash loses none).
Sending never runs in the request that caused the event: in production a Celery task per
delivery is queued after commit; on the embedded default (eager Celery, no worker) the
embedded timer runs `hooks.deliver_due` every few seconds instead. A sender takes a delivery
with a compare-and-set on `next_attempt_at`, so one attempt goes out per round even with many
senders; a sender that dies mid-attempt leaves it due again after IN_FLIGHT (at least once).

A round is fair to every receiver: it takes the due deliveries of up to BATCH subscriptions, at
most PER_LANE of each, and sends each subscription's in its own lane, SENDERS lanes at a time.
A lane stops at its first failed attempt and hands the rest back as due, so a hanging receiver
costs one attempt (at most sender.DEADLINE_SECONDS) of its own lane and holds no other
receiver's deliveries back; each lane's outcomes are recorded as soon as it finishes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Min

from accounts.models import Seat
from boards import clock
from hooks import sender, vault
from hooks.models import Delivery, Subscription
from hooks.rules import GONE, delivered, next_attempt, stored_filter
from hooks.services import require_manager, subscription_disable
from weft.errors import WeftError
from weft.hints import fix

log = logging.getLogger(__name__)

# Longer than a lane can take (PER_LANE attempts' deadlines): a taken delivery is not taken twice.
IN_FLIGHT = timedelta(seconds=120)
# After the broker failed to take a delivery's task in time, deliveries are not queued for this
# long (beat sends them when due): a frozen Redis then costs one write the wait, not every write.
PAUSE_SECONDS = 5.0
_queue_paused_until = 0.0
# Subscriptions per round, deliveries of one subscription per round, lanes sent at once.
BATCH = 20
PER_LANE = 10
SENDERS = 8


def deliveries_create(events: Sequence[Any], envelopes: Sequence[dict[str, Any]]) -> list[int]:
    """One pending delivery per event and matching active subscription; runs in the relay's transaction."""
    subscriptions = _active_subscriptions({event.workspace_id for event in events})
    if not subscriptions:
        return []
    now = clock.db_now()
    rows = []
    for event, envelope in zip(events, envelopes, strict=True):
        body = json.dumps(envelope, separators=(",", ":"), sort_keys=True)
        for sub in subscriptions:
            wanted = sub["workspace_id"] == event.workspace_id and stored_filter(sub).matches(
                type=event.type, entity_type=event.entity_type, entity_id=str(event.entity_id)
            )
            if wanted:
                rows.append(
                    Delivery(
                        workspace_id=event.workspace_id,
                        subscription_id=sub["pk"],
                        event_id=str(envelope["id"]),
                        event_type=event.type,
                        body=body,
                        next_attempt_at=now,
                        created_at=now,
                    )
                )
    created = Delivery.objects.bulk_create(rows)
    ids = [row.pk for row in created if row.pk is not None]
    transaction.on_commit(lambda: schedule(ids))
    return ids


# The relay asks this on every batch, mostly to hear "none": as plain SQL it costs the round trip,
# not the ORM's compile of the query (0.26 against 0.66 ms a relay on PostgreSQL).
_SUBSCRIPTION_FIELDS = ("id", "workspace_id", "event_types", "entity_type", "entity_id")


def _active_subscriptions(workspace_ids: set[int]) -> list[dict[str, Any]]:
    """The active subscriptions of these workspaces, as `values(*_SUBSCRIPTION_FIELDS)` gives them."""
    meta = Subscription._meta
    by_attname = {field.attname: field for field in meta.concrete_fields}
    fields = [by_attname[name] for name in _SUBSCRIPTION_FIELDS]
    quoted = {name: connection.ops.quote_name(str(by_attname[name].column)) for name in by_attname}
    columns = ", ".join(quoted[name] for name in _SUBSCRIPTION_FIELDS)
    ids = sorted(workspace_ids)
    marks = ", ".join(["%s"] * len(ids))
    sql = (
        f"SELECT {columns} FROM {connection.ops.quote_name(meta.db_table)} "  # noqa: S608 (names from the model)
        f"WHERE {quoted['workspace_id']} IN ({marks}) AND {quoted['state']} = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*ids, Subscription.ACTIVE])
        rows = cursor.fetchall()
    loaded = []
    for row in rows:
        values = [
            field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value
            for field, value in zip(fields, row, strict=True)
        ]
        loaded.append(dict(zip(("pk", *_SUBSCRIPTION_FIELDS[1:]), values, strict=True)))
    return loaded


def schedule(delivery_ids: Iterable[int]) -> None:
    """Queue one Celery task per delivery; with eager Celery the embedded timer sends them instead.

    This runs after the commit of the write that caused the events, so it waits for the broker at
    most WEFT_PUSH_TIMEOUT_SECONDS; a broker that did not answer in time (a frozen Redis) pauses
    queueing for PAUSE_SECONDS. Nothing is lost either way: the deliveries are rows, and beat's
    `hooks.deliver_due` sends every due one.
    """
    global _queue_paused_until
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    ids = list(delivery_ids)
    if time.monotonic() < _queue_paused_until:
        log.info("deliveries %s not queued: queueing is paused after a broker timeout", ids)
        return
    # The publish in a thread of its own, so a broker that never answers cannot hold the request.
    publisher = threading.Thread(target=_queue, args=(ids,), daemon=True, name="weft-delivery-queue")
    publisher.start()
    publisher.join(settings.WEFT_PUSH_TIMEOUT_SECONDS)
    if publisher.is_alive():
        _queue_paused_until = time.monotonic() + PAUSE_SECONDS
        log.warning("deliveries %s: the broker did not answer; queueing paused for %ss", ids, PAUSE_SECONDS)


def _queue(ids: list[int]) -> None:
    from hooks.tasks import deliver

    try:
        for pk in ids:
            deliver.delay(pk)
    except Exception:
        log.exception("deliveries %s not queued; beat sends them when due", ids)


@dataclass(frozen=True)
class Job:
    delivery_id: int
    subscription_id: int
    url: str
    secret: str
    message_id: str
    body: str
    # When it was due, and until when this sender holds it (to hand it back untried).
    due_at: Any = None
    held_until: Any = None


def _take(pk: int, due_at: Any, until: Any) -> bool:
    """Compare-and-set: this sender takes the delivery unless another one did first."""
    taken = Delivery.objects.filter(pk=pk, state=Delivery.PENDING, next_attempt_at=due_at).update(
        next_attempt_at=until
    )
    return taken == 1


def _release(job: Job) -> None:
    """Hand an untried delivery back as due when it was (unless something else changed it)."""
    Delivery.objects.filter(
        pk=job.delivery_id, state=Delivery.PENDING, next_attempt_at=job.held_until
    ).update(next_attempt_at=job.due_at)


def deliveries_take(
    *, ids: Sequence[int] | None = None, limit: int = BATCH, per_lane: int = PER_LANE
) -> list[list[Job]]:
    """Due deliveries of active subscriptions (all due ones, or those of `ids`), taken by this
    sender: one lane per subscription, the subscriptions due longest first."""
    now = clock.db_now()
    due = Delivery.objects.filter(
        state=Delivery.PENDING, next_attempt_at__lte=now, subscription__state=Subscription.ACTIVE
    )
    if ids is not None:
        due = due.filter(pk__in=list(ids))
    oldest = (
        due.values("subscription_id")
        .annotate(first=Min("next_attempt_at"))
        .order_by("first", "subscription_id")
    )
    lanes = []
    for subscription_id in [row["subscription_id"] for row in oldest[:limit]]:
        rows = due.filter(subscription_id=subscription_id).select_related("subscription")
        lane = [_job(row, now) for row in rows.order_by("next_attempt_at", "pk")[:per_lane]]
        taken = [job for job in lane if _take(job.delivery_id, job.due_at, job.held_until)]
        if taken:
            lanes.append(taken)
    return lanes


def _job(row: Delivery, now: Any) -> Job:
    subscription = row.subscription
    return Job(
        row.pk,
        row.subscription_id,
        subscription.url,
        vault.unseal(subscription.secret_sealed),
        row.message_id,
        row.body,
        due_at=row.next_attempt_at,
        held_until=now + IN_FLIGHT,
    )


def _attempt(job: Job) -> sender.Outcome:
    return sender.send(
        url=job.url,
        secret=job.secret,
        message_id=job.message_id,
        body=job.body,
        timestamp=int(time.time()),
        debug=settings.DEBUG,
    )


def delivery_record(job: Job, outcome: sender.Outcome) -> str:
    """Write an attempt's outcome: delivered, due again on the backoff, failed; a 410 disables.

    Returns the delivery's new state, or "" when its subscription was deleted while it was sent.
    """
    with transaction.atomic():
        now = clock.db_now()
        row = Delivery.objects.select_for_update().filter(pk=job.delivery_id).first()
        if row is None:
            return ""  # unsubscribed meanwhile: the delivery log went with the subscription
        state, failures, due = Delivery.DELIVERED, row.failures, None
        if not delivered(outcome.status):
            failures += 1
            due = None if outcome.status == GONE else next_attempt(failures=failures, now=now)
            state = Delivery.PENDING if due is not None else Delivery.FAILED
        Delivery.objects.filter(pk=row.pk).update(
            state=state,
            attempts=F("attempts") + 1,
            failures=failures,
            next_attempt_at=due,
            last_attempt_at=now,
            last_status_code=outcome.status,
            last_error=outcome.error,
            last_latency_ms=outcome.latency_ms,
        )
        if outcome.status == GONE:
            subscription_disable(
                subscription_id=job.subscription_id, reason=f"the receiver answered {GONE} Gone"
            )
    return state


def _lane(jobs: list[Job]) -> list[sender.Outcome]:
    """One subscription's attempts, in order, until the first that fails (a worker thread: no ORM)."""
    outcomes: list[sender.Outcome] = []
    for job in jobs:
        try:
            outcome = _attempt(job)
        except Exception as exc:  # a sender bug must not lose the lane's other outcomes
            log.exception("webhook attempt of delivery %s failed", job.delivery_id)
            outcome = sender.Outcome(None, f"internal error: {type(exc).__name__}", 0)
        outcomes.append(outcome)
        if not delivered(outcome.status):
            break
    return outcomes


def deliveries_send(*, ids: Sequence[int] | None = None) -> int:
    """Send the due deliveries (of `ids`, or any), lane by lane in parallel; returns the attempts made.

    Attempts run in worker threads; their outcomes are written here, lane by lane as each ends.
    """
    lanes = deliveries_take(ids=ids)
    if not lanes:
        return 0
    attempts = 0
    with ThreadPoolExecutor(max_workers=min(SENDERS, len(lanes))) as pool:
        running = {pool.submit(_lane, lane): lane for lane in lanes}
        for future in as_completed(running):
            lane, outcomes = running[future], future.result()
            for job, outcome in zip(lane, outcomes, strict=False):
                delivery_record(job, outcome)
            for job in lane[len(outcomes) :]:
                _release(job)
            attempts += len(outcomes)
    return attempts


def delivery_redeliver(*, delivery: Delivery, by_seat: Seat) -> Delivery:
    """Send a delivery again, with the same webhook-id, on the sender's next round."""
    subscription = delivery.subscription
    require_manager(subscription.workspace, by_seat=by_seat, by_connection=None)
    if subscription.state != Subscription.ACTIVE:
        raise WeftError(
            "conflict",
            f"subscription {subscription.pk} is disabled: {subscription.disabled_reason}",
            details={"subscriptionId": subscription.pk},
            fix=fix("list_subscriptions"),
        )
    with transaction.atomic():
        Delivery.objects.filter(pk=delivery.pk).update(
            state=Delivery.PENDING, failures=0, next_attempt_at=clock.db_now()
        )
        transaction.on_commit(lambda: schedule([delivery.pk]))
    delivery.refresh_from_db()
    return delivery
