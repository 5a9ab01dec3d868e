"""Nothing unredacted is stored: every secret of the redaction corpus is sent through MCP — in
issue titles, bodies and thread messages — and then every stored row that can hold agent text
(issues, messages, the event log) is read back and searched for each secret."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import Plan
from issues.models import Issue, IssueMessage
from tests.issues.helpers import mcp_calls, ok
from tests.issues.redaction_corpus import secrets
from tests.mcp.harness import agent_token
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

PER_CALL = 12  # corpus texts per body, well under the body and message limits


def _batches(texts: list[str]) -> list[str]:
    return ["\n---\n".join(texts[i : i + PER_CALL]) for i in range(0, len(texts), PER_CALL)]


def _stored_text() -> str:
    rows: list[Any] = [
        *Issue.objects.values_list("title", "body", "resolution", "reporter_app_version"),
        *IssueMessage.objects.values_list("body", "reporter_app_version"),
        *Event.objects.values_list("payload", flat=True),
    ]
    return "\n".join(str(row) for row in rows)


def test_no_secret_of_the_corpus_is_stored_through_any_issue_tool(alice, ws_a):
    ws_a.plan = Plan.named(Plan.PRO)
    ws_a.save(update_fields=["plan"])
    token, _ = agent_token(alice, ws_a)
    corpus = [s for s in secrets() if "\x00" not in s.text]  # NUL is refused before redaction
    bodies = _batches([s.text for s in corpus])
    titles = [s.text.splitlines()[0][:200] for s in corpus if "\n" not in s.text[:200]]
    half = len(bodies) // 2
    filed = mcp_calls(
        token,
        *[
            (
                "submit_issue",
                {
                    "title": titles[n % len(titles)],
                    "body": body,
                    "kind": "bug",
                    "reporter_app_version": "1.4.2",
                },
            )
            for n, body in enumerate(bodies[:half])
        ],
    )
    issue_id = ok(filed[0])["issue"]["id"]
    for result in mcp_calls(
        token, *[("add_issue_message", {"id": issue_id, "body": b}) for b in bodies[half:]]
    ):
        ok(result)
    stored = _stored_text()
    leaked = [value for s in corpus for value, _kind in s.found if value in stored]
    assert not leaked, f"{len(leaked)} secrets stored as sent, e.g. {leaked[:3]}"
    # The texts did arrive: each submission and message is there, with placeholders in place.
    assert Issue.objects.count() == half and IssueMessage.objects.count() == len(bodies) - half
    assert "<EMAIL:" in stored and "<JWT:" in stored
