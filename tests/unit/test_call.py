"""``conformance call`` against a tiny local HTTP server that records what it received.

The foundation's "done when": the request ``call`` sends carries a Digest, a Signature and a
certificate that verify with ``conformance.signing.verify_request`` (spec 5). Also: -H
overrides and removals, --no-sign, --digest sha-512, --cert/--key, exit codes, one-line errors,
and a reproduce command that replays an exchange through ``call``.
"""

from __future__ import annotations

import argparse
import base64
import json
import shlex
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from serving_support import running

from conformance import cli
from conformance.bankside.client import TargetClient
from conformance.commands import call
from conformance.exchange import replay_program
from conformance.signing import default_ca, generate_tpp_identity, verify_request, write_identity

PSU_ID = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001"
BODY = '{"instructedAmount":{"currency":"NOK","amount":"10.00"},"creditorName":"Ærlig AS"}'


@dataclass(frozen=True)
class Received:
    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    peer_port: int

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def verify(self) -> str | None:
        """The spec 5 verdict on this request: None when Digest, Signature, certificate verify."""
        verdict = verify_request(self.method, self.target, dict(self.headers), self.body)
        return None if verdict.ok else f"{verdict.failure}: {verdict.detail}"


class Recorder(ThreadingHTTPServer):
    """Records every request and answers with ``status`` and a JSON body."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[Received] = []
        self.status = 201

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Recorder

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.server.received.append(
            Received(
                self.command, self.path, tuple(self.headers.items()), body, self.client_address[1]
            )
        )
        answer = json.dumps({"transactionStatus": "RCVD", "paymentId": "p-1"}).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def server() -> Iterator[Recorder]:
    with running(Recorder()) as recorder:
        yield recorder


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], int]:
    """``conformance.cli.main``, with no target options from the environment."""
    for name in (
        "CONFORMANCE_PROFILE",
        "CONFORMANCE_TARGET",
        "CONFORMANCE_CERT",
        "CONFORMANCE_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    return cli.main


def test_call_sends_a_request_whose_signature_verifies(
    server: Recorder, main: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "call",
            "post",
            "/v1/payments/norwegian-domestic-credit-transfers?allowLogicalDuplicate=true",
            "--target",
            server.url,
            "-H",
            f"PSU-ID: {PSU_ID}",
            "-H",
            "TPP-Redirect-URI: https://tpp.example/cb",
            "--data-json",
            BODY,
        ]
    )
    assert code == 0
    [received] = server.received
    assert received.method == "POST"
    assert received.target == (
        "/v1/payments/norwegian-domestic-credit-transfers?allowLogicalDuplicate=true"
    )
    assert received.body == BODY.encode("utf-8")
    assert received.verify() is None
    assert str(received.header("Digest")).startswith("SHA-256=")
    assert received.header("Content-Type") == "application/json"
    signature = str(received.header("Signature"))
    assert 'headers="date digest x-request-id psu-id tpp-redirect-uri"' in signature
    out = capsys.readouterr().out
    assert ">>> POST " in out and "Signing string:" in out and f"psu-id: {PSU_ID}" in out
    assert "<<< HTTP 201 Created" in out and '"paymentId": "p-1"' in out


def test_call_exits_zero_whatever_the_status(
    server: Recorder, main: Callable[[list[str]], int]
) -> None:
    server.status = 404
    assert main(["call", "GET", f"{server.url}/v1/accounts/unknown/transactions/t"]) == 0
    assert server.received[0].target == "/v1/accounts/unknown/transactions/t"
    assert server.received[0].verify() is None  # a GET is signed too, without Digest
    assert server.received[0].header("Digest") is None


def test_headers_override_and_remove_defaults(
    server: Recorder, main: Callable[[list[str]], int]
) -> None:
    code = main(
        [
            "call",
            "GET",
            "/v1/sandbox/customers",
            "--target",
            server.url,
            "-H",
            "X-Request-ID: 99999999-0000-4000-8000-000000000000",
            "-H",
            "Accept:",
            "-H",
            "PSU-Corporate-ID;",
        ]
    )
    assert code == 0
    [received] = server.received
    assert received.header("X-Request-ID") == "99999999-0000-4000-8000-000000000000"
    assert received.header("Accept") is None
    assert received.header("PSU-Corporate-ID") == ""
    assert received.verify() is None


def test_digest_sha512_and_data_file(
    server: Recorder, main: Callable[[list[str]], int], tmp_path: Path
) -> None:
    body = tmp_path / "body.json"
    body.write_bytes(BODY.encode("utf-8"))
    args = ["call", "POST", "/v1/signing-baskets", "--target", server.url]
    assert main([*args, "--data", str(body), "--digest", "SHA-512"]) == 0
    [received] = server.received
    assert str(received.header("Digest")).startswith("SHA-512=")
    assert received.body == body.read_bytes()
    assert received.verify() is None


def test_no_sign_sends_no_signature(server: Recorder, main: Callable[[list[str]], int]) -> None:
    assert main(["call", "GET", "/v1/accounts", "--target", server.url, "--no-sign"]) == 0
    [received] = server.received
    for name in ("Signature", "Digest", "TPP-Signature-Certificate"):
        assert received.header(name) is None
    assert received.header("X-Request-ID") is not None


def test_cert_and_key_sign_with_that_identity(
    server: Recorder, main: Callable[[list[str]], int], tmp_path: Path
) -> None:
    identity = generate_tpp_identity(default_ca(), roles=["PSP_PI"], serial=0xC0FFEE)
    files = write_identity(identity, tmp_path)
    args = ["call", "GET", "/v1/accounts", "--target", server.url]
    assert main([*args, "--cert", str(files["certificate"]), "--key", str(files["key"])]) == 0
    [received] = server.received
    der = identity.certificate.public_bytes(serialization.Encoding.DER)
    assert received.header("TPP-Signature-Certificate") == base64.b64encode(der).decode()
    assert 'keyId="SN=c0ffee,' in str(received.header("Signature"))
    assert received.verify() is None


def test_profile_names_target_and_certificate(
    server: Recorder, main: Callable[[list[str]], int], tmp_path: Path
) -> None:
    identity = generate_tpp_identity(default_ca(), serial=0xBEEF)
    write_identity(identity, tmp_path / "certs")
    profile = tmp_path / "bank.toml"
    profile.write_text(
        f'base_url = "{server.url}"\ncertificate = "certs/tpp.pem"\nkey = "certs/tpp.key"\n'
    )
    assert main(["call", "GET", "/v1/accounts", "--profile", str(profile)]) == 0
    assert 'keyId="SN=beef,' in str(server.received[0].header("Signature"))


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "http://127.0.0.1:{port}"], "refused the connection"),
        (["--target", "127.0.0.1:{port}"], "--target must be an http:// or https:// URL"),
        (["--target", "http://h", "--cert", "{tmp}/missing.pem"], "missing.pem does not exist"),
        (["--target", "http://h", "--data", "{tmp}/nothing.json"], "cannot read the --data file"),
        (["--target", "http://h", "--profile", "{tmp}/none.toml"], "none.toml does not exist"),
        (["--target", "http://h", "-H", "no colon"], "is not of the form 'Name: value'"),
        (["--target", "http://h", "-H", "Bad Name: x"], "is not a valid header name"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(
    main: Callable[[list[str]], int],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    extra: list[str],
    message: str,
) -> None:
    port = closed_port()
    words = [word.format(port=port, tmp=tmp_path) for word in extra]
    code = main(["call", "GET", "/v1/accounts", *words])
    err = capsys.readouterr().err
    assert code != 0
    assert err.startswith("conformance: ") and message in err
    assert err.count("\n") == 1  # one line, no traceback


def test_cert_that_is_not_a_certificate_is_a_clear_error(
    main: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    code = main(["call", "GET", "/v1/accounts", "--target", "http://h", "--cert", str(bogus)])
    assert code == 2
    assert "bogus.pem" in capsys.readouterr().err


def test_invalid_json_is_sent_as_given_with_a_note(
    server: Recorder, main: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["call", "POST", "/v1/signing-baskets", "--target", server.url]
    assert main([*args, "--data-json", "{broken"]) == 0
    assert server.received[0].body == b"{broken"
    assert "not valid JSON" in capsys.readouterr().err


def test_reproduce_command_replays_the_exchange(
    server: Recorder, main: Callable[[list[str]], int]
) -> None:
    with TargetClient(server.url) as client:
        original = client.post(
            "/v1/payments/norwegian-domestic-credit-transfers",
            params={"allowLogicalDuplicate": "false"},
            content=BODY,
            headers={"PSU-ID": PSU_ID, "TPP-Redirect-URI": "https://tpp.example/cb?x='1'"},
        )
    words = shlex.split(original.reproduce_command())
    program = shlex.split(replay_program())
    assert words[: len(program) + 1] == [*program, "call"]
    assert main(words[len(program) :]) == 0
    first, replayed = server.received
    assert (replayed.method, replayed.target, replayed.body) == (
        first.method,
        first.target,
        first.body,
    )
    for name in ("PSU-ID", "TPP-Redirect-URI", "Content-Type", "Accept"):
        assert replayed.header(name) == first.header(name)
    assert replayed.header("X-Request-ID") != first.header("X-Request-ID")  # a fresh one
    assert replayed.verify() is None


def test_register_adds_the_call_sub_command() -> None:
    parser = argparse.ArgumentParser(prog="conformance")
    call.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["call", "GET", "/v1/accounts", "-H", "A: 1", "-H", "B: 2"])
    assert args.func is call.run
    assert args.headers == ["A: 1", "B: 2"]


def test_client_keeps_one_connection_alive_across_requests(server: Recorder) -> None:
    with TargetClient(server.url) as client:
        for _ in range(3):
            client.get("/v1/accounts")
    assert len({received.peer_port for received in server.received}) == 1
    assert all(received.verify() is None for received in server.received)
