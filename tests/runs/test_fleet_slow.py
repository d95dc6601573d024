"""The fleet as issue 34 measures it, with whole runs (slow: ``make test-slow``).

- The nine example profiles' whole runs, already made in the session (``shared_runs.example_run``,
  judged by ``test_example_profiles.py``), read as a fleet (``fleet report``): every bank
  judged, in its own column, and no cause, for the reference server plays each bank faithfully.
- Three of the examples, each played by its own bundled reference server (``fleet run --play``),
  in smoke runs (a smoke run judges every operation once each way, which reaches the faults
  below): one fault played by all of them, two banks with a fault of their own. The matrix shows
  the shared one as a platform cause and the two as bank causes; a second round with one bank's
  fault fixed shows it as fixed there. bench/RESULTS.md has the same fleet measured.
- A fleet where one bank hangs (it accepts and never answers) and one refuses every certificate
  still reports the other, with those two named and why.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving_support import serving

from conformance.bankside.bundled import bundled_reference_server
from conformance.cli import main
from runs.shared_runs import EXAMPLES, example_run

ROOT = Path(__file__).resolve().parents[2]
#: The fleet of the faults: two banks with a fault of their own and one without.
BANKS = ("berlin-group-naming", "gateway-bank", "oauth-token-bank")
SHARED = "request-id-not-echoed"  # X-Request-ID not echoed (spec 4.2): every bank
OWN = {"gateway-bank": "html-errors", "oauth-token-bank": "location-missing"}


def _fleet_run(reports: Path, round: str, own: dict[str, str]) -> int:
    return main(
        [
            "fleet", "run", *(str(EXAMPLES / f"{bank}.toml") for bank in BANKS),
            "--reports", str(reports), "--play", "--smoke", "--jobs", "3",
            "--deadline", "600", "--round", round, "--fault", SHARED,
            *(word for bank, fault in own.items() for word in ("--bank-fault", f"{bank}:{fault}")),
        ]
    )  # fmt: skip


def _scopes(fleet: dict[str, Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {cause["title"]: (cause["scope"], tuple(cause["banks"])) for cause in fleet["causes"]}


@pytest.mark.slow
def test_the_example_runs_already_made_are_a_fleet_of_faithful_banks(tmp_path: Path) -> None:
    examples = sorted(EXAMPLES.glob("*.toml"))
    runs = [example_run(profile) for profile in examples]
    out = tmp_path / "report"
    assert main(["fleet", "report", *(str(run.reports) for run in runs), "--out", str(out)]) == 0
    fleet = json.loads((out / "fleet.json").read_text())
    assert fleet["banks_judged"] == len(examples)
    assert sorted(bank["label"] for bank in fleet["banks"]) == [path.stem for path in examples]
    assert fleet["causes"] == []


@pytest.mark.slow
def test_a_fleet_tells_platform_causes_from_bank_causes_and_what_was_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the gateway bank's secrets, given demonstration values as make selfcheck-examples does
    monkeypatch.setenv("EXAMPLE_BANK_CLIENT_ID", "demo")
    monkeypatch.setenv("EXAMPLE_BANK_API_KEY", "demo")
    _fleet_run(tmp_path / "round-1", "round-1", OWN)
    first = json.loads((tmp_path / "round-1" / "fleet-report" / "fleet.json").read_text())
    assert first["banks_judged"] == len(BANKS)
    scopes = _scopes(first)
    shared = [title for title in scopes if "X-Request-ID" in title]
    assert len(shared) == 1 and scopes[shared[0]] == ("platform", BANKS)
    bank_causes = {banks for scope, banks in scopes.values() if scope == "bank"}
    assert bank_causes == {("gateway-bank",), ("oauth-token-bank",)}, scopes

    # the next night: gateway-bank's fault is fixed
    _fleet_run(tmp_path / "round-2", "round-2", {"oauth-token-bank": OWN["oauth-token-bank"]})
    out = tmp_path / "report"
    assert main(["fleet", "report", str(tmp_path / "round-1"), str(tmp_path / "round-2"),
                 "--out", str(out)]) == 0  # fmt: skip
    fleet = json.loads((out / "fleet.json").read_text())
    banks = {bank["label"]: bank for bank in fleet["banks"]}
    fixed = banks["gateway-bank"]["changes"]
    assert len(fixed["fixed"]) == 1 and fixed["new"] == [] and len(fixed["persisting"]) == 1
    assert banks["oauth-token-bank"]["changes"]["fixed"] == []
    assert [point["round"] for point in fleet["platform_trend"]] == ["round-1", "round-2"]
    assert [point["bank"] for point in fleet["platform_trend"]] == [2, 1]
    page = (out / "fleet.html").read_text()
    assert page.count("<svg") == 1 + len(BANKS)  # the platform's trend and each bank's


@contextlib.contextmanager
def _silent_target() -> Iterator[str]:
    """A target that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


@contextlib.contextmanager
def _refusing_target() -> Iterator[str]:
    """A target that refuses every request's certificate (spec 7 body, 401)."""
    import http.server

    body = json.dumps({"status": 401, "code": "CERTIFICATE_INVALID",
                       "message": "not a certificate we know"}).encode()  # fmt: skip

    class Refuses(http.server.BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _refuse

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Refuses) as url:
        yield url


def _profile(folder: Path, stem: str, base_url: str, *, timeout: float = 30.0) -> Path:
    text = (ROOT / "profiles" / "reference-server.toml").read_text(encoding="utf-8")
    text = text.replace('base_url = "http://127.0.0.1:8000"', f'base_url = "{base_url}"')
    text = text.replace("timeout = 30.0", f"timeout = {timeout}")
    text = text.replace('name = "Bundled reference server"', f'name = "Bank {stem}"')
    path = folder / f"{stem}.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_bank_that_hangs_and_one_that_refuses_do_not_stop_the_others(tmp_path: Path) -> None:
    with (
        bundled_reference_server(log_path=tmp_path / "server.log") as steady_url,
        _silent_target() as silent_url,
        _refusing_target() as refusing_url,
    ):
        profiles = [
            _profile(tmp_path, "steady", steady_url),
            # its answer would be awaited for ten minutes: the fleet's deadline ends it first
            _profile(tmp_path, "hangs", silent_url, timeout=600.0),
            _profile(tmp_path, "refuses", refusing_url),
        ]
        code = main(
            ["fleet", "run", *map(str, profiles), "--reports", str(tmp_path / "fleet"),
             "--smoke", "--jobs", "3", "--deadline", "90"]
        )  # fmt: skip
    assert code == 1
    fleet = json.loads((tmp_path / "fleet" / "fleet-report" / "fleet.json").read_text())
    banks = {bank["label"]: bank for bank in fleet["banks"]}
    assert banks["steady"]["verdict"] and banks["steady"]["report"] is not None
    assert banks["hangs"]["status"] == "timed out"
    assert banks["hangs"]["why"].startswith("no verdict within the deadline of 90 s")
    assert banks["refuses"]["status"] == "not run"
    assert "refused the suite's own signing certificate" in banks["refuses"]["why"]
    page = (tmp_path / "fleet" / "fleet-report" / "fleet.md").read_text()
    assert "- **hangs** (timed out): no verdict within the deadline" in page
    assert "- **refuses** (not run): exit code 3: conformance: NOT JUDGED" in page
