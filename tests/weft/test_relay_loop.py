"""The event loop's relay (weft/relay_loop.py) on PostgreSQL: the protocol of weft.events run on
the loop's pool. It positions in id order and fans out each event once; it steps aside, writing
nothing, when a relay hook would act on a batch, so webhook deliveries, push messages and issue
resolutions are still written in the relay's transaction; it leaves the work to a relay that
holds the lock; and it keeps the writers' commit order when it runs beside the threads' relays.

The loop's pool commits on its own connections, so these tests run with real transactions.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection, transaction
from django.test import override_settings
from psycopg.pq import TransactionStatus

from accounts.models import Workspace
from boards.models import Task
from boards.services import task_create
from hooks import vault
from hooks.models import Delivery, Subscription
from hooks.signing import new_secret
from tests.boards.helpers import race
from weft import apool, events, relay_loop
from weft.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]


def in_loop[T](make: Callable[[], Awaitable[T]]) -> T:
    async def run() -> T:
        try:
            return await make()
        finally:
            await apool.close_pool()

    return asyncio.run(run())


def committed(ws: Workspace, type: str = "loop.test", **payload: Any) -> Event:
    """An event committed as the loop's own statements commit theirs: no relay after it."""
    return Event.objects.create(workspace=ws, type=type, entity_type="task", entity_id="1", payload=payload)


def unpositioned() -> list[int]:
    return sorted(Event.objects.filter(position__isnull=True).values_list("pk", flat=True))


@pytest.fixture
def clean_log(on_postgres: None, ws_a: Workspace, ws_b: Workspace) -> None:
    events.relay()


@pytest.fixture
def fanned() -> Iterator[list[Event]]:
    seen: list[Event] = []
    lock = threading.Lock()

    def fan(event: Event) -> None:
        with lock:
            seen.append(event)

    events.register_fanout(fan)
    try:
        yield seen
    finally:
        events.unregister_fanout(fan)


def test_it_positions_in_id_order_and_fans_out_each_event_once(clean_log, ws_a, ws_b, fanned):
    made = [committed(ws_a, n=1), committed(ws_b, n=2), committed(ws_a, text="zero\u00a0width")]
    relayed = in_loop(relay_loop.relay_in_loop)
    assert [e.pk for e in relayed] == [e.pk for e in made]
    positions = [e.position for e in relayed]
    assert None not in positions
    assert positions == sorted(p for p in positions if p is not None)
    assert [(e.pk, e.position) for e in fanned] == [(e.pk, e.position) for e in relayed]
    assert [e.workspace.pk for e in relayed] == [ws_a.pk, ws_b.pk, ws_a.pk]
    assert relayed[0].workspace is relayed[2].workspace  # one instance a workspace in a batch
    # What the loop read back is what the ORM reads: payload, workspace, instants.
    for event in relayed:
        stored = Event.objects.select_related("workspace").get(pk=event.pk)
        assert events.envelope(event) == events.envelope(stored)
    assert unpositioned() == []


def test_it_relays_in_batches_until_nothing_waits(clean_log, ws_a):
    made = [committed(ws_a, n=i) for i in range(7)]
    relayed = in_loop(lambda: relay_loop.relay_in_loop(batch=3))
    assert [e.pk for e in relayed] == [e.pk for e in made]
    assert unpositioned() == []


@pytest.mark.parametrize("later", [False, True], ids=["alone", "the pump's"])
def test_events_committed_during_a_short_batch_wait_for_the_pumps_next_run(
    clean_log, ws_a, monkeypatch, later
):
    """A batch short of the limit, and an event committed while it was relayed: a relay on its
    own relays it at once; the pump's leaves it to the pump's next run (`later`), which it asks for."""
    first = committed(ws_a, n=1)
    read = events.events_from_rows
    meanwhile: list[Event] = []

    def reading(rows: Any) -> list[Event]:
        if not meanwhile:  # another writer (a thread of its own) commits while the batch is relayed

            def write() -> None:
                meanwhile.append(committed(ws_a, n=2))
                connection.close()

            writer = threading.Thread(target=write)
            writer.start()
            writer.join()
        return read(rows)

    monkeypatch.setattr(events, "events_from_rows", reading)
    asked: list[bool] = []
    relayed = in_loop(lambda: relay_loop.relay_in_loop(later=(lambda: asked.append(True)) if later else None))
    if later:
        assert ([e.pk for e in relayed], asked, unpositioned()) == ([first.pk], [True], [meanwhile[0].pk])
    else:
        assert ([e.pk for e in relayed], asked, unpositioned()) == ([first.pk, meanwhile[0].pk], [], [])


def test_it_leaves_the_work_to_the_relay_that_holds_the_lock(clean_log, ws_a):
    event = committed(ws_a)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [events.RELAY_LOCK])

        async def relay_then_look() -> tuple[list[Event], Any]:
            relayed = await relay_loop.relay_in_loop()
            async with apool.connection() as conn:  # the pool's one connection, given back idle
                status = conn.info.transaction_status
            return relayed, status

        relayed, status = in_loop(relay_then_look)
    assert relayed == []
    assert status == TransactionStatus.IDLE  # its BEGIN was rolled back before the connection went back
    assert unpositioned() == [event.pk]


class Hook:
    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, batch: list[Event]) -> None:
        self.seen += [e.pk for e in batch]


@pytest.fixture
def hook() -> Iterator[Hook]:
    hook = Hook()
    events.register_relay_hook(hook, acts_on=lambda: "e.type = 'loop.hooked'")
    try:
        yield hook
    finally:
        events.unregister_relay_hook(hook)


def test_it_writes_nothing_when_a_hook_acts_and_the_thread_relay_runs_the_hook(clean_log, ws_a, hook):
    plain, hooked = committed(ws_a), committed(ws_a, type="loop.hooked")
    with pytest.raises(relay_loop.HooksAct):
        in_loop(relay_loop.relay_in_loop)
    assert unpositioned() == [plain.pk, hooked.pk]  # nothing moved: the batch is the hook's relay's
    in_loop(relay_loop._relay)  # what the pump runs: the loop steps aside, the thread relays
    assert unpositioned() == []
    assert hook.seen == [plain.pk, hooked.pk]  # the hook saw the batch, inside its transaction


def test_it_relays_by_itself_when_no_hook_acts(clean_log, ws_a, hook):
    event = committed(ws_a)
    assert [e.pk for e in in_loop(relay_loop.relay_in_loop)] == [event.pk]
    assert hook.seen == []


def test_a_hook_without_a_condition_sends_every_batch_to_the_thread_relay(clean_log, ws_a):
    seen: list[int] = []

    def plain_hook(batch: list[Event]) -> None:
        seen.extend(e.pk for e in batch)

    events.register_relay_hook(plain_hook)
    try:
        event = committed(ws_a)
        with pytest.raises(relay_loop.HooksAct):
            in_loop(relay_loop.relay_in_loop)
        in_loop(relay_loop._relay)
    finally:
        events.unregister_relay_hook(plain_hook)
    assert seen == [event.pk]
    assert unpositioned() == []


def test_a_workspace_with_a_webhook_gets_its_deliveries(clean_log, ws_a, ws_b):
    Subscription.objects.create(
        workspace=ws_a,
        url="https://hooks.example.com/loop",
        event_types=["loop.test"],
        secret_sealed=vault.seal(new_secret()),
    )
    ours, theirs = committed(ws_a), committed(ws_b)
    with pytest.raises(relay_loop.HooksAct):  # ws_a's subscription: the batch is the hook's
        in_loop(relay_loop.relay_in_loop)
    in_loop(relay_loop._relay)
    assert unpositioned() == []
    delivered = Delivery.objects.values_list("workspace_id", "event_id")
    assert list(delivered) == [(ws_a.pk, str(Event.objects.get(pk=ours.pk).position))]
    # ws_b has none: its events alone never leave the loop.
    committed(ws_b)
    assert len(in_loop(relay_loop.relay_in_loop)) == 1
    assert Event.objects.get(pk=theirs.pk).position is not None


def test_a_disabled_webhook_does_not_act(clean_log, ws_a):
    Subscription.objects.create(
        workspace=ws_a,
        url="https://hooks.example.com/off",
        state=Subscription.DISABLED,
        secret_sealed=vault.seal(new_secret()),
    )
    committed(ws_a)
    assert len(in_loop(relay_loop.relay_in_loop)) == 1


@pytest.mark.parametrize(
    ("type", "payload", "vapid", "acts"),
    [
        ("inbox.item_created", {}, "key", True),
        ("inbox.item_created", {}, "", False),
        ("inbox.item_decided", {"decision": "accept"}, "", True),
        ("inbox.item_decided", {"decision": "rework"}, "", False),
    ],
)
def test_push_and_issue_hooks_act_on_their_events(clean_log, ws_a, type, payload, vapid, acts):
    committed(ws_a, type=type, **payload)
    with override_settings(WEFT_VAPID_PRIVATE_KEY=vapid):
        if acts:
            with pytest.raises(relay_loop.HooksAct):
                in_loop(relay_loop.relay_in_loop)
        else:
            assert len(in_loop(relay_loop.relay_in_loop)) == 1


def _count_and_commit(counter_id: int, ws: Workspace, rounds: int, *, relay_in_thread: bool) -> None:
    """A writer: lock the workspace's counter row, count, commit an event naming the count."""
    for _ in range(rounds):
        with transaction.atomic():
            counter = Task.objects.select_for_update().get(pk=counter_id)
            n = int(counter.description or "0") + 1
            Task.objects.filter(pk=counter_id).update(description=str(n))
            if relay_in_thread:
                events.emit(
                    workspace_id=ws.pk, type="loop.counted", entity_type="task", entity_id=0, payload={"n": n}
                )
            else:
                committed(ws, type="loop.counted", n=n)
    connection.close()


def test_beside_the_threads_relays_every_event_is_positioned_once_in_commit_order(
    clean_log, ws_a, ws_b, alice, fanned
):
    counters = {ws.pk: task_create(workspace=ws, title="Counter", by_user=alice).task for ws in (ws_a, ws_b)}
    Task.objects.filter(pk__in=[t.pk for t in counters.values()]).update(description="0")
    events.relay()
    writers, rounds = 8, 15
    stop = threading.Event()

    async def loop_relays() -> None:
        while not stop.is_set():
            await relay_loop.relay_in_loop(batch=5)
            await asyncio.sleep(0.001)
        await relay_loop.relay_in_loop()

    relayer = threading.Thread(target=lambda: in_loop(loop_relays))
    relayer.start()
    try:
        outcomes = race(
            [(ws_a if i % 2 else ws_b, i % 4 == 0) for i in range(writers)],
            lambda w: _count_and_commit(counters[w[0].pk].pk, w[0], rounds, relay_in_thread=w[1]),
        )
    finally:
        stop.set()
        relayer.join(30)
    assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
    made = Event.objects.filter(type="loop.counted")
    assert made.count() == writers * rounds
    assert unpositioned() == []
    counted = [e.pk for e in fanned if e.type == "loop.counted"]
    assert Counter(counted) == Counter(made.values_list("pk", flat=True))  # each fanned out once
    for ws in (ws_a, ws_b):
        relayed = events.read(workspace_id=ws.pk, after=0, limit=1000, types=["loop.counted"])
        assert [e.payload["n"] for e in relayed] == list(range(1, writers // 2 * rounds + 1))


def test_a_relay_whose_connection_dies_midway_loses_nothing(clean_log, ws_a, monkeypatch):
    """The backend is terminated between the lock and the positions: the relay fails, the pool
    drops the connection, and the next relay positions every event on a new one."""
    made = [committed(ws_a, n=1), committed(ws_a, n=2)]
    real_scalar = relay_loop._scalar
    killed: list[int] = []

    async def killing_after_the_lock(cursor: Any, sql: str) -> Any:
        value = await real_scalar(cursor, sql)
        if sql == relay_loop._LOCK and not killed:
            killed.append(cursor.connection.info.backend_pid)
            with psycopg.connect(**apool.conninfo(), autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", [killed[0]])
        return value

    monkeypatch.setattr(relay_loop, "_scalar", killing_after_the_lock)

    async def relay_twice() -> tuple[list[int], int]:
        with pytest.raises(psycopg.OperationalError):
            await relay_loop.relay_in_loop()
        assert unpositioned_now() == [e.pk for e in made]
        relayed = await relay_loop.relay_in_loop()
        async with apool.connection() as conn:
            pid = conn.info.backend_pid
        return [e.pk for e in relayed], pid

    relayed, pid = in_loop(relay_twice)
    assert killed and pid != killed[0]
    assert relayed == [e.pk for e in made]
    assert unpositioned() == []


def unpositioned_now() -> list[int]:
    """`unpositioned()` from inside the event loop, on a connection of its own."""
    with psycopg.connect(**apool.conninfo()) as conn:
        sql = f"SELECT id FROM {events.EVENT_TABLE} WHERE position IS NULL ORDER BY id"
        rows = conn.execute(sql).fetchall()
    return [row[0] for row in rows]
