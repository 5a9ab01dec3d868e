"""The shared load driver: asyncio workers over real HTTP, one keep-alive httpx client each.

A series is `concurrency` workers calling an operation until `count` operations are done (or
`max_seconds` have passed, for the calls that take seconds), after `warmup` untimed ones. An
operation returns the seconds its measured part took, or None for an error; most are
`timed(...)` around one MCP call, a cycle times its two calls as one.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.stats import Sample

PROTOCOL = "2025-06-18"
Operation = Callable[[int], Awaitable[float | None]]


class ToolError(Exception):
    """A tool answered isError (the harness's ops treat it as an error unless they expect it)."""

    def __init__(self, tool: str, data: dict[str, Any]) -> None:
        super().__init__(f"{tool}: {str(data)[:300]}")
        self.data = data


@dataclass
class McpClient:
    """One agent: its own HTTP connection (keep-alive) and bearer token."""

    base: str
    token: str | None = None
    timeout: float = 120.0
    http: httpx.AsyncClient = field(init=False)
    ids: Iterator[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.http = httpx.AsyncClient(
            base_url=self.base, timeout=self.timeout, limits=httpx.Limits(max_connections=1)
        )

    def headers(self) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": PROTOCOL}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        response = await self.http.post("/api/mcp", json=body, headers=self.headers())
        response.raise_for_status()
        answer: dict[str, Any] = response.json()
        if "error" in answer:
            raise ToolError(method, answer["error"])
        return dict(answer["result"])

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The tool's structuredContent; ToolError when it answered isError."""
        result = await self.rpc("tools/call", {"name": tool, "arguments": arguments or {}})
        data = dict(result.get("structuredContent") or {})
        if result.get("isError"):
            raise ToolError(tool, data)
        return data

    async def aclose(self) -> None:
        await self.http.aclose()


async def timed(call: Awaitable[Any]) -> float | None:
    """The seconds one awaited call took; None when it failed."""
    start = time.perf_counter()
    try:
        await call
    except (ToolError, httpx.HTTPError):
        return None
    return time.perf_counter() - start


async def drive(
    op: Operation, *, concurrency: int, count: int, warmup: int = 0, max_seconds: float | None = None
) -> Sample:
    """Run `op` from `concurrency` workers: `warmup` untimed calls, then `count` timed ones."""
    warm = iter(range(warmup))

    async def warm_worker(worker: int) -> None:
        for _ in warm:
            await op(worker)

    await asyncio.gather(*(warm_worker(w) for w in range(concurrency)))
    sample = Sample()
    todo = iter(range(count))
    began = time.perf_counter()
    deadline = began + max_seconds if max_seconds else None

    async def worker(index: int) -> None:
        for _ in todo:
            seconds = await op(index)
            if seconds is None:
                sample.errors += 1
            else:
                sample.latencies.append(seconds)
                sample.completed += 1
            if deadline is not None and time.perf_counter() > deadline:
                return

    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    sample.elapsed = time.perf_counter() - began
    return sample
