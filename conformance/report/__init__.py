"""What a run leaves for people: verdicts, the compliance matrix, Allure labels and attachments,
masking; and the check that the reports directory is writable.
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
