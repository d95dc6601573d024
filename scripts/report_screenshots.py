"""The documented check of the rendered reports (issue 13): render a faithful run and a run
with one deliberate fault, open them in headless Chromium, and keep the screenshots the docs
show: Allure's front page (the report named after the target and profile, the run's facts as
variables, the tree by spec part), the fault run's tree opened at its failures (spec part ›
operation › rule), and one must failure; ``compliance.html`` of a run with the fault (its top,
the bars per operation, the grid of operations × scenario kinds); and the reference server's
SCA page, as the PSU sees it.

Needs Chromium (Debian: ``apt-get install chromium``) and, for Allure, Node.js
(``npx allure@3``):

    .venv/bin/python scripts/report_screenshots.py            # every picture of docs/img/
    .venv/bin/python scripts/report_screenshots.py compliance # docs/img/compliance-*.png only
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
FAULT = "kid-error-401"


def _conformance(*args: str, verdict: bool = False) -> None:
    """Run ``conformance`` ARGS; ``verdict``: a run whose exit 1 is its NOT CONFORMANT verdict."""
    done = subprocess.run([sys.executable, "-m", "conformance", *args], check=False, cwd=ROOT)
    if done.returncode not in ((0, 1) if verdict else (0,)):
        words = " ".join(args)
        raise SystemExit(f"report_screenshots: conformance {words}: exit {done.returncode}")


def _shoot(url: str, target: Path, height: int) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("report_screenshots: Chromium is not installed")
    subprocess.run(
        [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size=1400,{height}", "--virtual-time-budget=15000",
         f"--screenshot={target}", url],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    print(f"report_screenshots: {target.relative_to(ROOT)} ({target.stat().st_size} bytes)")


class _Site:
    """An Allure report served over HTTP (a browser cannot load it from file:// everywhere)."""

    def __init__(self, site: Path) -> None:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/index.html"

    def __enter__(self) -> str:
        return self.url

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()


def _sca_page() -> None:
    """A sandbox customer's payment, its authorisation started, and the page it redirects to."""
    from conformance.bankside.bundled import bundled_reference_server
    from conformance.bankside.client import TargetClient
    from conformance.commands.export_examples import example_directory
    from conformance.profile import profile_from_options

    def example(op_id: str) -> dict[str, object]:
        document: dict[str, object] = json.loads(
            (example_directory() / f"{op_id}.json").read_text(encoding="utf-8")
        )
        return document

    with bundled_reference_server() as url:
        profile = profile_from_options(target=url)
        with TargetClient.from_profile(profile) as client:
            customer = example("SCU")
            made = client.request("POST", str(customer["path"]), json=customer["body"])
            psu = json.loads(made.response_body)
            payment = example("E16")
            headers = {**payment["headers"], "PSU-ID": psu["customerId"]}  # type: ignore[dict-item]
            created = client.request(
                "POST", str(payment["path"]), json=payment["body"], headers=headers
            )
            payment_id = json.loads(created.response_body)["paymentId"]
            started = client.request(
                "POST",
                f"{payment['path']}/{payment_id}/authorisations",
                headers=headers,
            )
            link = json.loads(started.response_body)["_links"]["scaRedirect"]["href"]
        _shoot(f"{url}{link}", OUT / "sca-page.png", 800)


#: The sections of compliance.html shot below its top: (picture, the heading it starts at).
_COMPLIANCE_SECTIONS = (
    ("compliance-bars.png", "By operation (scenarios and answer times)"),
    ("compliance-grid.png", "Operations × scenario kinds"),
)


def _compliance(reports: Path) -> None:
    """compliance.html of a run with the fault: its top, and each section of
    :data:`_COMPLIANCE_SECTIONS` (a copy of the page that starts at the section's heading: a
    headless screenshot does not scroll to an anchor)."""
    run = reports / "compliance"
    _conformance("run", "--fault", FAULT, "--reports", str(run), verdict=True)
    page = run / "compliance.html"
    _shoot(page.as_uri(), OUT / "compliance-top.png", 1250)
    text = page.read_text(encoding="utf-8")
    body = text.index("<body>") + len("<body>")
    for picture, heading in _COMPLIANCE_SECTIONS:
        start = text.find(f"<h2>{heading}")
        if start < 0:
            raise SystemExit(f"report_screenshots: compliance.html has no heading {heading!r}")
        copy = run / f"shot-{picture}.html"
        copy.write_text(text[:body] + "\n" + text[start:], encoding="utf-8")
        _shoot(copy.as_uri(), OUT / picture, 1000)


#: A test result inside a one-file report: ``d("data/test-results/<id>.json","<base64>")``.
_EMBEDDED = re.compile(r'd\("data/test-results/[^"]+\.json","([^"]*)"\)')


def _test_results(index: Path) -> list[dict[str, object]]:
    """The test results a one-file Allure report carries (its data is inside its index.html)."""
    page = index.read_text(encoding="utf-8")
    return [json.loads(base64.b64decode(match)) for match in _EMBEDDED.findall(page)]


def main(argv: list[str] | None = None) -> int:
    """Every picture, or those of the parts named (``sca``, ``compliance``, ``allure``)."""
    parts = set(sys.argv[1:] if argv is None else argv) or {"sca", "compliance", "allure"}
    unknown = parts - {"sca", "compliance", "allure"}
    if unknown:
        raise SystemExit(f"report_screenshots: unknown part(s) {sorted(unknown)}")
    OUT.mkdir(parents=True, exist_ok=True)
    if "sca" in parts:
        _sca_page()
    with tempfile.TemporaryDirectory() as work:
        reports = Path(work)
        if "compliance" in parts:
            _compliance(reports)
        if "allure" not in parts:
            return 0
        faithful = reports / "faithful"
        _conformance("run", "--reports", str(faithful))
        _conformance("report", "--reports", str(faithful))
        with _Site(faithful / "allure-report") as url:
            _shoot(url, OUT / "allure-front.png", 1000)
        _conformance("selfcheck", "--fault", FAULT, "--skip-faithful", "--reports", str(reports))
        run = reports / FAULT
        _conformance("report", "--reports", str(run))
        site = run / "allure-report"
        failed = next(
            document["id"]
            for document in _test_results(site / "index.html")
            if document.get("status") == "failed"
        )
        with _Site(site) as url:
            _shoot(url, OUT / "allure-tree.png", 1100)
            _shoot(f"{url}#{failed}", OUT / "allure-failure.png", 1100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
