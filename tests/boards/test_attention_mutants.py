"""The attention refusal at the points the first mutation run found untested: its text and payload."""

from datetime import UTC, datetime, timedelta

from boards import attention
from tests.boards import attention_model as model
from tests.boards.attention_model import WaitingItem

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def test_the_refusal_payload_carries_every_field_an_agent_needs():
    items = [WaitingItem(NOW - timedelta(minutes=90), 3)] + [WaitingItem(NOW, 2)] * 4
    full = model.assess_items(items, people=1, now=NOW)
    assert attention.refusal_details(full) == {
        "size": 5,
        "limit": 5,
        "oldestAgeSeconds": 5400,
        "minutes": 11,
        "minuteLimit": 45,
        "reason": "items",
        "allowedCalls": [
            "report_progress",
            "get_my_work",
            "get_board_state",
            "search",
            "get_task",
            "complete_task",
            "release_task",
        ],
    }


def test_a_refusal_on_minutes_alone_names_the_45_minute_limit():
    full = attention.assess(waiting=0, minutes=45, oldest_at=None, people=1, now=NOW)
    assert full.full and full.reason == "minutes"
    assert attention.refusal_condition(full) == "a person clears the Inbox below 45 minutes of review"
    details = attention.refusal_details(full)
    assert details["oldestAgeSeconds"] == 0
    assert details["minuteLimit"] == 45 and details["reason"] == "minutes"


def test_the_refusal_message_says_item_for_one_and_items_for_two():
    one = model.assess_items([WaitingItem(NOW - timedelta(minutes=9), 50)], people=1, now=NOW)
    assert attention.refusal_message(one) == "1 item waits on people (oldest 9m, ~50 min of review)"
    two = model.assess_items([WaitingItem(NOW, 25)] * 2, people=1, now=NOW)
    assert attention.refusal_message(two) == "2 items wait on people (oldest 0m, ~50 min of review)"
