"""What a run leaves for people: verdicts, the compliance matrix, Allure labels and attachments,
masking; and the check that the reports directory is writable.

``verdicts`` holds the verdict words and findings of a scenario; ``causes`` groups the failures
by cause (one entry per cause, its quote from ``spec_quote``); ``collector`` gathers the verdicts
on the controller and writes the compliance document, which ``compliance`` builds and writes
(``write_compliance``: ``compliance.json``, ``.md`` and ``.html``); ``compliance_page`` builds
its outline and ``compliance_render`` draws it as Markdown and HTML, with ``pictures`` (bars per
operation, the grid operations × kinds) and ``timings`` (answer times, p50 and p95); ``junit``
adds the should suite to ``junit.xml``;
``allure`` labels and attaches per scenario and ``allure_files`` writes the run-level files;
``allure_single`` makes the copy of the results a mailable one-file report is rendered from;
``replays`` keeps the values a failure's replay line masks and names a scenario run again;
``masking.scrub`` is what every report text goes through; ``compare`` tells two runs apart.
``eligibility`` says whether a run is eligible for certification; ``baseline`` holds a run against
its known failures; ``last_failed`` lists the previous run's failures for ``run --last-failed``;
``exchange_record`` keeps a scenario's exchanges, masked, for the sealed record
(``conformance.evidence``); ``traffic_files`` writes the run's event stream and HAR.
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
