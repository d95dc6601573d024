"""The HTTP plumbing (``reference_server.transport.http``): JSON errors for everything, keep-alive,
Content-Length, limits and timeouts, X-Request-ID echo — through real sockets."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator
from types import MappingProxyType
from urllib.parse import urlsplit

import httpx
import pytest

from reference_server.api import Call, Response
from reference_server.app import Application
from reference_server.transport.http import MAX_BODY_BYTES, RunningServer, start


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def read_response(stream: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response read off the socket (Content-Length framed)."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = stream.recv(65536)
        if not chunk:
            raise ConnectionError(f"connection closed after {buffer!r}")
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = stream.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length]


def exchange(url: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(address(url), timeout=5) as stream:
        stream.sendall(raw)
        return read_response(stream)


def assert_spec7(body: bytes, status: int) -> dict:
    document = json.loads(body)
    assert document["status"] == status
    assert {"id", "system", "status", "code"} <= set(document)
    return document


# -- routing answers ----------------------------------------------------------------------------


def test_unknown_path_is_404_resource_unknown(client: httpx.Client) -> None:
    response = client.get("/v1/nothing/here")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert assert_spec7(response.content, 404)["code"] == "RESOURCE_UNKNOWN"


def test_wrong_method_is_405_with_allow(client: httpx.Client) -> None:
    response = client.delete("/v1/sandbox/customers")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
    assert_spec7(response.content, 405)


def test_options_lists_the_methods(client: httpx.Client) -> None:
    response = client.options("/v1/sandbox/accounts/x/transactions")
    assert response.status_code == 204
    assert response.headers["allow"] == "GET, POST, OPTIONS"
    assert response.headers["content-length"] == "0"


def test_head_answers_headers_only(server: RunningServer, app: Application) -> None:
    status, headers, body = exchange(
        server.url, b"HEAD /v1/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert status == 404
    assert int(headers["content-length"]) > 0 and body == b""


def test_unknown_payment_product_is_product_unknown(client: httpx.Client) -> None:
    response = client.post("/v1/payments/swift-transfers", json={})
    assert response.status_code == 404
    body = assert_spec7(response.content, 404)
    assert body["code"] == "PRODUCT_UNKNOWN"
    assert body["tppMessages"][0]["code"] == "PRODUCT_UNKNOWN"
    assert body["tppMessages"][0]["path"] == "payment-product"


# -- bodies -------------------------------------------------------------------------------------


def test_non_json_content_type_is_415(client: httpx.Client) -> None:
    response = client.post(
        "/v1/sandbox/customers",
        content=b"customerType=PRIVATE",
        headers={"Content-Type": "text/plain"},
    )
    assert response.status_code == 415
    assert_spec7(response.content, 415)


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "application/problem+json", "APPLICATION/JSON"],
)
def test_json_media_types_are_accepted(client: httpx.Client, content_type: str) -> None:
    body = json.dumps({"customerType": "PRIVATE", "customerName": "A"}).encode()
    response = client.post(
        "/v1/sandbox/customers", content=body, headers={"Content-Type": content_type}
    )
    assert response.status_code == 201


def test_latin1_charset_is_415(client: httpx.Client) -> None:
    response = client.post(
        "/v1/sandbox/customers",
        content=b"{}",
        headers={"Content-Type": "application/json; charset=iso-8859-1"},
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    "content",
    [
        b"{",
        b'{"customerType": "PRIVATE",}',
        b"NaN",
        b'{"a": Infinity}',
        b"\xef\xbb\xbf{}",
        b'{"customerType": "PRIVATE", "a": 1e400}',
        b"[" * 3000 + b"]" * 3000,
        b'{"customerType": "PRIVATE", "a": ' + b"[" * 200 + b"]" * 200 + b"}",
    ],
    ids=["truncated", "trailing-comma", "nan", "infinity", "bom", "number-beyond-double",
         "nested-3000-deep", "nested-200-deep-inside"],
)  # fmt: skip
def test_malformed_json_is_400_format_error(client: httpx.Client, content: bytes) -> None:
    response = client.post(
        "/v1/sandbox/customers", content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert assert_spec7(response.content, 400)["code"] == "FORMAT_ERROR"


def test_invalid_utf8_is_400_format_error(client: httpx.Client) -> None:
    response = client.post(
        "/v1/sandbox/customers",
        content=b'{"customerType": "PRIVATE", "customerName": "\xff\xfe"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert "UTF-8" in response.json()["message"]


def test_body_over_the_limit_is_413_without_reading_it(
    server: RunningServer, app: Application
) -> None:
    declared = MAX_BODY_BYTES + 1
    raw = (
        f"POST /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"X-Request-ID: big\r\nContent-Length: {declared}\r\n\r\n"
    ).encode() + b"{"  # only one byte of the promised body is ever sent
    status, headers, body = exchange(server.url, raw)
    assert status == 413
    assert headers["connection"] == "close"
    assert headers["x-request-id"] == "big"
    assert_spec7(body, 413)


def test_chunked_body_is_411(server: RunningServer, app: Application) -> None:
    raw = (
        b"POST /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\n\r\n"
    )
    status, _, body = exchange(server.url, raw)
    assert status == 411
    assert_spec7(body, 411)


def test_bad_content_length_is_400(server: RunningServer, app: Application) -> None:
    raw = b"POST /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n"
    status, _, body = exchange(server.url, raw)
    assert status == 400
    assert_spec7(body, 400)


_SANDBOX = b"POST /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (_SANDBOX + b"Content-Length: 0\r\nContent-Length: 47\r\n\r\n"
         b"GET /v1/SMUGGLED HTTP/1.1\r\nHost: x\r\nX: y\r\n\r\n", "differ"),
        (_SANDBOX + b"Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n"
         b"0\r\n\r\n", "both Transfer-Encoding and Content-Length"),
        (_SANDBOX + "Content-Length: ²\r\n\r\n".encode("latin-1"), "is not a number"),
        (_SANDBOX + b"X-A : 1\r\nConnection: close\r\n\r\n", "whitespace between"),
        (_SANDBOX + b"JUNK\r\nConnection: close\r\n\r\n", "without a colon"),
        (_SANDBOX + b"X-\xff: 1\r\nConnection: close\r\n\r\n", "not a token"),
        (_SANDBOX + b"X-A: 1\r\n folded\r\n\r\n", "folded"),
    ],
    ids=["two-lengths", "te-and-cl", "superscript-length", "space-before-colon", "no-colon",
         "non-ascii-name", "obs-fold"],
)  # fmt: skip
def test_a_request_framed_ambiguously_is_400_and_the_rest_is_not_read_as_a_request(
    server: RunningServer, app: Application, raw: bytes, said: str
) -> None:
    """security-5.md M5 (two Content-Lengths: the second request smuggled), L5 (``²``, once no
    answer and a traceback), L6 (a malformed header line once dropped every later header):
    RFC 9112 framing refused with 400 and the spec 7 body, the connection closed."""
    with socket.create_connection(address(server.url), timeout=5) as stream:
        stream.sendall(raw)
        status, _, body = read_response(stream)
        assert status == 400
        assert said in assert_spec7(body, 400)["message"]
        stream.settimeout(3)
        rest = b""
        with contextlib.suppress(OSError):
            while chunk := stream.recv(4096):
                rest += chunk
    assert b"HTTP/1.1" not in rest  # no second answer: nothing after the refusal was read


# -- http.server's own errors are JSON ----------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /\r\n", 400),
        (b"GET / HTTP/9.9\r\n\r\n", 505),
        (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", 431),
        (b"BREW /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\n\r\n", 501),
    ],
    ids=[
        "garbage-request-line",
        "http-0.9",
        "http-version",
        "request-line-too-long",
        "header-too-long",
        "unknown-method",
    ],
)
def test_http_server_errors_are_json(
    server: RunningServer, app: Application, raw: bytes, status: int
) -> None:
    got, headers, body = exchange(server.url, raw)
    assert got == status
    assert headers["content-type"] == "application/json"
    assert b"<html" not in body.lower()
    assert_spec7(body, status)


# -- connection handling ------------------------------------------------------------------------


def test_keep_alive_serves_several_requests_on_one_connection(
    server: RunningServer, app: Application
) -> None:
    with socket.create_connection(address(server.url), timeout=5) as stream:
        for number in range(3):
            head = f"GET /v1/nothing/{number} HTTP/1.1\r\nHost: x\r\nX-Request-ID: r{number}"
            stream.sendall(f"{head}\r\n\r\n".encode())
            status, headers, body = read_response(stream)
            assert status == 404
            assert headers["x-request-id"] == f"r{number}"
            assert "connection" not in headers
            assert_spec7(body, 404)


def test_every_answer_has_content_length_and_echoes_the_request_id(client: httpx.Client) -> None:
    for response in (
        client.get("/v1/sandbox/customers", headers={"X-Request-ID": "abc-1"}),
        client.get("/v1/missing", headers={"X-Request-ID": "abc-2"}),
        client.post("/v1/sandbox/customers", content=b"{", headers={"X-Request-ID": "abc-3"}),
    ):
        assert response.headers["x-request-id"] == response.request.headers["x-request-id"]
        assert int(response.headers["content-length"]) == len(response.content)


@pytest.fixture
def quick_timeout_server() -> Iterator[RunningServer]:
    running = start(read_timeout=0.3)
    yield running
    running.stop()


def test_silent_client_is_disconnected_after_the_read_timeout(
    quick_timeout_server: RunningServer,
) -> None:
    with socket.create_connection(address(quick_timeout_server.url), timeout=5) as stream:
        started = time.monotonic()
        assert stream.recv(1024) == b""  # silent from the start: closed, nothing to answer
        assert time.monotonic() - started < 3


def _all_until_closed(stream: socket.socket) -> bytes:
    answer = b""
    with contextlib.suppress(OSError):
        while chunk := stream.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    "sent",
    [b"GET /v1/nothing HTTP/1.1\r\n",
     b"POST /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"a\""],
    ids=["head", "body"],
)  # fmt: skip
def test_a_request_not_complete_within_the_deadline_gets_408(
    quick_timeout_server: RunningServer, sent: bytes
) -> None:
    """security-5.md L19: a request whose head or body is not complete within the total read
    deadline gets 408 with the spec 7 body, then the connection closes (it was closed silently
    before)."""
    with socket.create_connection(address(quick_timeout_server.url), timeout=5) as stream:
        stream.sendall(sent)
        started = time.monotonic()
        answer = _all_until_closed(stream)
        assert time.monotonic() - started < 3
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert_spec7(body, 408)


def test_unhandled_exception_is_500_without_traceback(
    server: RunningServer, app: Application, server_errors: object
) -> None:
    def broken(call: Call) -> Response:
        raise RuntimeError("secret internal detail")

    running = start(Application(modules=()))
    running.app.handlers = MappingProxyType({"SDF": broken})
    try:
        with httpx.Client(base_url=running.url) as plain:
            from conformance.signing import SignatureAuth, default_identity

            plain.auth = SignatureAuth(default_identity().signing_credentials())
            response = plain.post("/v1/sandbox/data-fill", headers={"X-Request-ID": "boom"})
    finally:
        running.stop()
        server_errors.drain()  # type: ignore[attr-defined]
    assert response.status_code == 500
    body = assert_spec7(response.content, 500)
    assert body["code"] == "SYSTEM_ERROR"
    assert "secret" not in response.text and "Traceback" not in response.text


def test_operation_without_handler_is_501(server: RunningServer) -> None:
    running = start(Application(modules=()))
    try:
        from conformance.signing import SignatureAuth, default_identity

        with httpx.Client(
            base_url=running.url, auth=SignatureAuth(default_identity().signing_credentials())
        ) as plain:
            response = plain.get("/v1/sandbox/customers", headers={"X-Request-ID": "x"})
    finally:
        running.stop()
    assert response.status_code == 501
    assert_spec7(response.content, 501)


# -- hostile load (issue 14) --------------------------------------------------------------------


def test_a_slow_sender_is_cut_off_by_the_read_timeout_in_all(
    quick_timeout_server: RunningServer,
) -> None:
    """A byte at a time, each well within the silence limit: the request as a whole must still
    arrive within the read timeout (slowloris)."""
    head = b"GET /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 200
    with socket.create_connection(address(quick_timeout_server.url), timeout=5) as stream:
        started = time.monotonic()
        closed = False
        for byte in head:
            try:
                stream.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            time.sleep(0.05)
            if time.monotonic() - started > 4:
                break
        if not closed:
            stream.settimeout(3)
            try:
                data = stream.recv(1024)
                closed = data == b"" or data.startswith(b"HTTP/1.1 408")
            except OSError:
                closed = True
        assert closed
        assert time.monotonic() - started < 6


def test_hundreds_of_idle_connections_leave_a_fresh_client_answered(
    server: RunningServer, client: httpx.Client
) -> None:
    idle = [socket.create_connection(address(server.url), timeout=5) for _ in range(300)]
    try:
        for stream in idle[::2]:
            stream.sendall(b"GET /v1/sa")  # half of them started a request and went silent
        started = time.monotonic()
        answer = client.get("/v1/sandbox/customers")
        assert answer.status_code == 200
        assert time.monotonic() - started < 5
    finally:
        for stream in idle:
            stream.close()


def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for the server's threads to reach a state (a fixed sleep is too short on a busy
    machine and too long on a quiet one)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the server did not get there in time"
        time.sleep(0.01)


def test_at_the_connection_cap_an_idle_connection_makes_room_and_else_503() -> None:
    running = start(max_connections=10, read_timeout=5)
    try:
        host_port = address(running.url)
        idle = [socket.create_connection(host_port, timeout=5) for _ in range(10)]
        _until(lambda: running.server.connections.waiting() == 10)  # all ten accepted
        with socket.create_connection(host_port, timeout=5) as fresh:
            fresh.sendall(b"GET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n")
            assert fresh.recv(64).startswith(b"HTTP/1.1 404")  # an idle one was closed for it
        for stream in idle:
            stream.close()
        _until(lambda: len(running.server.connections) == 0)
        busy = [socket.create_connection(host_port, timeout=5) for _ in range(10)]
        for stream in busy:
            stream.sendall(b"GET /v1/no")  # each in the middle of a request: none is idle
        _until(
            lambda: (
                len(running.server.connections) == 10 and running.server.connections.waiting() == 0
            )
        )
        with socket.create_connection(host_port, timeout=5) as late:
            answer = late.recv(1024)
            assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer
            assert b'"code":"SYSTEM_ERROR"' in answer
        for stream in busy:
            stream.close()
    finally:
        running.stop()
