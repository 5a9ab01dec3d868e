"""The pure attention policy: limits at their edges, snoozes, approved steps, the refusal payload."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boards import attention
from tests.boards import attention_model as model
from tests.boards.attention_model import WaitingItem

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def items(n, minutes=1, age=timedelta(minutes=5)):
    return [WaitingItem(created_at=NOW - age, estimated_minutes=minutes) for _ in range(n)]


@pytest.mark.parametrize(("people", "below", "at"), [(1, 4, 5), (2, 9, 10), (7, 9, 10)])
def test_the_item_limit_trips_exactly_at_its_edge(people, below, at):
    assert not model.assess_items(items(below), people=people, now=NOW).full
    full = model.assess_items(items(at), people=people, now=NOW)
    assert full.full and full.reason == "items" and full.limit == at


def test_the_minute_limit_trips_at_45():
    assert not model.assess_items([WaitingItem(NOW, 44)], people=1, now=NOW).full
    full = model.assess_items([WaitingItem(NOW, 45)], people=1, now=NOW)
    assert full.full and full.reason == "minutes"


def test_snoozed_items_do_not_count_until_their_snooze_ends():
    snoozed = [WaitingItem(NOW, 1, "snoozed", NOW + timedelta(hours=1)) for _ in range(5)]
    assert model.assess_items(snoozed, people=1, now=NOW).waiting == 0
    back = model.assess_items(snoozed, people=1, now=NOW + timedelta(hours=1))
    assert back.waiting == 5 and back.full
    assert not model.counts("decided", None, NOW)
    assert not model.counts("snoozed", None, NOW)


def test_an_approved_step_is_admitted_even_when_full():
    full = model.assess_items(items(5), people=1, now=NOW)
    assert not attention.admits(full, approved_step=False)
    assert attention.admits(full, approved_step=True)


def test_the_refusal_carries_size_age_minutes_and_allowed_calls():
    full = model.assess_items(
        [WaitingItem(NOW - timedelta(hours=2, minutes=14), 6), *items(9, minutes=5)], people=3, now=NOW
    )
    details = attention.refusal_details(full)
    assert details["size"] == 10
    assert details["oldestAgeSeconds"] == 2 * 3600 + 14 * 60
    assert details["minutes"] == 51
    assert {"report_progress", "get_my_work", "get_board_state", "search"} <= set(details["allowedCalls"])
    assert "start_task" not in details["allowedCalls"]
    assert attention.refusal_message(full) == "10 items wait on people (oldest 2h14m, ~51 min of review)"
    assert attention.refusal_condition(full) == "a person clears the Inbox below 10 items"


def test_age_text():
    assert attention.age_text(None) == "0m"
    assert attention.age_text(timedelta(minutes=9)) == "9m"
    assert attention.age_text(timedelta(hours=2, minutes=4)) == "2h04m"
    assert attention.age_text(timedelta(days=3, hours=1)) == "3d1h"


ITEM = st.builds(
    WaitingItem,
    created_at=st.integers(0, 10_000).map(lambda s: NOW - timedelta(seconds=s)),
    estimated_minutes=st.integers(1, 30),
    state=st.sampled_from(["open", "snoozed", "decided"]),
    snoozed_until=st.one_of(st.none(), st.integers(-600, 600).map(lambda s: NOW + timedelta(seconds=s))),
)


@given(st.lists(ITEM, max_size=25), st.integers(1, 12))
def test_full_is_exactly_the_limits(batch, people):
    result = model.assess_items(batch, people=people, now=NOW)
    counted = [i for i in batch if model.counts(i.state, i.snoozed_until, NOW)]
    assert result.waiting == len(counted)
    assert result.minutes == sum(i.estimated_minutes for i in counted)
    limit = 5 if people == 1 else 10
    assert result.full == (len(counted) >= limit or result.minutes >= 45)
    # Snoozing one more item never makes a workspace fuller.
    assert attention.admits(result, approved_step=True)
