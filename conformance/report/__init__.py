"""What a conformance run leaves behind for people: Allure results, the compliance matrix.

| module | job |
|---|---|
| :mod:`~conformance.report.verdicts` | the verdict words and how one test's reports become one |
| :mod:`~conformance.report.compliance` | ``compliance.json``, ``compliance.md``: operation × rule |
| :mod:`~conformance.report.collector` | gathers the verdicts of a run, writes the matrix |
| :mod:`~conformance.report.allure` | Allure labels and attachments of one scenario |
| :mod:`~conformance.report.masking` | what may not appear in a report, and how it is hidden |

JUnit XML needs nothing here: pytest writes it (``--junitxml``), and the scenario's properties
(operation, rule, spec part, level, kind, verdict) go into it through ``user_properties``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from conformance.errors import ConformanceError

__all__ = ["writable_reports"]


def writable_reports(directory: Path) -> Path:
    """``directory``, created if need be, once a file could be made in it: the server log, the
    JUnit file, Allure's results and the compliance matrix all go there, and finding out at the
    end of a run (a traceback from whichever writes first) would waste the run."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise ConformanceError(
            f"cannot write reports to {directory}: {error.strerror or error}; "
            "name another directory with --reports"
        ) from None
    return directory
