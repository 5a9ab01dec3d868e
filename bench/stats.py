"""PURE: the numbers a benchmark reports — percentiles, medians of rounds, ratios, the rotating order.

Every figure the harness prints comes from here, so the arithmetic is tested once
(tests/bench/test_stats.py) and no suite computes a percentile its own way.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (q in 0..100) of `values`: a measured value, never interpolated."""
    if not values:
        return math.nan
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    """The median, NaN for no values (a series that did not run)."""
    clean = [v for v in values if not math.isnan(v)]
    return statistics.median(clean) if clean else math.nan


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when either is missing or the denominator is 0."""
    if math.isnan(numerator) or math.isnan(denominator) or denominator == 0:
        return math.nan
    return numerator / denominator


def rotations(names: Sequence[str], rounds: int) -> list[list[str]]:
    """The order of each round: A B C, then B C A, then C A B … so no series always runs first.

    Alternating (A B, B A) for two series; every series runs once per round.
    """
    if not names:
        return []
    return [[names[(r + i) % len(names)] for i in range(len(names))] for r in range(rounds)]


@dataclass
class Sample:
    """One series run once: its latencies (seconds), wall time and counts."""

    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    completed: int = 0
    errors: int = 0
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def p50_ms(self) -> float:
        return percentile(self.latencies, 50) * 1000

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies, 99) * 1000

    @property
    def rate(self) -> float:
        """Completed units per second of wall time (requests, cycles or jobs)."""
        return self.completed / self.elapsed if self.elapsed > 0 else math.nan


@dataclass
class Summary:
    """A series over its rounds: each figure is the median of the rounds' figures."""

    name: str
    rounds: int
    p50_ms: float
    p99_ms: float
    rate: float
    errors: int
    per_round_p50_ms: list[float]
    per_round_rate: list[float]
    extra: dict[str, float] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        def clean(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 4)

        return {
            "name": self.name,
            "rounds": self.rounds,
            "p50_ms": clean(self.p50_ms),
            "p99_ms": clean(self.p99_ms),
            "rate": clean(self.rate),
            "errors": self.errors,
            "per_round_p50_ms": [clean(v) for v in self.per_round_p50_ms],
            "per_round_rate": [clean(v) for v in self.per_round_rate],
            **{k: clean(v) for k, v in self.extra.items()},
        }


def summarise(name: str, samples: Sequence[Sample], extra: dict[str, list[float]] | None = None) -> Summary:
    """The median over rounds of each round's p50, p99 and rate; errors are summed (they are never noise)."""
    return Summary(
        name=name,
        rounds=len(samples),
        p50_ms=median([s.p50_ms for s in samples]),
        p99_ms=median([s.p99_ms for s in samples]),
        rate=median([s.rate for s in samples]),
        errors=sum(s.errors for s in samples),
        per_round_p50_ms=[s.p50_ms for s in samples],
        per_round_rate=[s.rate for s in samples],
        extra={k: median(v) for k, v in (extra or {}).items()},
    )


def fmt(value: float | None, digits: int = 2) -> str:
    """A figure for a table: 'n/a' for a series that did not run."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table whose columns line up in a terminal too."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])
