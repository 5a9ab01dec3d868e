"""News for an agent's get_my_work from other apps, without boards knowing those apps.

An app registers a source at start-up (its AppConfig.ready); `work_for_connection` asks every
source for the connection's news and, when nothing more urgent is due, points at the first item's
read call. The issues app is one source: an issue the connection filed on which maintainers acted
since its last read.
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
