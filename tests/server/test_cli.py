"""``python -m reference_server`` and ``conformance serve``: options, the printed URL, clean
stops on SIGTERM/SIGINT, and state that survives SIGKILL with ``--data`` (WAL, synchronous=FULL)."""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from conformance.commands import serve
from conformance.signing import default_ca, generate_ca
from reference_server.cli import build_parser, main
from server import bodies
from server.conftest import make_client

URL = re.compile(r"^reference server listening on (http://127\.0\.0\.1:(\d+))$")


@contextmanager
def running(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "reference_server", "--port", "0", "--log-level", "WARNING", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        found = URL.match(line)
        if found is None:
            process.kill()
            assert process.stderr is not None
            pytest.fail(f"unexpected first line {line!r}; stderr: {process.stderr.read()}")
        assert int(found.group(2)) > 0
        yield process, found.group(1)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_list_faults_prints_each_fault_with_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list-faults"]) == 0
    out = capsys.readouterr().out
    assert "skip-digest-check" in out and "spec 5 part 4" in out
    assert "accept-foreign-debtor" in out and "spec 7 rule 5" in out


def test_unknown_fault_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port", "0", "--fault", "no-such-fault"]) == 2
    assert "no-such-fault" in capsys.readouterr().err


def test_serve_command_has_the_same_options() -> None:
    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--port", "0", "--fault", "html-errors", "--data", "x.db"])
    own = build_parser().parse_args(["--port", "0", "--fault", "html-errors", "--data", "x.db"])
    assert {k: v for k, v in vars(args).items() if k != "func"} == vars(own)
    assert args.func.__name__ == "run"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_server_stops_cleanly_on_signals(stop: signal.Signals, contract) -> None:
    with running() as (process, url):
        with make_client(url, contract) as client:
            assert client.get("/v1/sandbox/customers").status_code == 200
        process.send_signal(stop)
        assert process.wait(timeout=10) == 0


def test_created_data_survives_a_kill_with_data_file(tmp_path: Path, contract) -> None:
    data = tmp_path / "state.db"
    with running("--data", str(data)) as (process, url):
        with make_client(url, contract) as client:
            created = client.post("/v1/sandbox/customers", json=bodies.customer(name="Durable"))
            assert created.status_code == 201
            account = client.post(
                "/v1/sandbox/accounts", json=bodies.account(created.json()["customerNumber"])
            )
            assert account.status_code == 201
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    with running("--data", str(data)) as (_, url), make_client(url, contract) as client:
        customers = client.get("/v1/sandbox/customers").json()
        assert [c["customerName"] for c in customers] == ["Durable"]
        assert customers[0]["accounts"] == [account.json()["id"]]
        read = client.get(f"/v1/sandbox/accounts/{account.json()['id']}")
        assert read.json() == [account.json()]


def test_trust_option_refuses_other_cas(tmp_path: Path, contract) -> None:
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(default_ca().certificate.public_bytes(Encoding.PEM))
    other = tmp_path / "other.pem"
    other.write_bytes(
        generate_ca("Other", key=default_ca().private_key).certificate.public_bytes(Encoding.PEM)
    )
    with running("--trust", str(ca_file)) as (_, url), make_client(url, contract) as client:
        assert client.get("/v1/sandbox/customers").status_code == 200
    with running("--trust", str(other)) as (_, url), make_client(url, contract) as client:
        assert client.get("/v1/sandbox/customers").status_code == 401


def test_trust_takes_several_cas_repeated_or_in_one_pem_file(tmp_path: Path, contract) -> None:
    """A certificate of any CA given is accepted: the bundled run trusts a second, UTF-8-named
    CA for the RFC 2047 scenario (spec 5 item 3) beside the run's own."""
    other = generate_ca("Other", key=default_ca().private_key).certificate.public_bytes(
        Encoding.PEM
    )
    mine = default_ca().certificate.public_bytes(Encoding.PEM)
    (tmp_path / "other.pem").write_bytes(other)
    (tmp_path / "mine.pem").write_bytes(mine)
    (tmp_path / "both.pem").write_bytes(other + mine)
    for args in (
        ("--trust", str(tmp_path / "other.pem"), "--trust", str(tmp_path / "mine.pem")),
        ("--trust", str(tmp_path / "both.pem")),
    ):
        with running(*args) as (_, url), make_client(url, contract) as client:
            assert client.get("/v1/sandbox/customers").status_code == 200, args


def test_trust_is_repeatable_and_a_file_without_a_certificate_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = build_parser().parse_args(["--trust", "a.pem", "--trust", "b.pem"])
    assert args.trust == [Path("a.pem"), Path("b.pem")]
    assert build_parser().parse_args([]).trust == []
    empty = tmp_path / "empty.pem"
    empty.write_bytes(b"no certificate here")
    assert main(["--port", "0", "--trust", str(empty)]) == 2
    assert "holds no CA certificate" in capsys.readouterr().err
    assert main(["--port", "0", "--trust", str(tmp_path / "missing.pem")]) == 2
    assert capsys.readouterr().err == (
        f"reference server: cannot read the --trust file {tmp_path / 'missing.pem'}: "
        "No such file or directory\n"
    )


def test_faults_are_announced_and_active(contract) -> None:
    with running("--fault", "html-errors") as (process, url):
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "faults switched on: html-errors"
        response = httpx.get(f"{url}/v1/nothing")
        assert response.headers["content-type"].startswith("text/html")


def test_port_in_use_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["--port", str(port), "--log-level", "ERROR"]) == 2
    assert "cannot listen" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["not-a-database", "a-directory", "in-a-missing-directory"])
def test_a_data_file_sqlite_cannot_use_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = {
        "not-a-database": tmp_path / "notes.db",
        "a-directory": tmp_path,
        "in-a-missing-directory": tmp_path / "missing" / "state.db",
    }[kind]
    if kind == "not-a-database":
        path.write_text("these are notes, not SQLite pages\n" * 200, encoding="utf-8")
    assert main(["--port", "0", "--log-level", "ERROR", "--data", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"reference server: cannot use {path} as the data file: ")
    assert "Traceback" not in error and len(error.strip().splitlines()) == 1


@pytest.mark.parametrize("port", ["70000", "-1", "eighty"])
def test_a_port_outside_0_to_65535_is_a_usage_error(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["--port", port])
    assert stopped.value.code == 2
    assert f"invalid port value: '{port}'" in capsys.readouterr().err


def test_throttling_takes_whole_non_negative_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["--throttle-every", "40", "--retry-after", "2"])
    assert (args.throttle_every, args.retry_after) == (40, 2)
    assert build_parser().parse_args([]).throttle_every == 0
    for bad in (["--throttle-every", "-1"], ["--retry-after", "soon"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(bad)
    assert "--throttle-every" in capsys.readouterr().err
