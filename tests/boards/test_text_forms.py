"""The text forms the fast paths write: an instant's ISO 8601 (boards.payloads.iso, remembered)
and a report's lists as JSON for their jsonb parameters (boards.services.fast.json_text)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from boards.payloads import _iso, iso
from boards.services.fast import json_text


def test_an_instant_prints_with_its_own_zones_offset() -> None:
    """Equal instants in other zones are equal datetimes with one hash: each keeps its own text."""
    instant = datetime(2026, 12, 8, 9, 30, 15, 250000, tzinfo=UTC)
    berlin = instant.astimezone(ZoneInfo("Europe/Berlin"))
    five = instant.astimezone(timezone(timedelta(hours=-5)))
    assert instant == berlin == five
    _iso.cache_clear()
    assert [iso(instant), iso(berlin), iso(five), iso(instant)] == [
        "2026-12-08T09:30:15.250000+00:00",
        "2026-12-08T10:30:15.250000+01:00",
        "2026-12-08T04:30:15.250000-05:00",
        "2026-12-08T09:30:15.250000+00:00",
    ]
    naive = datetime(2026, 12, 8, 9, 30, 15, 250000)
    assert iso(naive) == "2026-12-08T09:30:15.250000"
    assert iso(None) is None


@given(st.datetimes(timezones=st.one_of(st.none(), st.timezones())))
def test_an_instant_prints_as_isoformat_prints_it(value: datetime) -> None:
    assert iso(value) == value.isoformat()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.lists(JSON, max_size=5))
def test_a_list_is_written_as_the_value_json_dumps_writes(value: list[Any]) -> None:
    assert json.loads(json_text(value)) == json.loads(json.dumps(value))


def test_what_the_fast_encoder_cannot_write_is_written_by_json_dumps() -> None:
    lone = ["\ud800 half a pair"]
    assert json_text(lone) == json.dumps(lone)
    assert json_text(["é"]) == '["é"]'  # jsonb keeps the character, not the escape
