"""The latency benchmark's proxy (``bench/latency_proxy.py``): answers pass through unchanged and
arrive ``delay`` later, and answers on several connections are late together, not in a queue."""

from __future__ import annotations

import threading
import time

import httpx

from bench.latency_proxy import latency_proxy
from reference_server.app import Application
from reference_server.transport.http import start


def test_answers_pass_unchanged_and_arrive_late() -> None:
    running = start(Application())
    try:
        limits = httpx.Limits(max_connections=8)
        with latency_proxy(running.url, 0.05) as proxy, httpx.Client(limits=limits) as client:
            direct = client.get(running.url + "/v1/nothing-here")
            started = time.monotonic()
            late = client.get(proxy.url + "/v1/nothing-here")
            elapsed = time.monotonic() - started
            assert late.status_code == direct.status_code == 404
            assert late.json().keys() == direct.json().keys()  # the ids differ per request
            assert elapsed >= 0.05
            results: list[float] = []

            def one() -> None:
                begun = time.monotonic()
                client.get(proxy.url + "/v1/nothing-here")  # httpx.Client is thread-safe
                results.append(time.monotonic() - begun)

            threads = [threading.Thread(target=one) for _ in range(8)]
            begun = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(results) == 8
            assert time.monotonic() - begun < 8 * 0.05  # overlapped, not one after another
    finally:
        running.stop()
