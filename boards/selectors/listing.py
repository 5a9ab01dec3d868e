"""Listings: the workspace's live boards, and its tasks a page at a time (cursor pagination).

The cursor is opaque to callers: the last task id of the page, encoded. Pages are in id order,
so a task created while a caller pages appears on a later page, and none is seen twice.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from accounts.models import Workspace
from boards.access import access_board
from boards.models import Board, Column, Task
from boards.payloads import board_payload, task_payload
from boards.selectors.board import boards_of, with_people
from weft.errors import invalid_argument
from weft.hints import Hint, fix, next_

PAGE_MAX = 200
CURSOR_MAX = 40
LISTED = (Column.BACKLOG, Column.TODO, Column.DOING, Column.DONE, Column.DROPPED)


@dataclass
class BoardsResult:
    boards: list[Board]
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {"boards": [board_payload(b) for b in self.boards]}

    def summary(self) -> str:
        return f"{len(self.boards)} board(s)."


@dataclass
class TaskPageResult:
    tasks: list[Task]
    next_cursor: str | None
    hint: Hint

    def payload(self) -> dict[str, Any]:
        return {"tasks": [task_payload(t) for t in self.tasks], "nextCursor": self.next_cursor}

    def summary(self) -> str:
        more = "; more on the next page" if self.next_cursor else ""
        return f"{len(self.tasks)} task(s){more}."


def boards_list(*, workspace: Workspace) -> BoardsResult:
    found = list(boards_of(workspace))
    hint = next_("get_board_state", {"boardId": found[0].pk}) if found else next_("get_board_state")
    return BoardsResult(boards=found, hint=hint)


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"after:{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str, filters: dict[str, Any]) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, value = raw.partition(":")
        after = int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        after = -1
        prefix = ""
    if prefix != "after" or after < 0:
        raise invalid_argument("cursor", "not a cursor this API gave", fix_hint=fix("list_tasks", filters))
    return after


def tasks_page(
    *,
    workspace: Workspace,
    boardId: int | None = None,
    column: str | None = None,
    priority: int | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> TaskPageResult:
    """One page of tasks by id, filtered by board, column and priority."""
    filters = {
        k: v for k, v in {"boardId": boardId, "column": column, "priority": priority}.items() if v is not None
    }
    rows = with_people(Task.objects.filter(workspace=workspace, column__in=LISTED))
    if boardId is not None:
        rows = rows.filter(board=access_board(workspace, boardId))
    else:
        rows = rows.filter(board__archived_at=None)  # an archived board's tasks only when it is named
    if column is not None:
        rows = rows.filter(column=column)
    if priority is not None:
        rows = rows.filter(priority=priority)
    if cursor is not None:
        rows = rows.filter(pk__gt=decode_cursor(cursor, filters))
    page = list(rows.order_by("pk")[: limit + 1])
    more = len(page) > limit
    tasks = page[:limit]
    next_cursor = encode_cursor(tasks[-1].pk) if more else None
    if next_cursor is not None:
        hint = next_("list_tasks", {**filters, "limit": limit, "cursor": next_cursor})
    else:
        hint = next_("get_my_work")
    return TaskPageResult(tasks=tasks, next_cursor=next_cursor, hint=hint)
