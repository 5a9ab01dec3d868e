"""The benchmark harness's arithmetic: percentiles, medians of rounds, ratios, the rotating order,
the load driver's counting, reading a py-spy profile, and the rate mode's CPU a cycle
(bench/stats.py, bench/driver.py, bench/profile_cycle.py)."""

from __future__ import annotations

import asyncio
import math

import pytest

from bench.driver import drive
from bench.harness import profile_summary
from bench.stats import Sample, fmt, median, percentile, ratio, rotations, summarise, table
from bench.suite_cycle import _claim_of


def test_it_takes_the_nearest_rank_percentile_a_measured_value() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 99) == 5.0
    assert percentile(values, 0) == 1.0
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile([7.0], 99) == 7.0


def test_it_answers_nan_for_no_values_and_refuses_a_percentile_out_of_range() -> None:
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_it_takes_the_median_of_the_rounds_that_ran() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([1.0, 2.0, 3.0, 4.0]) == 2.5
    assert median([math.nan, 4.0, 2.0]) == 3.0
    assert math.isnan(median([]))


def test_a_ratio_is_nan_when_a_side_is_missing_or_zero() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert math.isnan(ratio(1.0, 0.0))
    assert math.isnan(ratio(math.nan, 2.0))
    assert math.isnan(ratio(2.0, math.nan))


def test_rotations_run_every_series_once_a_round_and_each_first_in_turn() -> None:
    assert rotations(["A", "B"], 4) == [["A", "B"], ["B", "A"], ["A", "B"], ["B", "A"]]
    order = rotations(["A", "B", "C"], 3)
    assert order == [["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"]]
    assert all(sorted(r) == ["A", "B", "C"] for r in order)
    assert [r[0] for r in order] == ["A", "B", "C"]
    assert rotations([], 3) == []


def test_a_summary_is_the_median_of_each_rounds_figures_and_sums_errors() -> None:
    rounds = [
        Sample(latencies=[0.001, 0.002, 0.003], elapsed=1.0, completed=3, errors=0),
        Sample(latencies=[0.010, 0.020, 0.030], elapsed=2.0, completed=3, errors=1),
        Sample(latencies=[0.004, 0.005, 0.006], elapsed=3.0, completed=3, errors=0),
    ]
    summary = summarise("s", rounds, {"sql_ms": [1.0, 5.0, 2.0]})
    assert summary.p50_ms == pytest.approx(5.0)  # the rounds' p50s are 2, 20 and 5 ms
    assert summary.rate == pytest.approx(1.5)  # 3, 1.5 and 1 per second
    assert summary.errors == 1
    assert summary.extra == {"sql_ms": 2.0}
    assert summary.as_json()["per_round_p50_ms"] == [2.0, 20.0, 5.0]


def test_a_series_that_did_not_run_reads_n_a() -> None:
    summary = summarise("skipped", [Sample(), Sample()])
    assert math.isnan(summary.p50_ms) and math.isnan(summary.rate)
    assert fmt(summary.p50_ms) == "n/a"
    assert summary.as_json()["p50_ms"] is None
    assert fmt(1.2345) == "1.23"


def test_a_table_lines_its_columns_up() -> None:
    text = table(["a", "bb"], [["1", "2"], ["333", "4"]])
    lines = text.splitlines()
    assert lines[0] == "| a   | bb |"
    assert lines[1] == "|-----|----|"
    assert lines[3] == "| 333 | 4  |"


async def test_the_driver_times_count_calls_after_an_untimed_warm_up() -> None:
    calls: list[int] = []

    async def op(worker: int) -> float | None:
        calls.append(worker)
        number = len(calls)
        await asyncio.sleep(0)
        return None if number % 5 == 0 else 0.001

    sample = await drive(op, concurrency=3, count=20, warmup=4)
    assert len(calls) == 24
    assert set(calls) == {0, 1, 2}
    assert sample.completed + sample.errors == 20
    assert sample.errors == 4  # calls 5, 10, 15 and 20: the four warm-up calls are not counted
    assert len(sample.latencies) == sample.completed
    assert sample.elapsed > 0


async def test_the_driver_stops_at_its_time_cap_after_at_least_one_call() -> None:
    async def slow(worker: int) -> float | None:
        await asyncio.sleep(0.05)
        return 0.05

    sample = await drive(slow, concurrency=1, count=100, max_seconds=0.01)
    assert sample.completed == 1


def test_the_next_claim_is_found_anywhere_in_a_completion_but_not_the_run_just_ended() -> None:
    answer = {
        "runId": "old",
        "leaseToken": "t0",
        "next": {"claim": {"runId": "new", "leaseToken": "t1"}},
    }
    assert _claim_of(answer, "old") == ("new", "t1")
    assert _claim_of({"runId": "old", "leaseToken": "t0"}, "old") is None
    assert _claim_of({"next": [{"runId": "n", "leaseToken": "x"}]}, "old") == ("n", "x")
    assert _claim_of({"next": {"error": {"code": "already_claimed"}}}, "old") is None


def test_a_profile_is_read_as_shares_of_busy_samples_by_layer() -> None:
    raw = "\n".join(
        [
            "run (uvicorn/server.py:1);select (selectors.py:452);EpollSelector.select (selectors.py:452) 50",
            "a (asgiref/sync.py:1);SyncToAsync.thread_handler (asgiref/sync.py:635);"
            "q (django/db/models/query.py:1) 30",
            "a (asgiref/sync.py:1);SyncToAsync.thread_handler (asgiref/sync.py:635);"
            "ClientCursorMixin._execute_send (psycopg/client_cursor.py:78) 10",
            "h (mcp/server/lowlevel/server.py:9) 10",
        ]
    )
    summary = profile_summary(raw)
    assert summary["samples"] == 50  # the idle event loop is left out
    assert summary["Django ORM"] == 0.6
    assert summary["waiting on PostgreSQL"] == 0.2
    assert summary["MCP SDK"] == 0.2
    assert summary["(inclusive) in sync_to_async threads"] == 0.8


def test_the_rate_mode_counts_each_sides_cpu_a_cycle_from_the_schedulers_counters(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`profile_cycle --rate`: this process stands in for the server and the load driver (each
    cycle burns ~3 ms of CPU); for backends, a process that had ended before and one that ends
    during the series (its counters read as none at the end): neither counts."""
    import os
    import re
    import subprocess
    import time

    from bench import profile_cycle
    from bench.profile_cycle import _rate, _schedstat

    ending = -1  # no such pid: its counters come from `readings`
    readings = iter([(0.5, 0.1), (0.0, 0.0)])
    monkeypatch.setattr(
        profile_cycle, "_schedstat", lambda pid: next(readings) if pid == ending else _schedstat(pid)
    )

    gone = subprocess.Popen(["true"])
    gone.wait()
    assert _schedstat(gone.pid) == (0.0, 0.0)
    on_cpu, waiting = _schedstat(os.getpid())
    assert on_cpu > 0 and waiting >= 0

    async def burn(worker: int) -> float:
        began = time.process_time()
        while time.process_time() - began < 0.003:
            pass
        return 0.003

    asyncio.run(_rate(burn, 40, 2, os.getpid(), [gone.pid, ending]))
    line = capsys.readouterr().out
    found = re.search(r"server CPU ([\d.]+) ms, PostgreSQL CPU ([\d.]+) ms", line)
    assert found, line
    assert 2.5 <= float(found.group(1)) <= 6.0, line
    assert float(found.group(2)) == 0.0, line
    rate = re.match(r"([\d.]+) cycles/s, errors 0;", line)
    assert rate and 0 < float(rate.group(1)) <= 400, line  # one thread: 3 ms of CPU a cycle at least
    # The load driver is this process too: its CPU a cycle is the burn's.
    driver = re.search(r"the load driver's CPU ([\d.]+) ms", line)
    assert driver and 2.5 <= float(driver.group(1)) <= 6.0, line
