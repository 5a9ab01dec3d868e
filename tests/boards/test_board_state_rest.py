"""get_board_state's pages over REST: `GET /api/v1/boards/{boardId}?cursor=…` reads the next page
the first page's `_or_action` names, as MCP does; a cursor no page gave is 422 with the first page
as its Fix."""

from __future__ import annotations

import pytest

from boards import limits
from boards.models import Column, Task
from boards.services import board_default
from tests.api.conftest import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget_verified_tokens() -> None:
    from weft.mcp.verifier import verified_tokens

    verified_tokens.clear()


def test_the_rest_board_reads_the_next_page_after_a_cursor(alice, ws_a, monkeypatch):
    monkeypatch.setattr(limits, "BOARD_PAGE", 2)
    board = board_default(workspace=ws_a)
    tasks = Task.objects.bulk_create(
        Task(workspace=ws_a, board=board, title=f"T{i}", column=Column.BACKLOG, position=float(i))
        for i in range(3)
    )
    api = signed_in(alice, ws_a)
    first = api.get(f"boards/{board.pk}")
    assert first.status == 200, first.body
    cursor = first.body["nextCursor"]["backlog"]
    assert first.body["_or_action"] == f"Or: GET /api/v1/boards/{board.pk}?cursor={cursor}"
    rest = api.get(f"boards/{board.pk}", {"cursor": cursor})
    assert rest.status == 200, rest.body
    assert [t["id"] for t in rest.body["columns"]["backlog"]] == [tasks[-1].pk]
    refused = api.get("board", {"cursor": "beef"})
    assert refused.status == 422
    assert refused.body["_next_action"] == "Fix: GET /api/v1/board"
