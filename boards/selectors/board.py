"""The board: which board a page or tool reads, its columns with their cards (who holds what,
what waits in the Inbox), the list view's sorted rows, the board state agents read, and the trash.

Reads only: a workspace with no board yet reads as an empty board, and the first write that
needs one (`task_create`) creates it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Case, Count, F, Prefetch, Q, QuerySet, When
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan
from django.db.models.functions import Lower

from accounts.models import Workspace
from boards import clock, limits, queries
from boards.access import access_board
from boards.board_page import After, BoardStateResult, ColumnPage, board_hint, decode_cursor
from boards.models import BOARD_COLUMNS, Approval, Board, Column, InboxItem, InboxKind, Run, Task
from boards.payloads import holder_name

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
    # The person who holds the task (a person's run), else None: an agent holds it, or nobody.
    person_id: int | None = None
    # A person approved this next step and the agent has not carried it out yet.
    approved_step: str = ""
    # The approved step the live run was started to carry out.
    carrying_out: str = ""

    @property
    def startable(self) -> bool:
        """A person may press Start: Backlog or Todo, and nobody holds it."""
        return not self.holder and self.task.column in (Column.BACKLOG, Column.TODO)

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
    """The board a read names (an archived one too), else the workspace's first live board; None
    while it has none."""
    if board_id is not None:
        return access_board(workspace, board_id)
    return Board.objects.filter(workspace=workspace, archived_at=None).order_by("pk").first()


def boards_of(workspace: Workspace) -> QuerySet[Board]:
    """The workspace's live boards, oldest first (the board picker, list_boards, filing an issue)."""
    return Board.objects.filter(workspace=workspace, archived_at=None).order_by("created_at", "pk")


@dataclass(frozen=True)
class BoardsOverview:
    """The Boards page: live boards oldest first, archived ones apart, newest archived first, each
    with its number of open tasks (Backlog, Todo, Doing)."""

    live: list[Board]
    archived: list[Board]

    @property
    def last_live(self) -> bool:
        return len(self.live) <= 1


def boards_overview(workspace: Workspace) -> BoardsOverview:
    open_tasks = Count("tasks", filter=Q(tasks__column__in=(Column.BACKLOG, Column.TODO, Column.DOING)))
    rows = Board.objects.filter(workspace=workspace).annotate(open_tasks=open_tasks)
    return BoardsOverview(
        live=list(rows.filter(archived_at=None).order_by("created_at", "pk")),
        archived=list(rows.exclude(archived_at=None).order_by("-archived_at", "-pk")),
    )


def holding_runs(now: datetime) -> QuerySet[Run]:
    """The runs that hold their task at `now`, with who holds them and the step they carry out."""
    return Run.objects.filter(queries.held(now)).select_related("connection", "user", "approval")


def open_approvals(now: datetime) -> QuerySet[Approval]:
    """Approved next steps not yet carried out (unused, unexpired), newest first."""
    return Approval.objects.filter(used_at=None, expires_at__gt=now).order_by("-created_at", "-pk")


def _card(task: Task, now: datetime, waiting: dict[int, str]) -> Card:
    card = Card(task=task, waiting_on=waiting.get(task.pk, ""))
    card.overdue = bool(task.due_at and task.due_at < now and task.column != Column.DONE)
    runs: list[Run] = getattr(task, "holding_runs", [])
    if runs:
        run = runs[0]
        card.holder = holder_name(run)
        card.lease_left = max(run.lease_expires_at - now, timedelta(0))
        card.heartbeat_age = max(now - run.last_heartbeat_at, timedelta(0))
        card.person_id = run.user_id if run.connection_id is None else None
        card.carrying_out = run.approval.step if run.approval is not None else ""
    approvals: list[Approval] = getattr(task, "open_approvals", [])
    if approvals and not card.carrying_out:
        card.approved_step = approvals[0].step
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
        Prefetch("runs", queryset=holding_runs(now), to_attr="holding_runs"),
        Prefetch("approvals", queryset=open_approvals(now), to_attr="open_approvals"),
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


def board_state(*, workspace: Workspace, board_id: Any = None, cursor: str | None = None) -> BoardStateResult:
    """The board's four columns, a page each, with who holds what (expired leases are not held);
    after a `cursor`, the next page of the column it names."""
    after = decode_cursor(cursor, board_id) if cursor is not None else None
    now = clock.db_now()
    board = board_for_read(workspace, board_id)
    names = [after.column] if after is not None else [str(c) for c in BOARD_COLUMNS]
    pages = {name: _column_page(board, name, after) for name in names}
    doing = pages[Column.DOING].tasks if Column.DOING in pages else []
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
    paged = after is not None
    return BoardStateResult(
        board=board,
        pages=pages,
        holders=holders,
        in_review=in_review,
        hint=board_hint(board, pages, paged=paged),
        paged=paged,
    )


def _column_page(board: Board | None, column: str, after: After | None) -> ColumnPage:
    """One column's tasks in board order after `after` (from the start without), one page of them.

    A keyset read on the (board, column, position, id) index: LIMIT page + 1 rows however long the
    column; the column is counted (up to BOARD_COUNT_MAX + 1 rows) only when the page is full."""
    if board is None:
        return ColumnPage(tasks=[], count=0, exact=True, next_cursor=None)
    rows = Task.objects.filter(board=board, column=column)
    start = rows
    if after is not None:
        start = rows.filter(TupleGreaterThan(Tuple(F("position"), F("id")), (after.position, after.id)))
    limit = limits.BOARD_PAGE
    # The payload reads labels from `label_names`; the assignee comes in the same query.
    people = start.select_related("assigned_user", "assigned_connection")
    found = list(people.order_by("position", "pk")[: limit + 1])
    tasks = found[:limit]
    if len(found) <= limit and after is None:
        return ColumnPage(tasks=tasks, count=len(tasks), exact=True, next_cursor=None)
    counted = rows.order_by()[: limits.BOARD_COUNT_MAX + 1].count()
    more = len(found) > limit
    return ColumnPage(
        tasks=tasks,
        count=min(counted, limits.BOARD_COUNT_MAX),
        exact=counted <= limits.BOARD_COUNT_MAX,
        next_cursor=After(column, tasks[-1].position, tasks[-1].pk).encode() if more else None,
    )


def trashed_tasks(*, workspace: Workspace) -> QuerySet[Task]:
    return (
        Task.objects.filter(workspace=workspace, column=Column.TRASH)
        .select_related("board")
        .order_by("-trashed_at")
    )


def dropped_tasks(*, workspace: Workspace) -> QuerySet[Task]:
    return Task.objects.filter(workspace=workspace, column=Column.DROPPED).order_by("-updated_at")
