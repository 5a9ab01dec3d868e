"""The people's board pages, under /w/<slug>/ (the workspace comes from the URL and the seat)."""

from django.urls import path

from boards import label_views, person_views, views, views_boards

app_name = "boards"

urlpatterns = [
    path("board/", views.board, name="board"),
    path("boards/", views_boards.boards, name="boards"),
    path("boards/new/", views_boards.board_create, name="board_create"),
    path("boards/<int:board_id>/rename/", views_boards.board_rename, name="board_rename"),
    path("boards/<int:board_id>/archive/", views_boards.board_archive, name="board_archive"),
    path("boards/<int:board_id>/restore/", views_boards.board_restore, name="board_restore"),
    path("trash/", views.trash, name="trash"),
    path("tasks/new/", views.task_create, name="task_create"),
    path("tasks/<int:task_id>/", views.task, name="task"),
    path("tasks/<int:task_id>/edit/", views.task_edit, name="task_edit"),
    path("tasks/<int:task_id>/comments/", views.comment_add, name="comment_add"),
    path("tasks/<int:task_id>/move/", views.task_move, name="task_move"),
    path("tasks/<int:task_id>/start/", person_views.task_start, name="task_start"),
    path("tasks/<int:task_id>/stop/", person_views.task_stop, name="task_stop"),
    path("tasks/<int:task_id>/trash/", views.task_trash, name="task_trash"),
    path("tasks/<int:task_id>/restore/", views.task_restore, name="task_restore"),
    path("tasks/<int:task_id>/labels/", label_views.task_labels, name="task_labels"),
    path("tasks/<int:task_id>/labels/new/", label_views.label_create, name="label_create"),
    path("tasks/<int:task_id>/assignee/", label_views.task_assign, name="task_assign"),
    path("inbox/", views.inbox, name="inbox"),
    path("inbox/<int:item_id>/decide/", views.inbox_decide, name="inbox_decide"),
    path("inbox/<int:item_id>/undo-drop/", views.inbox_undo_drop, name="inbox_undo_drop"),
    path("questions/<int:question_id>/answer/", views.question_answer, name="question_answer"),
    path("tasks/bulk/", views.tasks_bulk, name="tasks_bulk"),
]
