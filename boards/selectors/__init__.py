"""Board reads, by subject, for every surface (web pages, MCP tools and the REST API alike).

work: an agent's own work (get_my_work) · board: columns, list rows, board state, trash · tasks: one task,
its run timeline and history, search · inbox: the Inbox and the attention meter.
"""

from boards.selectors.board import (
    BoardColumn,
    BoardFilter,
    Card,
    ListSort,
    SortHeader,
    board_columns,
    board_for_read,
    board_rows,
    board_state,
    boards_of,
    dropped_tasks,
    holding_runs,
    trashed_tasks,
    with_people,
)
from boards.selectors.inbox import (
    InboxEntry,
    attention_status,
    inbox_entries,
    inbox_for_person,
    inbox_for_user,
)
from boards.selectors.labels import AssigneeChoice, assignee_choices, task_people, workspace_labels
from boards.selectors.tasks import (
    Entry,
    RunView,
    report_data,
    run_timeline,
    safe_href,
    search_tasks,
    task_comments,
    task_detail,
    task_history,
    task_runs,
)

__all__ = [
    "AssigneeChoice",
    "BoardColumn",
    "BoardFilter",
    "Card",
    "Entry",
    "InboxEntry",
    "ListSort",
    "RunView",
    "SortHeader",
    "assignee_choices",
    "attention_status",
    "board_columns",
    "board_for_read",
    "board_rows",
    "board_state",
    "boards_of",
    "dropped_tasks",
    "holding_runs",
    "inbox_entries",
    "inbox_for_person",
    "inbox_for_user",
    "report_data",
    "run_timeline",
    "safe_href",
    "search_tasks",
    "task_comments",
    "task_detail",
    "task_history",
    "task_people",
    "task_runs",
    "trashed_tasks",
    "with_people",
    "workspace_labels",
]
