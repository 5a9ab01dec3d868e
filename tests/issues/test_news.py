"""get_my_work tells a reporting agent when an issue it filed has news, and reading it clears it."""

from __future__ import annotations

import pytest

from issues.services import issue_reply
from tests.issues.helpers import mcp_calls, ok, submit
from tests.mcp.harness import agent_token, text_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_maintainer_reply_is_news_in_get_my_work_until_the_reporter_reads_it(alice, ws_a):
    token, agent = agent_token(alice, ws_a)
    issue = submit(agent).issue
    [before] = mcp_calls(token, ("get_my_work", {}))
    assert ok(before)["news"] == []
    issue_reply(issue=issue, user=alice, body="Which board does it happen on?")
    work, read, after = mcp_calls(
        token, ("get_my_work", {}), ("get_issue_status", {"id": issue.pk}), ("get_my_work", {})
    )
    assert [item["id"] for item in ok(work)["news"]] == [issue.pk]
    assert text_of(work).splitlines()[-1] == f'Next: get_issue_status {{"id": {issue.pk}}}'
    assert ok(read)["issue"]["id"] == issue.pk
    assert ok(after)["news"] == []
    assert not text_of(after).splitlines()[-1].startswith("Next: get_issue_status")
