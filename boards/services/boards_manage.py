"""A workspace's boards, kept by its owners and admins: board_create, board_rename, board_archive,
board_restore.

Names are unique among a workspace's live boards, whatever their case. The query before each
write gives the friendly refusal; the partial unique index `board_live_name_unique` decides a
race (two people creating "Ops" at once get one board and one `conflict`). An archived board's
tasks leave the agents' view (get_my_work, start_task, search); runs already held go on.
The last live board is never archived: archiving locks the workspace's live boards and counts
them, so two archives at once cannot leave none.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from accounts.models import Seat, Workspace
from boards import clock, limits
from boards.models import Board
from boards.services.common import within_limits
from weft.errors import WeftError
from weft.events import emit
from weft.hints import wait


def _require_manager(by_seat: Seat, workspace_id: int) -> None:
    if by_seat.workspace_id != workspace_id or not by_seat.can_manage:
        raise WeftError(
            "forbidden",
            "Only owners and admins can create, rename, archive or restore boards.",
            details={"reason": "not_a_manager"},
            fix=wait("an owner or admin of the workspace makes the change"),
        )


def _clean_name(name: Any) -> str:
    with within_limits():
        return limits.text("name", name, limits.BOARD_NAME, required=True)


def _live(workspace_id: int) -> QuerySet[Board]:
    return Board.objects.filter(workspace_id=workspace_id, archived_at__isnull=True)


def _name_taken(name: str) -> WeftError:
    return WeftError(
        "conflict",
        f"a live board of this workspace is already named “{name}”; choose another name",
        details={"reason": "name_taken", "name": name},
        fix=wait("the board gets a name no other live board of the workspace has"),
    )


def _require_free_name(workspace_id: int, name: str, *, other_than: int | None = None) -> None:
    same = _live(workspace_id).filter(name__iexact=name)
    if other_than is not None:
        same = same.exclude(pk=other_than)
    if same.exists():
        raise _name_taken(name)


def _emit(board: Board, type: str, payload: dict[str, Any]) -> None:
    emit(
        workspace_id=board.workspace_id,
        type=type,
        entity_type="board",
        entity_id=board.pk,
        payload={"boardId": board.pk, **payload},
    )


def _locked(board: Board) -> Board:
    return Board.objects.select_for_update().get(pk=board.pk)


def board_create(*, workspace: Workspace, name: Any, by_seat: Seat) -> Board:
    """A new live board; its name no other live board of the workspace has."""
    _require_manager(by_seat, workspace.pk)
    cleaned = _clean_name(name)
    try:
        with transaction.atomic():
            _require_free_name(workspace.pk, cleaned)
            board = Board.objects.create(workspace=workspace, name=cleaned, created_at=clock.db_now())
            _emit(board, "board.created", {"name": board.name})
    except IntegrityError:
        raise _name_taken(cleaned) from None
    return board


def board_rename(*, board: Board, name: Any, by_seat: Seat) -> Board:
    """Rename a board (an archived one too); a live board's new name is free among live boards."""
    _require_manager(by_seat, board.workspace_id)
    cleaned = _clean_name(name)
    try:
        with transaction.atomic():
            current = _locked(board)
            previous = current.name
            if previous == cleaned:
                return current
            if current.archived_at is None:
                _require_free_name(current.workspace_id, cleaned, other_than=current.pk)
            current.name = cleaned
            current.save(update_fields=["name"])
            _emit(current, "board.renamed", {"from": previous, "to": cleaned})
    except IntegrityError:
        raise _name_taken(cleaned) from None
    return current


def board_archive(*, board: Board, by_seat: Seat) -> Board:
    """Archive a board: its tasks leave the agents' view. The last live board stays."""
    _require_manager(by_seat, board.workspace_id)
    with transaction.atomic():
        # Every live board of the workspace, locked in id order: a concurrent archive waits here,
        # then sees this one gone from the live set (PostgreSQL re-checks the condition).
        live = list(_live(board.workspace_id).select_for_update().order_by("pk"))
        current = next((row for row in live if row.pk == board.pk), None)
        if current is None:
            return Board.objects.get(pk=board.pk)  # archived already: nothing changes
        if len(live) == 1:
            raise WeftError(
                "conflict",
                f"“{current.name}” is the workspace's last live board; create another before archiving it",
                details={"reason": "last_board", "boardId": current.pk},
                fix=wait("the workspace has another live board"),
            )
        current.archived_at = clock.db_now()
        current.save(update_fields=["archived_at"])
        _emit(current, "board.archived", {"name": current.name})
    return current


def board_restore(*, board: Board, by_seat: Seat) -> Board:
    """Bring an archived board back, unless a live board has its name meanwhile."""
    _require_manager(by_seat, board.workspace_id)
    try:
        with transaction.atomic():
            current = _locked(board)
            if current.archived_at is None:
                return current
            _require_free_name(current.workspace_id, current.name, other_than=current.pk)
            current.archived_at = None
            current.save(update_fields=["archived_at"])
            _emit(current, "board.restored", {"name": current.name})
    except IntegrityError:
        raise _name_taken(board.name) from None
    return current
