"""get_board_state a page at a time: each column's first page at its exact edge, the cursor that
walks a column to its end reaching every task exactly once, the capped count, and the cursor and
board refusals."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from accounts.models import Workspace
from boards import limits
from boards.board_page import After, decode_cursor
from boards.models import Board, Column, Task
from boards.selectors import board_state
from boards.services import board_default
from weft.errors import WeftError

pytestmark = pytest.mark.django_db


def _fill(board: Board, column: str, positions: list[float]) -> list[Task]:
    return Task.objects.bulk_create(
        Task(workspace_id=board.workspace_id, board=board, title=f"T{i}", column=column, position=p)
        for i, p in enumerate(positions)
    )


def _ids(payload: dict[str, Any], column: str) -> list[int]:
    return [row["id"] for row in payload["columns"][column]]


def _walk(ws: Workspace, board: Board, column: str) -> list[int]:
    """Every page of one column, first page then cursor after cursor; the ids in the order read."""
    payload = board_state(workspace=ws, board_id=board.pk).payload()
    seen = _ids(payload, column)
    cursor = payload["nextCursor"][column]
    while cursor is not None:
        payload = board_state(workspace=ws, board_id=board.pk, cursor=cursor).payload()
        assert list(payload["columns"]) == [column]
        seen += _ids(payload, column)
        cursor = payload["nextCursor"][column]
    return seen


@pytest.mark.parametrize("extra", [0, 1])
def test_a_column_of_the_page_limit_fits_one_page_and_one_more_task_makes_a_second(ws_a, extra):
    board = board_default(workspace=ws_a)
    tasks = _fill(board, Column.TODO, [float(i) for i in range(limits.BOARD_PAGE + extra)])
    state = board_state(workspace=ws_a, board_id=board.pk)
    payload = state.payload()
    assert _ids(payload, "todo") == [t.pk for t in tasks[: limits.BOARD_PAGE]]
    assert payload["counts"]["todo"] == limits.BOARD_PAGE + extra
    assert payload["countsExact"]["todo"] is True
    assert payload["pageLimit"] == limits.BOARD_PAGE
    cursor = payload["nextCursor"]["todo"]
    if not extra:
        assert cursor is None
        assert state.hint.lines() == ["Next: get_my_work {}"]
        return
    assert state.hint.lines() == [
        "Next: get_my_work {}",
        f'Or: get_board_state {{"boardId": {board.pk}, "cursor": "{cursor}"}}',
    ]
    assert f"todo {limits.BOARD_PAGE} of {limits.BOARD_PAGE + 1}" in state.summary()
    last = board_state(workspace=ws_a, board_id=board.pk, cursor=cursor)
    assert _ids(last.payload(), "todo") == [tasks[-1].pk]
    assert last.payload()["nextCursor"] == {"todo": None}
    assert last.hint.lines() == ["Next: get_my_work {}"]


def test_the_cursor_reaches_every_task_of_a_column_once_in_board_order(ws_a, monkeypatch):
    monkeypatch.setattr(limits, "BOARD_PAGE", 4)
    board = board_default(workspace=ws_a)
    # Ties on position (three tasks at 2.0, a page edge among them) are ordered by id.
    tasks = _fill(board, Column.DONE, [5.0, 2.0, 2.0, -1.0, 2.0, 9.5, 0.0, 7.0, 2.0, 3.0, 1e-9])
    _fill(board, Column.TODO, [2.0, 2.0])
    order = [t.pk for t in sorted(tasks, key=lambda t: (t.position, t.pk))]
    assert _walk(ws_a, board, "done") == order


def test_a_page_after_a_cursor_names_the_next_page_as_its_next_action(ws_a, monkeypatch):
    monkeypatch.setattr(limits, "BOARD_PAGE", 2)
    board = board_default(workspace=ws_a)
    _fill(board, Column.BACKLOG, [1.0, 2.0, 3.0, 4.0, 5.0])
    first = board_state(workspace=ws_a, board_id=board.pk).payload()["nextCursor"]["backlog"]
    second = board_state(workspace=ws_a, board_id=board.pk, cursor=first)
    cursor = second.payload()["nextCursor"]["backlog"]
    assert second.hint.lines() == [f'Next: get_board_state {{"boardId": {board.pk}, "cursor": "{cursor}"}}']


@pytest.mark.parametrize(("held", "exact"), [(0, True), (1, False)])
def test_a_column_is_counted_up_to_the_cap_and_says_when_it_holds_more(ws_a, monkeypatch, held, exact):
    monkeypatch.setattr(limits, "BOARD_PAGE", 2)
    monkeypatch.setattr(limits, "BOARD_COUNT_MAX", 5)
    board = board_default(workspace=ws_a)
    _fill(board, Column.DONE, [float(i) for i in range(5 + held)])
    state = board_state(workspace=ws_a, board_id=board.pk)
    assert state.payload()["counts"]["done"] == 5
    assert state.payload()["countsExact"]["done"] is exact
    assert ("done 2 of 5." if exact else "done 2 of more than 5.") in state.summary()


def test_another_workspaces_board_is_refused_with_or_without_a_cursor(ws_a, ws_b):
    board_a, board_b = board_default(workspace=ws_a), board_default(workspace=ws_b)
    _fill(board_a, Column.TODO, [1.0, 2.0])
    cursor = After("todo", 1.0, Task.objects.filter(board=board_a).order_by("pk")[0].pk).encode()
    for arguments in ({"board_id": board_a.pk}, {"board_id": board_a.pk, "cursor": cursor}):
        with pytest.raises(WeftError) as refused:
            board_state(workspace=ws_b, **arguments)
        assert refused.value.code == "not_found"
    # B's own board after A's cursor: B's tasks only (none here), nothing of A's.
    own = board_state(workspace=ws_b, board_id=board_b.pk, cursor=cursor)
    assert own.payload()["columns"] == {"todo": []}


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "zz",
        "abc",
        b"todo:1.0".hex(),
        b"trash:1.0:3".hex(),
        b"todo:nan:3".hex(),
        b"todo:1.0:0".hex(),
        f"todo:1.0:{2**63}".encode().hex(),
        b"\xff\xfe".hex(),
    ],
)
def test_a_cursor_no_page_gave_is_invalid_with_the_first_page_as_its_fix(ws_a, cursor):
    board = board_default(workspace=ws_a)
    with pytest.raises(WeftError) as refused:
        board_state(workspace=ws_a, board_id=board.pk, cursor=cursor)
    assert refused.value.code == "invalid_argument"
    assert refused.value.fix.lines() == [f'Fix: get_board_state {{"boardId": {board.pk}}}']


def test_a_cursor_round_trips_any_position(ws_a):
    for position in (0.0, -2.5, 1e300, 1 / 3, float("inf")):
        after = After("doing", position, limits.ID_MAX)
        assert decode_cursor(after.encode(), None) == after
        assert len(after.encode()) <= limits.BOARD_CURSOR


def test_a_first_page_costs_one_query_per_column_and_a_count_only_for_full_ones(
    ws_a, monkeypatch, django_assert_num_queries
):
    monkeypatch.setattr(limits, "BOARD_PAGE", 2)
    board = board_default(workspace=ws_a)
    _fill(board, Column.TODO, [1.0, 2.0])
    _fill(board, Column.DONE, [1.0, 2.0, 3.0])
    # The board, four pages, done's count; PostgreSQL reads the database clock too.
    with django_assert_num_queries(1 + 4 + 1 + (connection.vendor == "postgresql")):
        board_state(workspace=ws_a, board_id=board.pk)
