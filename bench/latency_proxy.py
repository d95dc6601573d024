"""A TCP proxy that delays every answer: what a target at a network distance looks like from here.

Bytes from the client go to the upstream server at once; bytes from the server reach the client
``delay`` seconds after they arrived, each chunk on its own schedule, so a connection's answers are
late but its throughput is not cut (a 25 ms path carries many answers at once). It runs an
``asyncio`` loop in a daemon thread; :meth:`LatencyProxy.start` returns its URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

__all__ = ["LatencyProxy", "latency_proxy"]

_CHUNK = 65536


class LatencyProxy:
    """Listen on ``host`` (127.0.0.1 unless given; a free port) and forward to ``upstream`` (an
    http:// URL)."""

    def __init__(self, upstream: str, delay: float = 0.025, host: str = "127.0.0.1") -> None:
        parts = urlsplit(upstream)
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"the upstream needs a host and a port: {upstream!r}")
        self.upstream = (parts.hostname, parts.port)
        self.scheme = parts.scheme
        self.delay = delay
        self.host = host
        self.answers = 0
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="proxy")

    def start(self) -> str:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._connection, self.host, 0), self._loop
        )
        self._server = future.result(timeout=10)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"{self.scheme}://{self.host}:{port}"
        return self.url

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            for _ in range(3):  # the transports close on the next turns of the loop
                await asyncio.sleep(0)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _connection(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        writers = [client_writer]
        tasks: list[asyncio.Task[None]] = []
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstream)
            writers.append(upstream_writer)
            late: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
            tasks += [
                asyncio.create_task(_pump(client_reader, upstream_writer)),
                asyncio.create_task(self._receive(upstream_reader, late)),
                asyncio.create_task(_deliver(late, client_writer)),
            ]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            await asyncio.sleep(self.delay)  # let answers in flight arrive
        except OSError:
            pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for writer in writers:
                with contextlib.suppress(OSError, RuntimeError):
                    writer.close()

    async def _receive(
        self, reader: asyncio.StreamReader, late: asyncio.Queue[tuple[float, bytes]]
    ) -> None:
        while True:
            data = await reader.read(_CHUNK)
            if not data:
                await late.put((time.monotonic() + self.delay, b""))
                return
            self.answers += 1
            await late.put((time.monotonic() + self.delay, data))


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(_CHUNK):
        writer.write(data)
        await writer.drain()
    with contextlib.suppress(OSError):
        writer.write_eof()


async def _deliver(late: asyncio.Queue[tuple[float, bytes]], writer: asyncio.StreamWriter) -> None:
    while True:
        due, data = await late.get()
        wait = due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        if not data:
            with contextlib.suppress(OSError):
                writer.write_eof()
            return
        writer.write(data)
        await writer.drain()


def network_address() -> str | None:
    """This machine's address on its outbound interface (not loopback), or None without one.

    A proxy listening there is a target elsewhere, as issue 22 measured it; on ``127.0.0.1`` it
    is a bank behind a tunnel. A UDP socket's ``connect`` picks the route; nothing is sent.
    """
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
        if not address.startswith("127.") and address != "0.0.0.0":
            return address
    return None


@contextlib.contextmanager
def latency_proxy(
    upstream: str, delay: float = 0.025, host: str = "127.0.0.1"
) -> Iterator[LatencyProxy]:
    """A started proxy (its URL in ``.url``), stopped on exit."""
    proxy = LatencyProxy(upstream, delay, host)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
