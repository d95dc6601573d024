"""The ``Date`` header and the log line are what ``http.server`` and ``logging`` would write,
though each is formatted once per second."""

from __future__ import annotations

import logging
import time
from http.server import BaseHTTPRequestHandler

from reference_server.cli import LOG_FORMAT, RequestLogFormatter
from reference_server.transport.http import RequestHandler


def test_date_header_text_is_http_servers() -> None:
    ours = object.__new__(RequestHandler)
    stock = object.__new__(BaseHTTPRequestHandler)
    start = time.time()
    for offset in (0.0, 0.4, 0.999, 1.0, 1.5, 86400.25, -3600.7):
        moment = start + offset
        assert ours.date_time_string(moment) == stock.date_time_string(moment)
    assert ours.date_time_string() in (stock.date_time_string(), stock.date_time_string(start + 1))


def test_log_line_is_loggings_own_format() -> None:
    ours, stock = RequestLogFormatter(), logging.Formatter(LOG_FORMAT)
    start = time.time()
    for offset in (0.0, 0.001, 0.5, 1.0, 1.999, 3600.0):
        record = logging.LogRecord(
            "reference_server.http", logging.INFO, "", 0, "GET %s", ("/",), None
        )
        record.created = start + offset
        record.msecs = (record.created - int(record.created)) * 1000
        assert ours.format(record) == stock.format(record)
