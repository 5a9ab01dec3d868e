"""The board: which board a page or tool reads, its columns with their cards (who holds what,
what waits in the Inbox), the list view's sorted rows, the board state agents read, and the trash.

Reads only: a workspace with no board yet reads as an empty board, and the first write that
needs one (`task_create`) creates it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Case, F, Prefetch, Q, QuerySet, When
from django.db.models.functions import Lower

from accounts.models import Workspace
from boards import clock, queries
from boards.access import access_board
from boards.models import BOARD_COLUMNS, Board, Column, InboxItem, InboxKind, Run, Task
from boards.payloads import holder_name
from boards.results import BoardStateResult
from weft.hints import next_

# A card's lease shows as running low below this much time left.
LEASE_LOW = timedelta(minutes=5)
# Where a person moves a card (Doing is entered only by a claim).
MOVE_TARGETS = (Column.BACKLOG, Column.TODO, Column.DONE, Column.DROPPED)


@dataclass
class Card:
    task: Task
    holder: str = ""
    lease_left: timedelta | None = None
    heartbeat_age: timedelta | None = None
    last_note: str = ""
    waiting_on: str = ""
    overdue: bool = False

    @property
    def lease_low(self) -> bool:
        return self.lease_left is not None and self.lease_left < LEASE_LOW

    @property
    def stays_put(self) -> bool:
        """Doing is left by the run's end, not by Move: the menu shows it as a disabled option."""
        return self.task.column not in MOVE_TARGETS

    @property
    def moves(self) -> list[tuple[str, str, bool]]:
        """The card menu's Move to… options: (value, label, selected)."""
        return [(str(value), Column(value).label, value == self.task.column) for value in MOVE_TARGETS]


@dataclass
class BoardColumn:
    value: str
    label: str
    cards: list[Card] = field(default_factory=list)


@dataclass(frozen=True)
class BoardFilter:
    query: str = ""
    priority: int | None = None
    review_only: bool = False
    held_only: bool = False
    # A label's name (any case), and the person whose assigned tasks "Assigned to me" shows.
    label: str = ""
    assigned_to: int | None = None

    @property
    def active(self) -> bool:
        return bool(
            self.query
            or self.priority is not None
            or self.review_only
            or self.held_only
            or self.label
            or self.assigned_to is not None
        )


# The list view's sort keys and their headers; ties break by id, and no due date sorts last.
SORT_KEYS = {"title": "Title", "priority": "Priority", "column": "Column", "due": "Due", "updated": "Updated"}
_COLUMN_ORDER = Case(*(When(column=value, then=rank) for rank, value in enumerate(BOARD_COLUMNS)))


@dataclass(frozen=True)
class ListSort:
    key: str = "updated"
    descending: bool = True

    @classmethod
    def parse(cls, value: str) -> ListSort:
        """`title` ascending, `-title` descending; anything else is the default (newest first)."""
        key = value.removeprefix("-")
        return cls(key=key, descending=value.startswith("-")) if key in SORT_KEYS else cls()

    @property
    def value(self) -> str:
        return ("-" if self.descending else "") + self.key

    def ordering(self) -> list[Any]:
        by: Any = {"title": Lower("title"), "priority": F("priority"), "column": _COLUMN_ORDER}.get(
            self.key, F("due_at" if self.key == "due" else "updated_at")
        )
        if self.descending:
            return [by.desc(nulls_last=True), "-pk"]
        return [by.asc(nulls_last=True), "pk"]

    def _toggled(self) -> str:
        return self.key if self.descending else "-" + self.key

    def headers(self) -> list[SortHeader]:
        """A header per key; its link sorts by it ascending, or the other way when it is the current key."""
        return [
            SortHeader(
                key=key,
                label=label,
                sort=self._toggled() if key == self.key else key,
                aria_sort=("descending" if self.descending else "ascending") if key == self.key else "none",
            )
            for key, label in SORT_KEYS.items()
        ]


@dataclass(frozen=True)
class SortHeader:
    key: str
    label: str
    sort: str
    aria_sort: str

    @property
    def arrow(self) -> str:
        return {"ascending": "▲", "descending": "▼"}.get(self.aria_sort, "")


def board_for_read(workspace: Workspace, board_id: Any = None) -> Board | None:
    """The board a read names, else the workspace's first board; None while it has none."""
    if board_id is not None:
        return access_board(workspace, board_id)
    return Board.objects.filter(workspace=workspace).order_by("pk").first()


def boards_of(workspace: Workspace) -> QuerySet[Board]:
    return Board.objects.filter(workspace=workspace).order_by("created_at")


def holding_runs(now: datetime) -> QuerySet[Run]:
    """The runs that hold their task at `now`, with who holds them."""
    return Run.objects.filter(queries.held(now)).select_related("connection", "user")


def _card(task: Task, now: datetime, waiting: dict[int, str]) -> Card:
    card = Card(task=task, waiting_on=waiting.get(task.pk, ""))
    card.overdue = bool(task.due_at and task.due_at < now and task.column != Column.DONE)
    runs: list[Run] = getattr(task, "holding_runs", [])
    if runs:
        run = runs[0]
        card.holder = holder_name(run)
        card.lease_left = max(run.lease_expires_at - now, timedelta(0))
        card.heartbeat_age = max(now - run.last_heartbeat_at, timedelta(0))
    return card


def _filtered(tasks: QuerySet[Task], filters: BoardFilter, now: datetime) -> QuerySet[Task]:
    if filters.query:
        needle = filters.query.strip()
        match = Q(title__icontains=needle) | Q(description__icontains=needle)
        if needle.lstrip("#").isdigit():
            match |= Q(pk=int(needle.lstrip("#")))
        tasks = tasks.filter(match)
    if filters.priority is not None:
        tasks = tasks.filter(priority=filters.priority)
    if filters.review_only:
        tasks = tasks.filter(review_required=True)
    if filters.held_only:
        tasks = tasks.filter(queries.held(now, via="runs")).distinct()
    if filters.label:
        tasks = tasks.filter(labels__name__iexact=filters.label)
    if filters.assigned_to is not None:
        tasks = tasks.filter(assigned_user_id=filters.assigned_to)
    return tasks


def with_people(tasks: QuerySet[Task]) -> QuerySet[Task]:
    """Tasks with what their payload and card show of people: labels and the assignee."""
    return tasks.select_related("assigned_user", "assigned_connection").prefetch_related("labels")


def _board_tasks(workspace: Workspace, board: Board, filters: BoardFilter, now: datetime) -> QuerySet[Task]:
    tasks = _filtered(
        Task.objects.filter(workspace=workspace, board=board, column__in=BOARD_COLUMNS), filters, now
    )
    return with_people(tasks).prefetch_related(
        Prefetch("runs", queryset=holding_runs(now), to_attr="holding_runs")
    )


def _waiting(workspace: Workspace, now: datetime) -> dict[int, str]:
    """What each task waits on in the Inbox (by task id)."""
    return {
        item.task_id: item.get_kind_display()
        for item in InboxItem.objects.filter(queries.waiting(now), workspace=workspace).only(
            "task_id", "kind"
        )
    }


def board_columns(
    *, workspace: Workspace, board: Board | None, filters: BoardFilter, now: datetime
) -> list[BoardColumn]:
    """The four board columns with their cards, filtered, in position order."""
    columns: dict[str, BoardColumn] = {
        str(value): BoardColumn(value=str(value), label=Column(value).label) for value in BOARD_COLUMNS
    }
    if board is None:
        return list(columns.values())
    tasks = _board_tasks(workspace, board, filters, now).order_by("position", "-priority", "created_at")
    waiting = _waiting(workspace, now)
    for task in tasks:
        columns[task.column].cards.append(_card(task, now, waiting))
    return list(columns.values())


def board_rows(
    *, workspace: Workspace, board: Board | None, filters: BoardFilter, sort: ListSort, now: datetime
) -> list[Card]:
    """The board's tasks as the list view's rows, filtered like the columns, in `sort` order."""
    if board is None:
        return []
    tasks = _board_tasks(workspace, board, filters, now).order_by(*sort.ordering())
    waiting = _waiting(workspace, now)
    return [_card(task, now, waiting) for task in tasks]


def board_state(*, workspace: Workspace, board_id: Any = None) -> BoardStateResult:
    """The board's four columns with who holds what (expired leases are not held)."""
    now = clock.db_now()
    board = board_for_read(workspace, board_id)
    columns: dict[str, list[Task]] = {str(c): [] for c in BOARD_COLUMNS}
    if board is not None:
        tasks = with_people(Task.objects.filter(board=board, column__in=BOARD_COLUMNS))
        for task in tasks.order_by("position", "pk"):
            columns[task.column].append(task)
    doing = columns[Column.DOING]
    holders = {run.task_id: run for run in holding_runs(now).filter(task__in=doing)} if doing else {}
    in_review = (
        set(
            InboxItem.objects.filter(queries.undecided(), task__in=doing, kind=InboxKind.REVIEW).values_list(
                "task_id", flat=True
            )
        )
        if doing
        else set()
    )
    return BoardStateResult(
        board=board, columns=columns, holders=holders, in_review=in_review, hint=next_("get_my_work")
    )


def trashed_tasks(*, workspace: Workspace) -> QuerySet[Task]:
    return (
        Task.objects.filter(workspace=workspace, column=Column.TRASH)
        .select_related("board")
        .order_by("-trashed_at")
    )


def dropped_tasks(*, workspace: Workspace) -> QuerySet[Task]:
    return Task.objects.filter(workspace=workspace, column=Column.DROPPED).order_by("-updated_at")
