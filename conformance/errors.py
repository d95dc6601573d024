"""Errors the harness reports to its user as one clear line instead of a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ConformanceError(Exception):
    """A problem with the user's input or environment: a bad target, certificate, profile or file.

    The CLI prints ``conformance: <message>`` and exits with ``exit_code``; nothing else in the
    harness should catch it.
    """

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


#: The exit code of a run that stopped before every scenario had a verdict (Ctrl-C, SIGTERM, the
#: bundled reference server stopped): 128 + SIGINT, the code a shell gives a job Ctrl-C ended, and
#: apart from 2 (a usage or configuration error) and pytest's own codes.
INTERRUPTED_EXIT = 130


class RunInterrupted(KeyboardInterrupt):
    """A run stopped from outside other than by Ctrl-C (SIGTERM: a CI job's time-out): it ends
    the run as Ctrl-C does, and its message says what stopped it."""


class TargetError(ConformanceError):
    """The target could not be reached or did not speak HTTP/JSON as expected."""

    exit_code = 3


class CertificateError(ConformanceError):
    """A certificate or key could not be read, or does not fit the spec 5 requirements."""


class ProfileError(ConformanceError):
    """A target profile (TOML) is missing, malformed or inconsistent."""


class ContractError(ConformanceError):
    """A file in ``schemas/`` is malformed: a schema fails ``check_schema`` or a row is bad."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to a mistyped ``word``, or ""."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
