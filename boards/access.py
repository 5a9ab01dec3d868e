"""Access helpers for board objects: scoped by workspace; a foreign id answers like a missing one."""

from __future__ import annotations

from typing import Any

from accounts.models import Workspace
from boards.models import Board, InboxItem, Question, Task
from weft.errors import not_found


def _workspace_id(workspace: Workspace | int) -> int:
    return workspace if isinstance(workspace, int) else workspace.pk


def _int_id(kind: str, ident: Any) -> int:
    """Ids arrive as ints or strings of digits; anything else cannot exist."""
    try:
        value = int(str(ident).strip())
    except (TypeError, ValueError):
        raise not_found(kind, ident) from None
    if value <= 0:
        raise not_found(kind, ident)
    return value


def access_task(workspace: Workspace | int, task_id: Any, *, with_board: bool = False) -> Task:
    """The task, scoped by workspace; `with_board` reads its board in the same query."""
    pk = _int_id("task", task_id)
    rows = Task.objects.select_related("board") if with_board else Task.objects.all()
    task = rows.filter(workspace_id=_workspace_id(workspace), pk=pk).first()
    if task is None:
        raise not_found("task", task_id)
    return task


def access_board(workspace: Workspace | int, board_id: Any) -> Board:
    pk = _int_id("board", board_id)
    board = Board.objects.filter(workspace_id=_workspace_id(workspace), pk=pk).first()
    if board is None:
        raise not_found("board", board_id)
    return board


def access_inbox_item(workspace: Workspace | int, item_id: Any) -> InboxItem:
    pk = _int_id("inbox item", item_id)
    item = (
        InboxItem.objects.select_related("task", "report", "question", "run")
        .filter(workspace_id=_workspace_id(workspace), pk=pk)
        .first()
    )
    if item is None:
        raise not_found("inbox item", item_id)
    return item


def access_question(workspace: Workspace | int, question_id: Any) -> Question:
    pk = _int_id("question", question_id)
    question = (
        Question.objects.select_related("task").filter(workspace_id=_workspace_id(workspace), pk=pk).first()
    )
    if question is None:
        raise not_found("question", question_id)
    return question
