"""get_board_state's answer a page at a time: each column's first BOARD_PAGE tasks in board order
(position, then id), its count up to BOARD_COUNT_MAX, and a cursor to the rest.

A cursor names a column and the last task a page showed, as (position, id); the next page is
the tasks after it in that order, read by keyset on the (board, column, position, id) index, so
a page costs the same on a board of a thousand tasks or a million. It is opaque to agents, in
hex (so nothing in it reads as a placeholder in a hint), and holds no board or workspace: the
board is the call's own, checked like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from boards import limits
from boards.models import BOARD_COLUMNS, Board, Run, Task
from boards.payloads import board_payload, holder_name, iso, task_payload
from weft.errors import invalid_argument
from weft.hints import Call, Hint, fix, next_


@dataclass(frozen=True)
class After:
    """Where a column's next page starts: after the task at (position, id)."""

    column: str
    position: float
    id: int

    def encode(self) -> str:
        return f"{self.column}:{self.position!r}:{self.id}".encode().hex()


def decode_cursor(cursor: str, board_id: int | None) -> After:
    """The cursor a page gave; anything else is invalid_argument, fixed by the first page."""
    try:
        column, position, task_id = bytes.fromhex(cursor).decode().split(":")
        after: After | None = After(column=column, position=float(position), id=int(task_id))
    except (UnicodeDecodeError, ValueError):
        after = None
    if after is None or not _valid(after):
        first_page = {"boardId": board_id} if board_id is not None else {}
        raise invalid_argument(
            "cursor", "not a cursor get_board_state gave", fix_hint=fix("get_board_state", first_page)
        )
    return after


def _valid(after: After) -> bool:
    return after.column in BOARD_COLUMNS and not math.isnan(after.position) and 1 <= after.id <= limits.ID_MAX


@dataclass
class ColumnPage:
    """One column's page: its tasks, how many the column holds (exact up to BOARD_COUNT_MAX)."""

    tasks: list[Task]
    count: int
    exact: bool
    next_cursor: str | None

    def summary(self) -> str:
        total = f"{self.count}" if self.exact else f"more than {self.count}"
        return f"{len(self.tasks)} of {total}" if self.next_cursor else total


@dataclass
class BoardStateResult:
    """board_state; `board` is None while the workspace has no board (its first task creates one).

    `pages` holds the four columns on a first page, only the paged column after a cursor."""

    board: Board | None
    pages: dict[str, ColumnPage]
    holders: dict[int, Run]
    in_review: set[int]
    hint: Hint
    paged: bool = False
    limit: int = field(default=limits.BOARD_PAGE)

    @property
    def columns(self) -> dict[str, list[Task]]:
        return {name: page.tasks for name, page in self.pages.items()}

    def payload(self) -> dict[str, Any]:
        def task_row(task: Task) -> dict[str, Any]:
            run = self.holders.get(task.pk)
            return {
                **task_payload(task),
                "heldBy": holder_name(run) if run else None,
                "leaseExpiresAt": iso(run.lease_expires_at) if run else None,
                "inReview": task.pk in self.in_review,
            }

        return {
            "board": board_payload(self.board) if self.board else None,
            "columns": {name: [task_row(t) for t in page.tasks] for name, page in self.pages.items()},
            "counts": {name: page.count for name, page in self.pages.items()},
            "countsExact": {name: page.exact for name, page in self.pages.items()},
            "nextCursor": {name: page.next_cursor for name, page in self.pages.items()},
            "pageLimit": self.limit,
        }

    def summary(self) -> str:
        if self.board is None:
            return "No board yet: the first task created makes one."
        counts = ", ".join(f"{name} {page.summary()}" for name, page in self.pages.items())
        archived = " (archived)" if self.board.archived_at else ""
        lines = [f"Board {self.board.name}{archived}{' (next page)' if self.paged else ''}: {counts}."]
        for name, page in self.pages.items():
            if page.next_cursor:
                more = Call("get_board_state", {"boardId": self.board.pk, "cursor": page.next_cursor})
                lines.append(f"More {name}: {more.as_text()}")
        return "\n".join(lines)


def board_hint(board: Board | None, pages: dict[str, ColumnPage], *, paged: bool) -> Hint:
    """get_my_work next; the first column with more as the `Or:` (as the `Next:` when paging)."""
    cursor = next((page.next_cursor for page in pages.values() if page.next_cursor), None)
    if board is None or cursor is None:
        return next_("get_my_work")
    more = Call("get_board_state", {"boardId": board.pk, "cursor": cursor})
    if paged:
        return next_(more.tool, more.args)
    return next_("get_my_work", fallback=more)
