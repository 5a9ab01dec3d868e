"""Comments on tasks: a person writes one (Markdown), with its event."""

from __future__ import annotations

from django.db import transaction

from accounts.models import User
from boards import clock, limits
from boards.models import Comment, Task
from boards.services.common import within_limits
from weft.events import emit


def comment_add(*, task: Task, author: User, body: str) -> Comment:
    """A comment on `task` by `author`; invalid_argument when empty, past PERSON_NOTE or with NUL."""
    with within_limits():
        text = limits.text("body", body, limits.PERSON_NOTE, required=True)
    with transaction.atomic():
        comment = Comment.objects.create(
            workspace_id=task.workspace_id, task=task, author=author, body=text, created_at=clock.db_now()
        )
        emit(
            workspace_id=task.workspace_id,
            type="task.commented",
            entity_type="task",
            entity_id=task.pk,
            payload={"taskId": task.pk, "commentId": comment.pk, "authorId": author.pk},
        )
    return comment
