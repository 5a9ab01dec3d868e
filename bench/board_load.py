"""The board's load time on the embedded default: 200 tasks beside an empty board and a bare page.

Weft runs as `make run` runs it (SQLite file, debug on, one uvicorn worker) on a throwaway
database; Debian's Chromium loads three pages in interleaved, rotating rounds (A B C, B C A, …):

- `login`: the sign-in page, signed out: the bare cost of a page of Weft's (the baseline);
- `board-0`: the board of a workspace with no tasks;
- `board-200`: the board of a workspace with 200 tasks (120 Backlog, 50 Todo, 30 Done).

Each load is a fresh page in a warm, signed-in browser context; the figure is the load event's
time from the navigation's start (PerformanceNavigationTiming.loadEventEnd), with the server's
part (responseEnd) beside it. Medians over rounds, and the ratio to the baseline.

    .venv/bin/python -m bench.board_load [--rounds 15]        # or: make bench-board

Prints a table and writes artifacts/bench/board_load.json. Exit 1 when board-200's median load
is 1 s or more (issue 15's bound), or when a page does not answer 200.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "artifacts" / "bench" / "board_load.json"
CHROMIUM = "/usr/bin/chromium"
LAYOUT = {"backlog": 120, "todo": 50, "done": 30}
BOUND_MS = 1000.0
TIMING = """() => { const n = performance.getEntriesByType('navigation')[0];
  return {load: n.loadEventEnd, server: n.responseEnd, dom: n.domContentLoadedEventEnd}; }"""


def _seed() -> dict[str, Any]:
    """Two workspaces of one owner, one with LAYOUT's tasks; the owner's session cookie."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    from accounts.models import User
    from accounts.services import workspace_create
    from boards.models import Task
    from boards.services import board_default

    owner = User.objects.create_user(email="bench-board@example.com", password="a long bench password")
    empty = workspace_create(owner=owner, name="Empty", plan_code="pro")
    full = workspace_create(owner=owner, name="Full", plan_code="pro")
    board = board_default(workspace=full)
    rows = [
        Task(workspace=full, board=board, title=f"{column} {n:03}", column=column, position=n, priority=n % 4)
        for column, count in LAYOUT.items()
        for n in range(count)
    ]
    Task.objects.bulk_create(rows)
    client = Client()
    client.force_login(owner)
    return {
        "cookie": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "cookie_name": settings.SESSION_COOKIE_NAME,
        "paths": {
            "login": "/accounts/login/",
            "board-0": f"/w/{empty.slug}/board/",
            "board-200": f"/w/{full.slug}/board/",
        },
    }


def _load(context: Any, url: str) -> dict[str, float]:
    page = context.new_page()
    response = page.goto(url, wait_until="load")
    if response is None or response.status != 200:
        raise SystemExit(f"{url} answered {response and response.status}")
    timing: dict[str, float] = page.evaluate(TIMING)
    page.close()
    return timing


def _measure(base: str, seeded: dict[str, Any], rounds: int) -> dict[str, list[dict[str, float]]]:
    from playwright.sync_api import sync_playwright

    names = list(seeded["paths"])
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with sync_playwright() as playwright:
        flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=flags)
        signed_in = browser.new_context(viewport={"width": 1280, "height": 800})
        signed_in.add_cookies([{"name": seeded["cookie_name"], "value": seeded["cookie"], "url": base}])
        signed_out = browser.new_context(viewport={"width": 1280, "height": 800})
        contexts = {"login": signed_out, "board-0": signed_in, "board-200": signed_in}
        for name in names:  # warm-up: static files cached, templates compiled
            _load(contexts[name], base + seeded["paths"][name])
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                samples[name].append(_load(contexts[name], base + seeded["paths"][name]))
        browser.close()
    return samples


def _summary(samples: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    base = statistics.median(s["load"] for s in samples["login"])
    out = {}
    for name, rows in samples.items():
        load = statistics.median(s["load"] for s in rows)
        out[name] = {
            "load_ms": round(load, 1),
            "server_ms": round(statistics.median(s["server"] for s in rows), 1),
            "dom_ms": round(statistics.median(s["dom"] for s in rows), 1),
            "vs_login": round(load / base, 2) if base else 0.0,
            "rounds": len(rows),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.mcp.server_process import uvicorn_server

    with tempfile.TemporaryDirectory(prefix="weft-board-bench-") as tmp:
        database = str(Path(tmp) / "weft.sqlite3")
        os.environ.update(WEFT_SQLITE_PATH=database, WEFT_DEBUG="1", DJANGO_SETTINGS_MODULE="weft.settings")
        os.environ.pop("DATABASE_URL", None)
        seeded = _seed()
        with uvicorn_server({"WEFT_SQLITE_PATH": os.environ["WEFT_SQLITE_PATH"]}) as base:
            samples = _measure(base, seeded, args.rounds)
    summary = _summary(samples)
    print(f"board load on the embedded default (SQLite, debug), median of {args.rounds} interleaved rounds")
    print(f"{'page':<10} {'load ms':>8} {'server ms':>10} {'DOM ms':>7} {'× login':>8}")
    for name, row in summary.items():
        cells = f"{row['load_ms']:>8} {row['server_ms']:>10} {row['dom_ms']:>7} {row['vs_login']:>8}"
        print(f"{name:<10} {cells}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"summary": summary, "samples": samples, "layout": LAYOUT}, indent=2))
    ok = summary["board-200"]["load_ms"] < BOUND_MS
    print(f"board-200 under {BOUND_MS:.0f} ms: {'yes' if ok else 'NO'}  ({OUT.relative_to(ROOT)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
