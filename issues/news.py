"""The issues app's news for get_my_work: an issue this connection filed on which maintainers acted
since its last get_issue_status (that read marks it read)."""

from __future__ import annotations

from accounts.models import AgentConnection
from boards.news import News
from issues.selectors import news_for_connection
from weft.hints import Call


def issue_news(connection: AgentConnection) -> list[News]:
    return [
        News(
            kind="issue",
            id=issue.pk,
            summary=f"issue {issue.pk} ({issue.status}): the maintainers answered; read it with"
            " get_issue_status",
            read=Call("get_issue_status", {"id": issue.pk}),
        )
        for issue in news_for_connection(connection=connection)
    ]
