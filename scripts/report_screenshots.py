"""The documented check of the rendered Allure report (issue 13): render a faithful run and a run
with one deliberate fault, open them in headless Chromium, and keep three screenshots for the
README: the front page (the report named after the target and profile, the run's facts as
variables, the tree by spec part), the fault run's tree opened at its failures (spec part ›
operation › rule), and one must failure; and the reference server's SCA page, as the PSU sees it.

Needs Chromium (Debian: ``apt-get install chromium``) and Node.js (``npx allure@3``):

    .venv/bin/python scripts/report_screenshots.py            # writes docs/img/allure-*.png
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


def _conformance(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "conformance", *args], check=True, cwd=ROOT)


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


#: A test result inside a one-file report: ``d("data/test-results/<id>.json","<base64>")``.
_EMBEDDED = re.compile(r'd\("data/test-results/[^"]+\.json","([^"]*)"\)')


def _test_results(index: Path) -> list[dict[str, object]]:
    """The test results a one-file Allure report carries (its data is inside its index.html)."""
    page = index.read_text(encoding="utf-8")
    return [json.loads(base64.b64decode(match)) for match in _EMBEDDED.findall(page)]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    _sca_page()
    with tempfile.TemporaryDirectory() as work:
        reports = Path(work)
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
