"""The stream's request parsing (pure): a cursor or filter it cannot hold is a coded refusal."""

from __future__ import annotations

import pytest

from weft.errors import WeftError
from weft.stream.request import fix_for, parse_request


@pytest.mark.parametrize(
    "raw", ["abc", "-1", "1\x00", "\x00", "9223372036854775808", str(2**64), "1 2", "+5", "0x10", "１２"]
)
def test_a_last_event_id_that_is_not_a_position_is_refused_with_its_fix(raw):
    with pytest.raises(WeftError) as refused:
        parse_request("", raw)
    assert refused.value.code == "invalid_argument" and refused.value.details["field"] == "Last-Event-ID"
    assert "\x00" not in refused.value.message, "the message shows the value escaped"
    assert fix_for(refused.value).startswith("send Last-Event-ID as the id")


def test_the_largest_cursor_it_accepts_fits_a_bigint():
    assert parse_request("", "999999999999999999").after == 999_999_999_999_999_999 < 2**63
    assert parse_request("after=7", " 12 ").after == 12, "the header wins over after="


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("types=task.create", "types"),
        ("types=task.created,run.begun", "types"),
        ("entity_type=tasks", "entity_type"),
        ("entity_id=a%00b", "entity_id"),
        ("types=" + "a.b," * 31, "types"),
        ("entity_id=" + "9" * 65, "entity_id"),
    ],
)
def test_a_filter_naming_what_no_event_carries_is_refused(query, field):
    with pytest.raises(WeftError) as refused:
        parse_request(query, None)
    assert refused.value.details["field"] == field


@pytest.mark.parametrize(
    ("query", "header", "field"), [("after=101", None, "after"), ("", "101", "Last-Event-ID")]
)
def test_a_cursor_past_the_newest_event_is_refused(query, header, field):
    request = parse_request(query, header)
    request.check_cursor(101)
    with pytest.raises(WeftError) as refused:
        request.check_cursor(100)
    assert (
        refused.value.details["field"] == field and "past the newest event id, 100" in refused.value.message
    )
