"""The shared load driver: asyncio workers over real HTTP, one keep-alive connection each.

A series is `concurrency` workers calling an operation until `count` operations are done (or
`max_seconds` have passed, for the calls that take seconds), after `warmup` untimed ones. An
operation returns the seconds its measured part took, or None for an error; most are
`timed(...)` around one MCP call, a cycle times its two calls as one.

The HTTP client is `Http`: HTTP/1.1 on one keep-alive socket, a request written whole and its
answer read by Content-Length (or chunks). The load comes from this process, on the same two
cores as the server it measures, so the client is kept as lean as a client can be: httpx spent
about 1.5 ms of CPU per call here, this one a fraction of that, for every series alike.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from bench.stats import Sample

PROTOCOL = "2025-06-18"
Operation = Callable[[int], Awaitable[float | None]]


class ToolError(Exception):
    """A tool answered isError (the harness's ops treat it as an error unless they expect it)."""

    def __init__(self, tool: str, data: dict[str, Any]) -> None:
        super().__init__(f"{tool}: {str(data)[:300]}")
        self.data = data


class HttpError(Exception):
    """The server could not be reached, closed the connection, or answered with an error status."""


class HttpTimeout(HttpError):
    """No answer within the client's timeout (the connection is dropped: a late answer is not read)."""


class Http:
    """HTTP/1.1 on one keep-alive connection to `base` (http://host:port), opened on first use."""

    def __init__(self, base: str, timeout: float) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        try:
            return await asyncio.wait_for(self._exchange_fresh(path, body, headers), self.timeout)
        except TimeoutError:
            await self.aclose()
            raise HttpTimeout(f"POST {path}: no answer in {self.timeout} s") from None
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.aclose()
            raise HttpError(f"POST {path}: {exc!r}") from exc

    async def _exchange_fresh(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """The exchange; once more on a new connection when a kept-alive one turns out closed by
        the server while idle (uvicorn closes idle connections after 5 s) before any answer."""
        reused = self.streams is not None
        try:
            return await self._exchange(path, body, headers)
        except (asyncio.IncompleteReadError, ConnectionResetError, BrokenPipeError) as exc:
            if not reused or getattr(exc, "partial", b"") != b"":
                raise
        await self.aclose()
        return await self._exchange(path, body, headers)

    async def _exchange(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        head = [f"POST {path} HTTP/1.1", f"host: {self.host}:{self.port}", f"content-length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status_line = await reader.readuntil(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        fields: dict[bytes, bytes] = {}
        while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
            answer = await _chunks(reader)
        else:
            answer = await reader.readexactly(int(fields.get(b"content-length", b"0")))
        if fields.get(b"connection", b"").lower() == b"close":
            await self.aclose()
        return status, answer

    async def aclose(self) -> None:
        if self.streams is not None:
            writer = self.streams[1]
            self.streams = None
            writer.close()


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        parts.append(await reader.readexactly(size))
        await reader.readuntil(b"\r\n")
    await reader.readuntil(b"\r\n")
    return b"".join(parts)


@dataclass
class McpClient:
    """One agent: its own HTTP connection (keep-alive) and bearer token."""

    base: str
    token: str | None = None
    timeout: float = 120.0
    http: Http = field(init=False)
    ids: Iterator[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.http = Http(self.base, self.timeout)

    def headers(self) -> dict[str, str]:
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": PROTOCOL,
        }
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        status, raw = await self.http.post("/api/mcp", json.dumps(body).encode(), self.headers())
        if status >= 400:
            raise HttpError(f"{method}: HTTP {status}: {raw[:300]!r}")
        answer: dict[str, Any] = json.loads(raw)
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
    except (ToolError, HttpError):
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
