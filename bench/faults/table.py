"""The results table of docs/guarantees.md from one or more runs' summary.json files.

`python -m bench.faults.table artifacts/faults/summary.json [...]` prints it as Markdown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HEAD = (
    "| scenario | seconds | agents | claims | completions | calls | faults injected | violations "
    "| recovery |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def _recovery(result: dict[str, Any]) -> str:
    if "claims_per_second_during" in result:
        before, during = result["claims_per_second_before"], result["claims_per_second_during"]
        return f"none needed: {before} → {during} claims/s"
    if "subscriptions" in result:
        return "none needed: the 410 subscription " + ", ".join(
            state for state in result["subscriptions"].values() if state != "active"
        )
    if result.get("recovery_seconds") is None:
        return "—"
    waits = result.get("takeover_seconds") or result.get("recoveries") or []
    spread = f" (each: {', '.join(str(w) for w in waits)})" if len(waits) > 1 else ""
    return f"{result['recovery_seconds']} s{spread}"


def rows(results: list[dict[str, Any]]) -> list[str]:
    return [
        f"| `{r['scenario']}` | {r['seconds']:.0f} | {r['agents']} | {r['claims']} | {r['completions']} | "
        f"{r['calls']} | {r.get('faults', 0)} | {r['violations']} | {_recovery(r)} |"
        for r in results
    ]


def main(paths: list[str]) -> int:
    results = [r for path in paths for r in json.loads(Path(path).read_text())["scenarios"]]
    print(HEAD)
    print("\n".join(rows(results)))
    claims = sum(r["claims"] for r in results)
    calls = sum(r["calls"] for r in results)
    violations = sum(r["violations"] for r in results)
    print(
        f"| **all** | | | **{claims}** | {sum(r['completions'] for r in results)} | {calls} | "
        f"{sum(r.get('faults', 0) for r in results)} | **{violations}** | |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
