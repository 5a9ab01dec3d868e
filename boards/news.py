"""News for an agent's get_my_work from other apps, without boards knowing those apps.

An app registers a source at start-up (its AppConfig.ready); `work_for_connection` asks every
source for the connection's news and, when nothing more urgent is due, points at the first item's
read call. The issues app is one source: an issue the connection filed on which maintainers acted
since its last read. Boards is another (`approved_steps`): a next step a person approved that the
connection has not started yet, every time it asks until it does (the `approvals` list of
get_my_work names it once, when it is handed over).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accounts.models import AgentConnection
from weft.hints import Call


@dataclass(frozen=True)
class News:
    kind: str  # what the item is: "issue"
    id: int
    summary: str  # one line for the agent
    read: Call  # the call that reads it (and so marks it read)

    def payload(self) -> dict[str, object]:
        return {"kind": self.kind, "id": self.id, "summary": self.summary, "read": self.read.as_text()}


Source = Callable[[AgentConnection], list[News]]
_SOURCES: list[Source] = []


def register_news_source(source: Source) -> None:
    """Add a source once (an app's ready() may run more than once in tests)."""
    if source not in _SOURCES:
        _SOURCES.append(source)


def news_for(connection: AgentConnection) -> list[News]:
    """Every source's news for this connection, in the order the sources registered."""
    return [item for source in _SOURCES for item in source(connection)]


def approved_step_summary(*, task_id: int, title: str, step: str, until: str) -> str:
    """The words get_my_work says an approved next step in."""
    return (
        f"Approved next step on task {task_id} ({title}), valid until {until}: {step}"
        " — a person accepted the result and approved exactly this step; start_task it and do only that"
    )


def approved_steps(connection: AgentConnection) -> list[News]:
    """This connection's approved next steps not yet started (unused, unexpired, no live run on them).

    Expiry is read by the database in the query (`Now()`: statement_timestamp() on PostgreSQL, as
    `clock.db_now` reads it), so naming them costs one query and no clock read.
    """
    from django.db.models.functions import Now

    from boards import lease
    from boards.models import Approval
    from boards.payloads import iso

    waiting = (
        Approval.objects.select_related("task")
        .filter(connection=connection, used_at=None, expires_at__gt=Now())
        .exclude(runs__state__in=lease.LIVE_STATES)
        .order_by("created_at", "pk")
    )
    return [
        News(
            "approvedStep",
            a.task_id,
            approved_step_summary(
                task_id=a.task_id, title=a.task.title, step=a.step, until=str(iso(a.expires_at))
            ),
            Call("start_task", {"id": a.task_id}),
        )
        for a in waiting
    ]
