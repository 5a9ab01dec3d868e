"""The event log: every write appends its events in its own transaction; one relay orders them.

Writing. `emit()` inserts the event with no position (`position` NULL) inside the writer's
transaction and touches no shared row, so writers of one workspace never queue on the log. A
rolled-back writer leaves no event behind.

Ordering. The relay (`relay()`) gives committed events their position, in commit order. It runs
after every emitting transaction commits (`transaction.on_commit`) and, as a backstop for a
process that died between its commit and its relay, from a periodic job (`weft.events.relay`,
every few seconds). Each relay batch is one short transaction of its own: on PostgreSQL it tries
`pg_try_advisory_xact_lock(RELAY_LOCK)` (only relays take it, never writers), and a relay that
finds it taken stops at once, leaving the work to the holder, so no writer's request ever queues
on the lock. The holder looks for unpositioned events again after each batch commits (and so
after it released the lock) and goes on until it finds none: a writer that found the lock taken
had committed before it tried, so the holder's next look sees its events. Once it has the lock,
a second statement, whose snapshot is therefore taken after the previous relay committed, sets
`position = nextval('weft_event_position')` on the unpositioned rows it can see, in id order.
A relay that dies mid-way rolls its batch back and releases the lock: its events, and those of
writers that left the work to it, stay unpositioned (never lost) until the next writer's relay
or the periodic one.
An uncommitted event is invisible to that statement, so an event that commits late is
positioned by a later relay and gets a later position: a reader that has moved past position N
never has an event appear below N. Positions are global, unique and increasing, with gaps
allowed (a rolled-back relay spends sequence values); on SQLite, where writers serialize
anyway, the relay's IMMEDIATE transaction takes max(position) + 1, 2, ...

Per-entity order is exact: the writers of one task (or run) serialize on its row (a
compare-and-set UPDATE or SELECT ... FOR UPDATE) before they emit, so the later writer inserts
its event, and takes its id, only after the earlier one committed. Its id is larger and it is
committed later, and the relay positions in id order among what has committed, so one entity's
events are positioned in the order their writers committed.

Relaying from the event loop. Code in the server's event loop that commits events in its own SQL
(the one-statement claim and completion on weft.apool) calls `weft.relay_loop.relay_soon()`: the
same protocol, run in the loop on the loop's pool, coalesced, while the answer goes out (see
that module). As everywhere, a write answers without waiting for its events' positions.

Relay hooks. `register_relay_hook(fn, acts_on=)`: `fn(events)` is called with each freshly
positioned batch (in position order) INSIDE the relay's transaction, so a consumer can write rows
of its own (webhook deliveries) atomically with the positions. A hook that raises rolls the batch
back: the events stay unpositioned and the next relay tries again, so hooks must only write
rows and never wait on the network. `acts_on()` gives an SQL condition on an event row `e` that
holds for every event the hook would act on (it may hold for more): the loop's relay positions a
batch by itself when no hook's condition holds for any of its events, and hands it to `relay()`
otherwise. A hook without one sends every batch to `relay()`.

Fan-out. `register_fanout(fn)`: `fn(event)` is called for every event after the relay that
positioned it has committed (web socket pushes), exactly once, from whichever process relayed
it; a failing consumer never fails the write or the relay.

Reading (webhooks, the SSE stream):
- `read(workspace_id=, after=, limit=, types=, entity_type=, entity_id=)` -> positioned events
  with position > `after`, in position order. Cursors are positions; start from 0.
- `oldest_position(workspace_id)` -> the lowest position the workspace still holds, or None.
- `newest_position()` -> the log's newest position (0 when empty): a reader that starts from now.
- `trimmed_through()` -> every position at or below it is gone; a cursor below it is older than
  retention (send `gap`); resume such a reader from it.
- `envelope(event)` -> the public payload `{id, type, workspace, entity: {type, id}, occurredAt,
  data}` (id: the position as a string; workspace: the workspace's slug).
- `trim(older_than=RETENTION)`, daily: deletes positioned events older than retention.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, timedelta
from functools import cache, partial
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, models, transaction
from django.db.models import Max, Min, signals
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute
from django.utils import timezone

from accounts.models import Workspace
from weft.models import Event

log = logging.getLogger(__name__)

Fanout = Callable[[Event], None]
RelayHook = Callable[[list[Event]], None]
# An SQL condition on the event row `e`: true for every event the hook would act on.
ActsOn = Callable[[], str]
_fanouts: list[Fanout] = []
_relay_hooks: dict[RelayHook, ActsOn | None] = {}

RELAY_BATCH = 500
RELAY_LOCK = 0x7765667472656C61  # "weftrela": the advisory lock key only relays take
SEQUENCE = "weft_event_position"
READ_LIMIT = 1000
RETENTION = timedelta(days=7)
TRIM_BATCH = 5000


def register_fanout(fn: Fanout) -> None:
    """Call `fn(event)` once the event is positioned and committed (registering twice is harmless)."""
    if fn not in _fanouts:
        _fanouts.append(fn)


def unregister_fanout(fn: Fanout) -> None:
    if fn in _fanouts:
        _fanouts.remove(fn)


def register_relay_hook(fn: RelayHook, *, acts_on: ActsOn | None = None) -> None:
    """Call `fn(events)` with each positioned batch inside the relay's transaction (see above)."""
    _relay_hooks.setdefault(fn, acts_on)


def unregister_relay_hook(fn: RelayHook) -> None:
    _relay_hooks.pop(fn, None)


def relay_hook_conditions() -> list[str] | None:
    """Each hook's condition (see above), or None when a hook has none."""
    conditions = []
    for acts_on in list(_relay_hooks.values()):
        if acts_on is None:
            return None
        conditions.append(acts_on())
    return conditions


def emit(
    *,
    workspace_id: int,
    type: str,
    entity_type: str,
    entity_id: object,
    payload: Mapping[str, Any],
    epoch: int | None = None,
) -> Event:
    """Append one unpositioned event to the log; must run inside the writer's transaction."""
    if not connection.in_atomic_block:
        raise RuntimeError("emit() must run inside the writer's transaction")
    event = Event.objects.create(
        workspace_id=workspace_id,
        type=type,
        entity_type=entity_type,
        entity_id=str(entity_id),
        payload=dict(payload),
        epoch=epoch,
    )
    schedule_relay()
    return event


def schedule_relay() -> None:
    """Position this transaction's events once it commits; a writer that inserts event rows in
    its own SQL (position NULL) calls this inside its transaction, as `emit()` does."""
    # One callback per event: the first positions the whole transaction's events, the others
    # find nothing waiting and stop after one indexed probe.
    transaction.on_commit(relay_after_commit)


def relay_after_commit() -> None:
    try:
        relay()
    except Exception:
        # The write has committed; the periodic relay positions what this one could not.
        log.exception("relay after commit failed; the periodic relay will position the events")


def relay(*, batch: int = RELAY_BATCH) -> list[Event]:
    """Position every committed, unpositioned event, in id order; returns them in position order.

    Returns at once (with what it positioned so far) when another relay holds the lock: that
    relay looks again after it commits, so it positions what this one would have.
    """
    positioned: list[Event] = []
    # Looked at again after every batch commits, a short one too: an event whose writer found
    # the lock taken while this relay held it has committed by now and is seen here.
    while _waiting():
        with transaction.atomic():
            events = _position_batch(batch)
            if events is None:
                break
            if events:
                for hook in list(_relay_hooks):
                    hook(events)
                transaction.on_commit(partial(fan_out, events))
        positioned += events
    return positioned


def _waiting() -> bool:
    """Whether a committed event waits for its position (the partial index `event_unpositioned`)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {EVENT_TABLE} WHERE position IS NULL LIMIT 1")  # noqa: S608
        return cursor.fetchone() is not None


def _position_batch(batch: int) -> list[Event] | None:
    """One batch positioned in the caller's transaction; None when another relay holds the lock."""
    table = connection.ops.quote_name(Event._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [RELAY_LOCK])
            if not cursor.fetchone()[0]:
                return None
            # A new statement, a new snapshot: it sees every event committed before the lock.
            # nextval() in the select list runs after ORDER BY and LIMIT (PostgreSQL's SELECT
            # reference), so positions follow id order; the CTE is evaluated once.
            # The batch comes back with its workspaces, as the hooks and the fan-out read them: one
            # round trip, and no query for the ORM to compile on every relay.
            cursor.execute(_POSITION_AND_READ, [batch])
            return events_from_rows(cursor.fetchall())
        else:
            # The IMMEDIATE transaction holds SQLite's one write lock: no writer commits meanwhile.
            cursor.execute(f"SELECT COALESCE(MAX(position), 0) FROM {table}")  # noqa: S608
            (base,) = cursor.fetchone()
            cursor.execute(
                f"WITH batch AS MATERIALIZED (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n "  # noqa: S608
                f"FROM {table} WHERE position IS NULL ORDER BY id LIMIT %s) "
                f"UPDATE {table} SET position = %s + batch.n FROM batch WHERE {table}.id = batch.id "
                "RETURNING id",
                [batch, base],
            )
        ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return []
    return list(Event.objects.filter(pk__in=ids).select_related("workspace").order_by("position"))


def columns_of(model: type[models.Model], alias: str) -> str:
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)


EVENT_TABLE = Event._meta.db_table
_POSITION_AND_READ = (
    f"WITH batch AS (SELECT id, nextval('{SEQUENCE}') AS position FROM {EVENT_TABLE} "  # noqa: S608
    "WHERE position IS NULL ORDER BY id LIMIT %s), "
    f"moved AS (UPDATE {EVENT_TABLE} e SET position = batch.position FROM batch WHERE e.id = batch.id "
    f"RETURNING {columns_of(Event, 'e')}) "
    f"SELECT {columns_of(Event, 'moved')}, {columns_of(Workspace, 'w')} FROM moved "
    f"JOIN {Workspace._meta.db_table} w ON w.id = moved.workspace_id ORDER BY moved.position"
)


def instance_from_row(model: type[models.Model], values: Sequence[Any]) -> Any:
    """An instance of `model` from its columns at the start of `values` (`columns_of`'s order), as
    the ORM would load it: each column converted as its field converts it. jsonb read as text is
    decoded here; read decoded already (the event loop's pool), it is taken as it is."""
    attnames, converting, direct = row_loading(model)
    loaded = list(values[: len(attnames)])
    if len(loaded) != len(attnames):
        raise ValueError(f"{model.__name__}: {len(loaded)} values for {len(attnames)} columns")
    for at, field in converting:
        if not (isinstance(field, models.JSONField) and not isinstance(loaded[at], str)):
            loaded[at] = field.from_db_value(loaded[at], None, connection)
    if not _fillable(model, direct):
        return model.from_db(DEFAULT_DB_ALIAS, attnames, loaded)
    return _filled(model, zip(attnames, loaded, strict=True))


def attach(instance: models.Model, name: str, related: models.Model) -> None:
    """`instance.<name> = related` for a forward foreign key of an instance built here: the key's
    column and the cached object set as the field's descriptor sets them, without its checks (the
    related object's type, the databases' routing) that a freshly built pair passes anyway."""
    attname, target, cache_name = _link(type(instance), name)
    instance.__dict__[attname] = getattr(related, target)
    instance._state.fields_cache[cache_name] = related


@cache
def _link(model: type[models.Model], name: str) -> tuple[str, str, str]:
    field = model._meta.get_field(name)
    if not (field.many_to_one and isinstance(field, models.ForeignKey)):
        raise ValueError(f"{model.__name__}.{name} is not a forward foreign key")
    return field.attname, field.target_field.attname, field.cache_name


def partial_instance(model: type[models.Model], values: dict[str, Any]) -> Any:
    """An instance of `model` with only `values` (by attribute name) loaded and every other column
    deferred, as `Model.from_db` leaves one given those columns alone, without `Model.__init__`'s
    pass over every field. Reading a deferred column loads it, as on any deferred instance."""
    attnames, _, direct = row_loading(model)
    unknown = values.keys() - _columns(model)
    if unknown:
        raise ValueError(f"{model.__name__} has no columns {sorted(unknown)}")
    if not _fillable(model, direct):
        names = [name for name in attnames if name in values]
        return model.from_db(DEFAULT_DB_ALIAS, names, [values[name] for name in names])
    return _filled(model, values.items())


@cache
def _columns(model: type[models.Model]) -> frozenset[str]:
    return frozenset(row_loading(model)[0])


def _fillable(model: type[models.Model], direct: bool) -> bool:
    """Whether an instance may be filled directly: `row_loading` says so and no init listener waits
    (looked up per model only while some init listener is connected at all)."""
    if not direct:
        return False
    if not (signals.pre_init.receivers or signals.post_init.receivers):
        return True
    return not (signals.pre_init.has_listeners(model) or signals.post_init.has_listeners(model))


def _filled(model: type[models.Model], values: Iterable[tuple[str, Any]]) -> Any:
    """What Model.__init__ and from_db leave on a fresh instance, without a setattr per column."""
    instance = model.__new__(model)
    state = instance._state = ModelState()
    state.adding, state.db = False, DEFAULT_DB_ALIAS
    instance.__dict__.update(values)
    return instance


# The class attributes under which a loaded value may go straight into the instance's __dict__:
# setting them on a fresh instance does nothing else (a foreign key's id clears a cache still empty).
_PLAIN_ATTRIBUTES = (DeferredAttribute, ForeignKeyDeferredAttribute)


@cache
def row_loading(model: type[models.Model]) -> tuple[list[str], tuple[tuple[int, Any], ...], bool]:
    """A model's column names, the columns a value read from the database is converted for, and
    whether an instance can be filled directly (every column's attribute plain, no __init__ or
    from_db of its own)."""
    fields = model._meta.concrete_fields
    converting = tuple((at, f) for at, f in enumerate(fields) if hasattr(f, "from_db_value"))
    direct = (
        model.__init__ is models.Model.__init__
        and model.from_db.__func__ is models.Model.from_db.__func__  # type: ignore[attr-defined]
        and all(type(getattr(model, f.attname, None)) in _PLAIN_ATTRIBUTES for f in fields)
    )
    return [f.attname for f in fields], converting, direct


def events_from_rows(rows: Iterable[Sequence[Any]]) -> list[Event]:
    """Events and their workspaces from rows of their columns (`columns_of`), JSON as text. The
    events of one workspace share one Workspace instance: a batch is mostly one workspace's."""
    width = len(Event._meta.concrete_fields)
    workspaces: dict[Any, Workspace] = {}
    built = []
    for row in rows:
        event: Event = instance_from_row(Event, row)
        workspace = workspaces.get(event.workspace_id)
        if workspace is None:
            workspace = workspaces[event.workspace_id] = instance_from_row(Workspace, row[width:])
        attach(event, "workspace", workspace)
        built.append(event)
    return built


def fan_out(events: list[Event]) -> None:
    """Each event to every fan-out consumer, once the relay that positioned it has committed."""
    for event in events:
        for fn in list(_fanouts):
            try:
                fn(event)
            except Exception:
                log.exception("event fan-out %r failed for %s", fn, event)


def read(
    *,
    workspace_id: int,
    after: int,
    limit: int,
    types: Collection[str] | None = None,
    entity_type: str | None = None,
    entity_id: object | None = None,
) -> list[Event]:
    """The workspace's positioned events after the cursor `after`, oldest first, at most `limit`."""
    events = Event.objects.filter(workspace_id=workspace_id, position__gt=after)
    if types:
        events = events.filter(type__in=list(types))
    if entity_type is not None:
        events = events.filter(entity_type=entity_type)
    if entity_id is not None:
        events = events.filter(entity_id=str(entity_id))
    limit = max(1, min(limit, READ_LIMIT))
    return list(events.select_related("workspace").order_by("position")[:limit])


def oldest_position(workspace_id: int) -> int | None:
    """The lowest position the workspace's log still holds; None when it holds none."""
    held = Event.objects.filter(workspace_id=workspace_id, position__isnull=False)
    return held.aggregate(p=Min("position"))["p"]


def newest_position() -> int:
    """The log's newest position (0 when empty): the cursor of a reader that starts from now.

    Positions are global and given in commit order, so every event of any workspace that is
    positioned later is above it.
    """
    newest = Event.objects.filter(position__isnull=False).aggregate(p=Max("position"))["p"]
    return int(newest or 0)


def trimmed_through() -> int:
    """Every position at or below this one is gone from the log (0 when nothing was trimmed).

    `trim()` deletes from the bottom of the log and always keeps its newest event, so the lowest
    position held marks the trim. A deleted workspace takes its events with it and may raise that
    mark: a cursor below it is then told it is older than retention, which only makes the
    reader re-sync.
    """
    lowest = Event.objects.filter(position__isnull=False).aggregate(p=Min("position"))["p"]
    return 0 if lowest is None else lowest - 1


def envelope(event: Event) -> dict[str, Any]:
    """The public payload of a positioned event, as webhooks and the stream send it."""
    if event.position is None:
        raise ValueError("only a positioned event has a public id")
    occurred = event.created_at.astimezone(UTC).isoformat(timespec="milliseconds")
    return {
        "id": str(event.position),
        "type": event.type,
        "workspace": event.workspace.slug,
        "entity": {"type": event.entity_type, "id": event.entity_id},
        "occurredAt": occurred.replace("+00:00", "Z"),
        "data": event.payload,
    }


def trim(*, older_than: timedelta = RETENTION, batch: int = TRIM_BATCH) -> int:
    """Delete positioned events older than `older_than` from the bottom of the log; returns how many.

    The log is cut just below its first event still within retention (an old event positioned
    above that one stays until a later trim), and its newest event always stays (see
    trimmed_through), so only events older than retention go.
    """
    cutoff = timezone.now() - older_than
    held = Event.objects.filter(position__isnull=False).order_by("position")
    positions = held.values_list("position", flat=True)
    newest = positions.last()
    if newest is None:
        return 0
    first_kept = positions.filter(created_at__gte=cutoff).first()
    keep_from = newest if first_kept is None else first_kept
    deleted = 0
    while doomed := list(
        Event.objects.filter(position__lt=keep_from).order_by("position").values_list("pk", flat=True)[:batch]
    ):
        deleted += Event.objects.filter(pk__in=doomed).delete()[0]
    return deleted
