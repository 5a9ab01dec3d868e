"""Board writes, one transaction each, keyword-only arguments.

Split by subdomain: `board` (the default board and tasks), `boards_manage` (a workspace's
boards: create, rename, archive, restore), `trash`, `claim` (taking a task), `runs` (a run's
lease-guarded writes and the lease sweep), `delivery` (answers and approvals handed over once),
`inbox` (a person's decisions), `comments`, `labels` (a workspace's labels), `assignees` (who a
task is assigned to), `work` (get_my_work, which hands answers over), `next_task` (complete_task's
startNext), `bulk` (the list view's bulk actions), `person` (a person's own run: start, stop,
finish). Everything a surface calls is re-exported here.
"""

from boards.services.assignees import task_assign
from boards.services.board import (
    board_default,
    task_create,
    task_edit,
    task_move,
    task_update,
)
from boards.services.boards_manage import board_archive, board_create, board_rename, board_restore
from boards.services.bulk import BULK_TASKS, tasks_bulk
from boards.services.claim import task_claim, task_claim_in_loop
from boards.services.comments import comment_add
from boards.services.inbox import inbox_decide, inbox_undo_drop, question_answer
from boards.services.labels import label_create, task_label_new
from boards.services.person import PERSON_LEASE, person_move, person_start, person_stop
from boards.services.runs import (
    lease_sweep,
    run_complete,
    run_complete_in_loop,
    run_heartbeat,
    run_release,
    run_request_input,
)
from boards.services.trash import task_restore, task_trash, trash_purge
from boards.services.work import work_for_connection

__all__ = [
    "BULK_TASKS",
    "PERSON_LEASE",
    "board_archive",
    "board_create",
    "board_default",
    "board_rename",
    "board_restore",
    "comment_add",
    "inbox_decide",
    "inbox_undo_drop",
    "label_create",
    "lease_sweep",
    "person_move",
    "person_start",
    "person_stop",
    "question_answer",
    "run_complete",
    "run_complete_in_loop",
    "run_heartbeat",
    "run_release",
    "run_request_input",
    "task_assign",
    "task_claim",
    "task_claim_in_loop",
    "task_create",
    "task_edit",
    "task_label_new",
    "task_move",
    "task_restore",
    "task_trash",
    "task_update",
    "tasks_bulk",
    "trash_purge",
    "work_for_connection",
]
