"""A suite's JSON (artifacts/bench/<suite>.json) as the Markdown that the run printed.

    python -m bench.render [artifacts/bench/summary.json]

The run prints through this too, so docs/performance.md's tables are the JSON's, re-rendered.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.stats import fmt, table

HEADERS = ["series", "p50 ms", "p99 ms", "per s", "errors", "server CPU ms/op", "DB CPU ms/op", "SQL ms/op",
           "stmts/op", "load"]  # fmt: skip


def _num(value: Any, digits: int = 2) -> str:
    return fmt(float(value) if value is not None else None, digits)


def suite_markdown(payload: dict[str, Any]) -> str:
    rows = [
        [
            name,
            _num(s.get("p50_ms")),
            _num(s.get("p99_ms")),
            _num(s.get("rate"), 1),
            str(s.get("errors", 0)),
            _num(s.get("server_cpu_ms")),
            _num(s.get("db_cpu_ms")),
            _num(s.get("sql_ms")),
            _num(s.get("statements"), 1),
            _num(s.get("load1"), 1),
        ]
        for name, s in payload["series"].items()
    ]
    quick = " (quick)" if payload.get("quick") else ""
    parts = [
        f"## {payload['suite']} — median of {payload['rounds']} interleaved rounds{quick}",
        table(HEADERS, rows),
    ]
    ratios = payload.get("ratios") or {}
    if ratios:
        targets = payload.get("targets") or {}
        parts.append(
            table(
                ["ratio", "value", "target"],
                [[k, _num(v, 3), targets.get(k, "—")] for k, v in ratios.items()],
            )
        )
    if payload.get("notes"):
        parts.append(str(payload["notes"]))
    return "\n\n".join(parts)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path("artifacts/bench/summary.json")
    results = json.loads(path.read_text())
    for value in [results] if "series" in results else results.values():
        if isinstance(value, dict) and "series" in value:
            print(suite_markdown(value) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
