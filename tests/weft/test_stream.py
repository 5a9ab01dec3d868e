"""The SSE event stream under uvicorn: auth, filters, resume without loss or duplicates, gap, isolation.

The server runs in a thread of this process on a free port (tests/web/test_browser.py's
LiveServer, on a file database under SQLite); httpx reads the stream as a client would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
import pytest
import time_machine
from django.db import connections, transaction
from django.utils import timezone
from oauth2_provider.models import AccessToken

from accounts.connections import connection_revoke
from accounts.models import User, Workspace
from tests.mcp.harness import agent_token
from tests.web.test_browser import LiveServer, file_database  # noqa: F401  (a fixture)
from weft import events
from weft.models import Event
from weft.stream import STREAM_PATH
from weft.stream.feed import Item, Subscriber
from weft.stream.request import StreamFilter

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
TIMEOUT = httpx.Timeout(10.0)


@dataclass
class Block:
    """One SSE block: its fields and the comment lines before it."""

    id: str | None = None
    event: str | None = None
    data: dict[str, Any] | None = None
    comments: list[str] = field(default_factory=list)


def blocks(response: httpx.Response) -> Iterator[Block]:
    block = Block()
    for line in response.iter_lines():
        if not line:
            yield block
            block = Block()
        elif line.startswith(":"):
            block.comments.append(line[1:].strip())
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                block.data = json.loads(value)
            elif name in ("id", "event"):
                setattr(block, name, value)


@contextmanager
def stream(
    server: LiveServer, token: str | None, query: str = "", **headers: str
) -> Iterator[httpx.Response]:
    if token:
        headers["authorization"] = f"Bearer {token}"
    url = f"{server.url}{STREAM_PATH}{'?' + query if query else ''}"
    with httpx.stream("GET", url, headers=headers, timeout=TIMEOUT) as response:
        yield response


def emit(ws: Workspace, type: str = "task.updated", entity_id: object = 1, **payload: Any) -> int:
    """One event in its own committed transaction; its position (the relay runs on commit)."""
    with transaction.atomic():
        event = events.emit(
            workspace_id=ws.pk, type=type, entity_type="task", entity_id=entity_id, payload=payload
        )
    event.refresh_from_db()
    assert event.position is not None
    return event.position


def oldest() -> int:
    """The oldest cursor the log holds: from it a client gets every event without a gap.

    Not always 0: positions keep growing across the tests on PostgreSQL.
    """
    return events.trimmed_through()


def positions(ws: Workspace, after: int = 0) -> list[int]:
    held = Event.objects.filter(workspace=ws, position__gt=after).order_by("position")
    return [int(p or 0) for p in held.values_list("position", flat=True)]


def events_until(stream: httpx.Response | Iterator[Block], last_type: str) -> list[Block]:
    """The events of a stream (or of its blocks read so far) up to and including the first `last_type`."""
    got = []
    for block in blocks(stream) if isinstance(stream, httpx.Response) else stream:
        if block.event:
            got.append(block)
            if block.event == last_type:
                return got
    raise AssertionError(f"the stream ended before a {last_type} event")


@pytest.fixture(scope="module")
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    request.getfixturevalue("file_database")  # tests/web/test_browser.py's, on SQLite a file
    server = LiveServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def token(alice: User, ws_a: Workspace) -> str:
    return agent_token(alice, ws_a)[0]


def test_it_refuses_a_missing_or_unknown_token_with_the_mcp_challenge(live, ws_a):
    for token in (None, "not-a-token"):
        with stream(live, token) as response:
            assert response.status_code == 401
            challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token"')
    assert "/.well-known/oauth-protected-resource/api/mcp" in challenge


def refused_with_a_hint(response: httpx.Response, status: int, code: str) -> None:
    """A token refusal: the status, the bearer challenge, and a body with a code and its fix."""
    assert response.status_code == status
    assert "www-authenticate" in response.headers
    body = json.loads(response.read())
    assert body["code"] == code and body["message"]
    assert "token" in body["fix"] or "scope" in body["fix"], body


def test_it_refuses_an_expired_token(live, token):
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    with stream(live, token) as response:
        refused_with_a_hint(response, 401, "unauthenticated")


def test_it_refuses_a_revoked_connection_and_a_token_for_another_resource(live, alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    connection_revoke(connection=connection)
    other, _ = agent_token(alice, ws_a, resource=["https://elsewhere.example/api/mcp"])
    for refused in (token, other):
        with stream(live, refused) as response:
            refused_with_a_hint(response, 401, "unauthenticated")


def test_it_refuses_a_token_without_the_mcp_scope(live, alice, ws_a):
    token, _ = agent_token(alice, ws_a, scope="offline_access")
    with stream(live, token) as response:
        refused_with_a_hint(response, 403, "forbidden")
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("query", "headers", "field_name"),
    [
        ("types=Task.Created", {}, "types"),
        ("types=task.create", {}, "types"),
        ("entity_type=tasks", {}, "entity_type"),
        ("after=%00", {}, "after"),
        ("after=9223372036854775808", {}, "after"),
        ("", {"last-event-id": "-1"}, "Last-Event-ID"),
        ("", {"last-event-id": "9223372036854775808"}, "Last-Event-ID"),
        ("", {"last-event-id": "1e3"}, "Last-Event-ID"),
        ("types=task.created,", {}, "types"),
        ("entity_type=Bad-Type", {}, "entity_type"),
        ("entity_id=", {}, "entity_id"),
        ("after=-1", {}, "after"),
        ("after=01", {}, "after"),
        ("", {"last-event-id": "abc"}, "Last-Event-ID"),
        ("type=task.created", {}, "query"),
        ("after=1&after=2", {}, "query"),
    ],
)
def test_it_answers_bad_input_with_400_and_a_code_message_and_fix(live, token, query, headers, field_name):
    with stream(live, token, query, **headers) as response:
        assert response.status_code == 400
        body = json.loads(response.read())
    assert body["code"] == "invalid_argument"
    assert body["message"].startswith(f"{field_name}: ")
    assert body["fix"] and isinstance(body["fix"], str)


def test_a_cursor_past_the_newest_event_is_refused_not_followed_in_silence(live, token, ws_a):
    newest = emit(ws_a, "task.created")
    with stream(live, token, **{"last-event-id": str(newest + 1_000_000)}) as response:
        assert response.status_code == 400
        body = json.loads(response.read())
    assert body["code"] == "invalid_argument" and body["message"].startswith("Last-Event-ID: ")
    with stream(live, token, **{"last-event-id": str(newest)}) as response:
        assert response.status_code == 200
        # Read an event before closing (events_until raises if none comes): the server's catch-up
        # read has then finished, and cannot meet the next test's flush of the tables (a deadlock,
        # once, in CI).
        emit(ws_a, "task.updated")
        events_until(response, "task.updated")


def test_it_sends_every_event_with_its_id_type_and_envelope(live, token, ws_a):
    emit(ws_a, "task.moved", entity_id=7, column="doing")
    with stream(live, token, f"after={oldest()}") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        got = events_until(response, "task.moved")
    assert [int(b.id or 0) for b in got] == positions(ws_a)
    moved = got[-1].data
    assert moved == {
        "id": got[-1].id,
        "type": "task.moved",
        "workspace": ws_a.slug,
        "entity": {"type": "task", "id": "7"},
        "occurredAt": moved["occurredAt"] if moved else None,
        "data": {"column": "doing"},
    }


def test_without_a_cursor_it_starts_from_now_and_says_where(live, token, ws_a):
    before = emit(ws_a, "task.created")
    with stream(live, token) as response:
        read = blocks(response)
        first = next(read)
        assert first.comments == ["connected"] and first.id == str(before) and first.event is None
        later = emit(ws_a, "task.moved")
        got = events_until(read, "task.moved")
    assert [b.id for b in got] == [str(later)]


def test_without_a_cursor_it_starts_from_the_event_logs_newest_position(live, token, monkeypatch):
    monkeypatch.setattr(events, "newest_position", lambda: 424242)
    with stream(live, token) as response:
        first = next(blocks(response))
    assert first.comments == ["connected"] and first.id == "424242"


def test_a_client_resumes_with_last_event_id_without_loss_or_duplicates_while_writes_continue(
    live, token, ws_a
):
    def write() -> None:
        try:
            for n in range(120):
                emit(ws_a, "task.updated", entity_id=n % 7, n=n)
            emit(ws_a, "test.last")
        finally:
            connections.close_all()

    writer = threading.Thread(target=write)
    writer.start()
    seen: list[int] = []
    cursor, reconnects, done = str(oldest()), 0, False
    try:
        while not done:
            reconnects += 1
            with stream(live, token, **{"last-event-id": cursor}) as response:
                for block in blocks(response):
                    if block.event:
                        seen.append(int(block.id or 0))
                        cursor = block.id or cursor
                        done = block.event == "test.last"
                        if done or len(seen) % 15 == 0:
                            break  # hang up and resume
    finally:
        writer.join()
    assert seen == positions(ws_a)
    assert reconnects > 5


@pytest.mark.parametrize(("offset", "gap"), [(-1, True), (0, False)])
def test_a_cursor_older_than_retention_gets_gap_with_the_oldest_cursor(live, alice, ws_a, offset, gap):
    Event.objects.all().delete()
    with time_machine.travel(timezone.now() - events.RETENTION - timedelta(days=1), tick=True):
        old = [emit(ws_a, "task.updated", n=n) for n in range(3)]
    token, _ = agent_token(alice, ws_a)
    recent = emit(ws_a, "task.moved")
    assert events.trim() == len(old)
    trimmed = events.trimmed_through()
    assert old[-1] <= trimmed < recent
    with stream(live, token, f"after={trimmed + offset}") as response:
        got = events_until(response, "task.moved")
    if gap:
        assert got[0].event == "gap" and got[0].id == str(trimmed)
        assert got[0].data == {"after": str(trimmed - 1), "oldestCursor": str(trimmed)}
        got = got[1:]
    assert [int(b.id or 0) for b in got] == positions(ws_a, after=trimmed)
    assert "gap" not in [b.event for b in got]


def test_it_sends_keepalive_comments(live, token, settings):
    settings.WEFT_STREAM_HEARTBEAT_SECONDS = 0.1
    with stream(live, token) as response:
        comments = [c for block, _ in zip(blocks(response), range(3), strict=False) for c in block.comments]
    assert comments[0] == "connected"
    assert "keepalive" in comments[1:]


def test_a_revoked_connection_ends_its_open_stream(live, alice, ws_a, settings):
    settings.WEFT_STREAM_HEARTBEAT_SECONDS = 0.1
    token, connection = agent_token(alice, ws_a)
    with stream(live, token) as response:
        got = blocks(response)
        next(got)
        connection_revoke(connection=connection)
        comments = [c for block in got for c in block.comments]
    assert comments[-1].startswith("the access token is no longer valid")


def test_a_token_of_workspace_b_never_receives_a_events(live, carol, ws_a, ws_b):
    token_b, _ = agent_token(carol, ws_b)
    with stream(live, token_b, f"after={oldest()}") as response:
        for n in range(5):
            emit(ws_a, "task.updated", n=n)
        emit(ws_b, "test.last")
        got = events_until(response, "test.last")
    assert {b.data["workspace"] for b in got if b.data} == {ws_b.slug}
    assert [int(b.id or 0) for b in got] == positions(ws_b)


def test_a_foreign_entity_id_filter_yields_nothing_of_the_other_workspace(live, carol, ws_a, ws_b):
    token_b, _ = agent_token(carol, ws_b)
    with stream(live, token_b, f"after={oldest()}&entity_type=task&entity_id=77") as response:
        emit(ws_a, "task.updated", entity_id=77)
        emit(ws_b, "task.updated", entity_id=78)
        mine = emit(ws_b, "test.last", entity_id=77)
        got = events_until(response, "test.last")
    assert [b.id for b in got] == [str(mine)]


def test_a_filter_applies_to_the_catch_up_and_the_live_feed(live, token, ws_a):
    old = emit(ws_a, "task.moved", entity_id=3)
    emit(ws_a, "task.updated", entity_id=3)
    with stream(live, token, f"after={oldest()}&types=task.moved,task.purged") as response:
        read = blocks(response)
        next(read)
        emit(ws_a, "task.updated", entity_id=3)
        new = emit(ws_a, "task.moved", entity_id=4)
        last = emit(ws_a, "task.purged")
        got = events_until(read, "task.purged")
    assert [b.id for b in got] == [str(old), str(new), str(last)]


def _item(position: int, type: str = "task.updated") -> Item:
    return Item(position=position, type=type, entity_type="task", entity_id="1", frame=b"")


async def test_a_subscriber_that_falls_too_far_behind_is_marked_overflowed():
    subscriber = Subscriber(1, StreamFilter(types=frozenset({"task.updated"})), limit=3)
    subscriber.offer([_item(1), _item(2, "task.moved")])
    subscriber.offer([_item(3), _item(4)])
    assert [i.position for i in await subscriber.take(0)] == [1, 3, 4]
    subscriber.offer([_item(5), _item(6)])
    subscriber.offer([_item(7), _item(8)])
    assert subscriber.overflowed
    assert await subscriber.take(0) == []
