"""A small asyncio TCP proxy between Weft and PostgreSQL that delays, drops and resets connections.

Modes, switched while it runs: `pass` forwards; `delay` holds every chunk `delay` seconds;
`blackhole` keeps connections open and forwards nothing (a network partition); `reset` closes
every connection abruptly and refuses new ones until the mode changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket


class Proxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.mode = "pass"
        self.delay = 0.0
        self.port = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        self.reset_all()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    def set(self, mode: str, delay: float = 0.0) -> None:
        self.mode, self.delay = mode, delay
        if mode == "reset":
            self.reset_all()

    def reset_all(self) -> None:
        """Every open connection closed with a TCP reset (SO_LINGER 0), both sides."""
        for writer in list(self._writers):
            sock = writer.get_extra_info("socket")
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            writer.close()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mode == "reset":
            self._writers.add(writer)
            self.reset_all()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
        )
        for end in (writer, up_writer):
            self._writers.discard(end)
            end.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            while self.mode == "blackhole":
                await asyncio.sleep(0.05)
            if self.mode == "delay" and self.delay:
                await asyncio.sleep(self.delay)
            writer.write(chunk)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()
