"""The documented check that Schemathesis's stateful mode runs against the reference server
(issue 21 item 10): the OpenAPI export (``conformance export-openapi``: links from each creation
to what takes its id, response headers, the spec 5 security schemes) drives it, every request
signed by the suite's own signer (``scripts/schemathesis_signing.py``).

It installs Schemathesis and this project into a temporary virtual environment (PyPI), starts
``conformance serve`` on a free port, runs ``st run --phases stateful`` against it for a bounded
time, prints Schemathesis's report and stops the server. CI does not run it (it needs the
network for the install and takes minutes); the result of the last run is in
docs/explanation/contract.md.

    .venv/bin/python scripts/schemathesis_stateful.py [--max-time 120] [--checks LIST]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The Schemathesis the check was written against (its hooks and CLI as of 4.x).
SCHEMATHESIS = "schemathesis>=4,<5"
#: The checks run by default: what the contract documents (statuses, bodies, headers) and that
#: no answer is a 5xx.
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance,response_headers_conformance"
)


def _install(venv: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", SCHEMATHESIS, str(ROOT)], check=True
    )
    return venv / "bin" / "st"


def _serve() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if "listening on " not in line:
        server.kill()
        raise SystemExit(f"the reference server did not start: {line!r}")
    return server, line.rsplit(" ", 1)[-1].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--max-time", type=int, default=120, help="seconds (default 120)")
    parser.add_argument("--checks", default=CHECKS, help=f"Schemathesis checks ({CHECKS})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="schemathesis-") as folder:
        temporary = Path(folder)
        print(f"installing {SCHEMATHESIS} and this project into {temporary}/venv ...", flush=True)
        st = _install(temporary / "venv")
        openapi = temporary / "openapi.json"
        subprocess.run(
            [sys.executable, "-m", "conformance", "export-openapi", "--out", str(openapi)],
            check=True,
        )
        server, url = _serve()
        print(f"reference server at {url}; st run --phases stateful ...", flush=True)
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "schemathesis_signing",
            "PYTHONPATH": str(ROOT / "scripts"),
        }
        try:
            done = subprocess.run(
                [
                    str(st), "run", str(openapi), "--url", url, "--phases", "stateful",
                    "--checks", args.checks, "--max-time", str(args.max_time), "--workers", "1",
                ],
                env=env,
                check=False,
            )  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=10)
            if server.stdout is not None:
                server.stdout.close()
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
