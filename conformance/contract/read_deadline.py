"""A request read off a socket within a total deadline, for both ends that read requests: the
reference server and the proxy of ``conformance proxy`` (security-5.md L19).

:class:`DeadlineReader` is a socket's raw stream with two limits: ``read_timeout`` of silence
while waiting for a request, and, once its first byte has come, ``read_timeout`` in all for its
head and body. A slow sender (a byte at a time, each within the silence limit: slowloris) is cut
off all the same; :attr:`DeadlineReader.expired` then says so, and the reading end answers 408
with the spec 7 error body before it closes the connection (RFC 9110 15.5.9).
"""

from __future__ import annotations

import io
import socket
import time
from typing import Any

__all__ = ["TIMED_OUT", "DeadlineReader"]

#: The text of the 408 a request that did not arrive in time gets.
TIMED_OUT = "the request did not arrive within the read timeout"


class DeadlineReader(io.RawIOBase):
    """The connection's reads with a silence limit and a total deadline (module docstring)."""

    def __init__(self, connection: socket.socket, read_timeout: float) -> None:
        super().__init__()
        self.connection = connection
        self.read_timeout = read_timeout
        #: When the request being read must be complete (None: waiting for one).
        self.deadline: float | None = None
        #: The request being read missed its deadline (its first byte had come).
        self.expired = False
        #: The socket's timeout as last set (``settimeout`` is a system call: set on change).
        self._timeout: float | None = None

    def readable(self) -> bool:
        return True

    def next_request(self) -> None:
        """The next request's deadline starts with its own first byte."""
        self.deadline = None
        self.expired = False

    def _set_timeout(self, seconds: float) -> None:
        if seconds != self._timeout:
            self.connection.settimeout(seconds)
            self._timeout = seconds

    def timeout_changed(self) -> None:
        """Someone else set the socket's timeout: the next read sets its own again."""
        self._timeout = None

    def readinto(self, buffer: Any) -> int:
        if self.deadline is None:
            self._set_timeout(self.read_timeout)
        else:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.expired = True
                raise TimeoutError(TIMED_OUT)
            self._set_timeout(min(self.read_timeout, left))
        try:
            count = self.connection.recv_into(buffer)
        except TimeoutError:
            self.expired = self.deadline is not None
            raise
        if count and self.deadline is None:
            self.deadline = time.monotonic() + self.read_timeout
        return count
