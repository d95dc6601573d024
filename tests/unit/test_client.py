"""The signed client: exchanges are recorded with their signing string, secrets are masked in the
rendering, the reproduce command parses back into the same request, and a bad target is one
TargetError naming the URL."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conformance.bankside.client import TargetClient, target_error
from conformance.commands import call
from conformance.errors import TargetError
from conformance.exchange import STANDARD_SIGNER, Exchange, program_for, replay_program
from conformance.profile import load_profile
from conformance.signing import (
    StaleDigestSigner,
    VerificationFailure,
    WrongKeySigner,
    build_signing_string,
    default_identity,
    verify_request,
    write_identity,
)

PSU_ID = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001"
NATIONAL_ID = "01017012345"
PAYMENT = {
    "instructedAmount": {"currency": "NOK", "amount": "123.50"},
    "creditorName": "Åse Ødegård",
}


def echo(request: httpx.Request) -> httpx.Response:
    """A target that answers 201 with a small JSON body."""
    return httpx.Response(201, json={"transactionStatus": "RCVD", "paymentId": "p-1"})


@pytest.fixture
def client() -> Iterator[TargetClient]:
    with TargetClient("http://bank.test/psd2", transport=httpx.MockTransport(echo)) as made:
        yield made


PAYMENT_HEADERS = {
    "PSU-ID": PSU_ID,
    "X-PSU-IDENTITY": NATIONAL_ID,
    "TPP-Redirect-URI": "https://tpp.example/cb",
}


def send_payment(
    client: TargetClient, headers: dict[str, str] = PAYMENT_HEADERS, **kwargs: object
) -> Exchange:
    return client.post(
        "/v1/payments/norwegian-domestic-credit-transfers",
        params={"allowLogicalDuplicate": True},
        json=PAYMENT,
        headers=headers,
        **kwargs,
    )


def verify(exchange: Exchange) -> VerificationFailure | None:
    target = exchange.url.removeprefix("http://bank.test")
    verdict = verify_request(
        exchange.method, target, dict(exchange.request_headers), exchange.request_body
    )
    return verdict.failure


# --- recording ---------------------------------------------------------------------------------


def test_exchange_records_request_response_and_signing_string(client: TargetClient) -> None:
    exchange = send_payment(client)
    assert exchange.method == "POST"
    assert exchange.url == (
        "http://bank.test/psd2/v1/payments/norwegian-domestic-credit-transfers"
        "?allowLogicalDuplicate=true"
    )
    assert json.loads(exchange.request_body) == PAYMENT
    assert exchange.status == 201
    assert exchange.json() == {"transactionStatus": "RCVD", "paymentId": "p-1"}
    assert exchange.response_header("content-type") == "application/json"
    assert exchange.signer == STANDARD_SIGNER
    assert exchange.elapsed >= 0
    # the signing string is the one a verifier rebuilds from the headers as sent (spec 5.2)
    names = ["date", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"]
    assert exchange.signing_string == build_signing_string(
        "POST",
        exchange.url.removeprefix("http://bank.test"),
        dict(exchange.request_headers),
        names,
    )
    assert verify(exchange) is None
    assert client.exchanges == (exchange,)


def test_default_headers_are_fresh_and_can_be_overridden_or_removed(client: TargetClient) -> None:
    first = client.get("/v1/accounts")
    second = client.get("/v1/accounts")
    ids = {first.request_header("X-Request-ID"), second.request_header("X-Request-ID")}
    assert len(ids) == 2 and all(uuid.UUID(str(value)) for value in ids)
    assert first.request_header("Accept") == "application/json"
    assert first.request_header("Content-Type") is None  # no body, no Content-Type
    assert send_payment(client).request_header("Content-Type") == "application/json"

    custom = client.get("/v1/accounts", headers={"x-request-id": "fixed", "Accept": None})
    assert custom.request_header("X-Request-ID") == "fixed"
    assert custom.request_header("Accept") is None
    assert [name for name, _ in custom.request_headers].count("x-request-id") == 1
    assert "x-request-id: fixed" in str(custom.signing_string)  # the override is signed


def test_unsigned_and_broken_signers_per_request(client: TargetClient) -> None:
    unsigned = client.get("/v1/accounts", auth=None)
    assert unsigned.request_header("Signature") is None
    assert unsigned.signing_string is None and unsigned.signer == ""

    broken = send_payment(client, auth=client.make_signer(WrongKeySigner))
    assert broken.signer == "WrongKeySigner"
    assert broken.signing_string is not None  # reported through the client's hook
    assert verify(broken) is VerificationFailure.BAD_SIGNATURE

    stale = send_payment(client, auth=client.make_signer(StaleDigestSigner))
    assert verify(stale) is VerificationFailure.DIGEST_MISMATCH
    assert len(client.take_exchanges()) == 3 and client.exchanges == ()


def test_sha512_digest_and_path_prefix() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    with TargetClient(
        "http://bank.test",
        path_prefix="/psd2/",
        digest_algorithm="SHA-512",
        transport=httpx.MockTransport(handler),
    ) as client:
        exchange = client.put("/v1/sandbox/accounts/a-1/balances", json=[])
    assert seen[0].url.path == "/psd2/v1/sandbox/accounts/a-1/balances"
    assert str(exchange.request_header("Digest")).startswith("SHA-512=")
    assert exchange.path == "/v1/sandbox/accounts/a-1/balances"
    assert exchange.target == "http://bank.test/psd2"


def test_non_ascii_header_values_are_sent_encoded(client: TargetClient) -> None:
    exchange = client.get("/v1/accounts", headers={"TPP-Brand-Logging-Information": "Bank Ø"})
    assert exchange.request_header("TPP-Brand-Logging-Information") == "=?utf-8?B?QmFuayDDmA==?="


# --- rendering ---------------------------------------------------------------------------------


def test_render_masks_identity_and_shortens_certificate(client: TargetClient) -> None:
    exchange = send_payment(client)
    text = exchange.render()
    certificate = str(exchange.request_header("TPP-Signature-Certificate"))
    assert NATIONAL_ID not in text
    assert "X-PSU-IDENTITY: *********45" in text
    assert certificate not in text and f"{certificate[:16]}…" in text
    assert "PRIVATE KEY" not in text
    assert "Signing string:" in text and f"psu-id: {PSU_ID}" in text
    assert '"creditorName": "Åse Ødegård"' in text  # JSON pretty-printed, not escaped
    assert "<<< HTTP 201 Created" in text
    assert '  "paymentId": "p-1"' in text


def test_non_json_answer_is_a_target_error_naming_the_url() -> None:
    def html(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            502, text="<html>Bad gateway</html>", headers={"Content-Type": "text/html"}
        )

    with TargetClient("http://bank.test", transport=httpx.MockTransport(html)) as client:
        exchange = client.get("/v1/accounts")
    assert "<html>Bad gateway</html>" in exchange.render()
    with pytest.raises(TargetError, match=r"http://bank\.test/v1/accounts.*HTTP 502.*text/html"):
        exchange.json()


# --- reproducing -------------------------------------------------------------------------------


def parse_call(command: str) -> argparse.Namespace:
    words = shlex.split(command)
    program = shlex.split(replay_program())
    assert words[: len(program) + 1] == [*program, "call"]
    parser = argparse.ArgumentParser()
    call.add_arguments(parser)
    return parser.parse_args(words[len(program) + 1 :])


def test_reproduce_command_round_trips_through_the_call_parser(client: TargetClient) -> None:
    exchange = send_payment(client, headers={"PSU-ID": PSU_ID, "TPP-Redirect-URI": "it's ok"})
    args = parse_call(exchange.reproduce_command())
    assert args.method == "POST"
    assert (
        args.path == "/v1/payments/norwegian-domestic-credit-transfers?allowLogicalDuplicate=true"
    )
    assert args.target == "http://bank.test/psd2"
    assert not args.no_sign and args.digest == "sha-256"
    headers = [call.parse_header(argument) for argument in args.headers]
    assert headers == [("PSU-ID", PSU_ID), ("TPP-Redirect-URI", "it's ok")]  # the rest is re-made
    assert args.data_json.encode("utf-8") == exchange.request_body


def test_reproduce_command_masks_the_identity_behind_a_variable(client: TargetClient) -> None:
    exchange = send_payment(client)
    command = exchange.reproduce_command()
    assert NATIONAL_ID not in command
    assert '-H "X-PSU-IDENTITY: ${PSU_IDENTITY}"' in command
    unmasked = parse_call(exchange.reproduce_command(mask_identities=False))
    assert f"X-PSU-IDENTITY: {NATIONAL_ID}" in unmasked.headers


def test_reproduce_command_replays_broken_signatures_verbatim(client: TargetClient) -> None:
    exchange = send_payment(
        client, auth=client.make_signer(WrongKeySigner, digest_algorithm="SHA-512")
    )
    args = parse_call(exchange.reproduce_command(mask_identities=False))
    assert args.no_sign
    sent = dict(call.parse_header(argument) for argument in args.headers)
    for name in ("Signature", "Digest", "TPP-Signature-Certificate", "X-Request-ID", "Date"):
        assert sent[name] == exchange.request_header(name)


def test_reproduce_command_removes_defaults_the_exchange_lacked(client: TargetClient) -> None:
    exchange = client.post(
        "/v1/signing-baskets",
        content=b"{not json",
        headers={"X-Request-ID": None, "Content-Type": "text/plain"},
    )
    args = parse_call(
        exchange.reproduce_command(target="http://elsewhere:1", cert="tpp.pem", key="tpp.key")
    )
    assert args.target == "http://elsewhere:1" and args.cert == "tpp.pem" and args.key == "tpp.key"
    headers = [call.parse_header(argument) for argument in args.headers]
    assert ("Content-Type", "text/plain") in headers
    assert ("X-Request-ID", None) in headers  # -H 'X-Request-ID:' removes call's default
    assert args.data_json == "{not json"  # a malformed body is replayed as it was


def test_reproduce_command_keeps_headers_the_scenario_chose(client: TargetClient) -> None:
    exchange = client.get("/v1/accounts", headers={"X-Request-ID": "not-a-uuid", "PSU-ID": ""})
    headers = [call.parse_header(a) for a in parse_call(exchange.reproduce_command()).headers]
    assert ("X-Request-ID", "not-a-uuid") in headers
    assert ("PSU-ID", "") in headers  # sent empty, replayed empty


def test_binary_body_needs_a_data_file(client: TargetClient) -> None:
    exchange = client.post("/v1/signing-baskets", content=b"\xff\xfe")
    with pytest.raises(ValueError, match="data_file"):
        exchange.reproduce_command()
    assert parse_call(exchange.reproduce_command(data_file="body.bin")).data == "body.bin"


# --- bad targets -------------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_refused_connection_is_a_target_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with TargetClient(url, sign=False) as client:
        with pytest.raises(TargetError, match=rf"{re.escape(url)}/ refused the connection"):
            client.check_reachable()
        with pytest.raises(TargetError, match=rf"{re.escape(url)}/v1/accounts refused"):
            client.get("/v1/accounts")


class RawServer:
    """A TCP server on loopback that answers each connection with fixed bytes (or nothing)."""

    def __init__(self, answer: bytes | None) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen()
        self.socket.settimeout(0.05)  # so that serve() sees the stop flag promptly
        self.answer = answer
        self.stop = threading.Event()
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.socket.getsockname()[1]}"

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.settimeout(5)
            self.connections.append(connection)
            if self.answer is not None:
                connection.recv(65536)
                connection.sendall(self.answer)
                connection.close()

    def close(self) -> None:
        self.stop.set()
        self.socket.close()
        for connection in self.connections:
            connection.close()
        self.thread.join(timeout=2)


@pytest.fixture
def raw_server(request: pytest.FixtureRequest) -> Iterator[RawServer]:
    server = RawServer(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("raw_server", [None], indirect=True)
def test_silent_target_times_out_with_a_target_error(raw_server: RawServer) -> None:
    expected = rf"{re.escape(raw_server.url)}/v1/accounts did not answer within 0\.2 s"
    with (
        TargetClient(raw_server.url, sign=False, timeout=0.2) as client,
        pytest.raises(TargetError, match=expected),
    ):
        client.get("/v1/accounts")


@pytest.mark.parametrize("raw_server", [b"hello, this is not HTTP\r\n\r\n"], indirect=True)
def test_non_http_answer_is_a_target_error(raw_server: RawServer) -> None:
    expected = rf"{re.escape(raw_server.url)}/ did not answer with valid HTTP"
    with (
        TargetClient(raw_server.url, sign=False) as client,
        pytest.raises(TargetError, match=expected),
    ):
        client.check_reachable()


@pytest.mark.parametrize(
    "raw_server", [b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"], indirect=True
)
def test_tls_to_a_plain_http_port_is_a_target_error(raw_server: RawServer) -> None:
    url = raw_server.url.replace("http://", "https://")
    expected = rf"TLS handshake with the target at {re.escape(url)}/ failed"
    with TargetClient(url, sign=False) as client, pytest.raises(TargetError, match=expected):
        client.check_reachable()


def test_reachable_target_answers_any_status() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(404))
    with TargetClient("http://bank.test", transport=transport) as client:
        assert client.check_reachable() == 404
        assert client.exchanges == ()  # the probe is not a scenario's exchange


def test_dns_failure_names_the_host() -> None:
    cause = socket.gaierror(-2, "Name or service not known")
    error = httpx.ConnectError("[Errno -2] Name or service not known")
    error.__cause__ = cause
    made = target_error(error, "https://psd2.bank.invalid/v1/accounts")
    assert made.message == (
        "the host name psd2.bank.invalid of the target at https://psd2.bank.invalid/v1/accounts "
        "cannot be resolved; check the host in --target (or base_url in the profile)"
    )


def test_client_signs_with_the_given_identity(client: TargetClient) -> None:
    exchange = client.get("/v1/accounts")
    credentials = default_identity().signing_credentials()
    assert exchange.request_header("TPP-Signature-Certificate") == credentials.certificate_b64
    assert f'keyId="{credentials.key_id}"' in str(exchange.request_header("Signature"))


def test_a_replay_signs_with_the_run_s_own_files_and_names_no_key_content(
    tmp_path: Path,
) -> None:
    files = write_identity(default_identity(), tmp_path / "ids")
    profile_file = tmp_path / "bank.toml"
    profile_file.write_text(
        f'base_url = "http://bank.test"\ncertificate = "{files["certificate"]}"\n'
        f'key = "{files["key"]}"\n',
        encoding="utf-8",
    )
    profile = load_profile(profile_file)
    client = TargetClient.from_profile(profile, transport=httpx.MockTransport(echo))
    with client:
        command = client.post("/v1/payments/x", json=PAYMENT).reproduce_command()
    assert f"--profile {profile_file}" in command
    assert f"--cert {files['certificate']}" in command and f"--key {files['key']}" in command
    assert "PRIVATE KEY" not in command
    # an explicit identity still wins
    with TargetClient.from_profile(profile, transport=httpx.MockTransport(echo)) as again:
        exchange = again.get("/v1/x")
    assert "--cert other.pem" in exchange.reproduce_command(cert="other.pem")


@pytest.mark.parametrize(
    ("executable", "on_path", "shown"),
    [
        # make run: the venv's script, not on the PATH, shown by its path
        ("{root}/.venv/bin/python", None, ".venv/bin/conformance"),
        # the venv active (or a user install): the shell finds that very script
        ("{root}/.venv/bin/python", "{root}/.venv/bin/conformance", "conformance"),
        # another conformance on the PATH is not this one: the path again
        ("{root}/.venv/bin/python", "/usr/bin/conformance", ".venv/bin/conformance"),
        # an interpreter with no script beside it: python -m, by the interpreter's path
        ("{root}/py/python3", None, "py/python3 -m conformance"),
    ],
)
def test_a_replay_names_the_program_as_it_can_be_started_again(
    tmp_path: Path, executable: str, on_path: str | None, shown: str
) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "conformance").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "py").mkdir()
    path = on_path.format(root=tmp_path) if on_path else None
    assert program_for(executable.format(root=tmp_path), path, tmp_path) == shown
    # from another folder, the absolute path
    elsewhere = tmp_path / "elsewhere"
    if shown != "conformance":
        assert program_for(executable.format(root=tmp_path), path, elsewhere).startswith("/")


def test_an_answer_dripped_a_byte_at_a_time_ends_at_the_timeout() -> None:
    """security-5.md M12: httpx's timeout bounds each read, so a bank sending one byte every
    few seconds held ``run`` and ``discover`` for ever; now the whole answer has the timeout."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n"
            )
            while not stop.wait(0.3):
                try:
                    connection.sendall(b" ")
                except OSError:
                    return

    threading.Thread(target=drip, daemon=True).start()
    client = TargetClient(f"http://127.0.0.1:{listener.getsockname()[1]}", sign=False, timeout=1.0)
    began = time.monotonic()
    try:
        with pytest.raises(TargetError, match=r"did not answer within 1 s"):
            client.get("/v1/accounts")
    finally:
        stop.set()
        listener.close()
        client.close()
    assert time.monotonic() - began < 5


def test_an_answer_over_the_cap_is_not_read_further() -> None:
    """security-5.md M13: discover kept every answer whole (2.9 GB for 20 MB answers); with
    ``max_answer_bytes`` (discover's) a larger answer ends its request."""
    listener = socket.create_server(("127.0.0.1", 0))
    size = 4 * 1024 * 1024

    def big() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}"
            with contextlib.suppress(OSError):
                connection.sendall(head.encode() + b"\r\n\r\n" + b" " * size)

    threading.Thread(target=big, daemon=True).start()
    client = TargetClient(f"http://127.0.0.1:{listener.getsockname()[1]}", sign=False, timeout=5)
    client.max_answer_bytes = 1024 * 1024
    try:
        with pytest.raises(TargetError, match=r"larger than 1048576 bytes"):
            client.get("/v1/accounts")
    finally:
        listener.close()
        client.close()
