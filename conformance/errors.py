"""Errors the harness reports to its user as one clear line instead of a traceback."""

from __future__ import annotations

import difflib
import textwrap
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


#: What each exit code of ``conformance run`` means, in order: the one table the README and
#: ``conformance run --help`` both show (``exit_codes_markdown``, ``exit_codes_text``).
EXIT_CODES: tuple[tuple[str, str], ...] = (
    ("0", "every must requirement judged was met (should findings count only with --strict)"),
    (
        "1",
        "a must failure (with --strict, a should finding too), or scenarios blocked by their "
        "set-up",
    ),
    (
        str(ConformanceError.exit_code),
        "a mistake in the command line, profile, certificate or reports folder: one line, "
        "nothing ran",
    ),
    (
        str(TargetError.exit_code),
        "not judged: the target cannot be reached or is not the interface, the preflight's "
        "probes were all refused for the suite's own certificate, or one set-up cause blocked "
        "most scenarios (pytest's internal error, a crash of the suite, is 3 too)",
    ),
    ("4, 5", "pytest's own: a pytest argument after -- it refuses, no test collected"),
    (
        str(INTERRUPTED_EXIT),
        "interrupted (Ctrl-C, SIGTERM, the bundled server stopped, or any other stop before "
        "every scenario ran, such as pytest's -x): no verdict",
    ),
)


def exit_codes_markdown() -> str:
    """:data:`EXIT_CODES` as the README's Markdown table."""
    rows = [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES]
    return "\n".join(["| exit | the run |", "|---|---|", *rows])


def exit_codes_text() -> str:
    """:data:`EXIT_CODES` as plain text for ``--help`` (an argparse epilog, kept as written)."""
    width = max(len(code) for code, _ in EXIT_CODES)
    lines = ["exit codes:"]
    for code, meaning in EXIT_CODES:
        wrapped = textwrap.wrap(meaning, width=88 - width - 4, break_on_hyphens=False)
        lines.append(f"  {code.rjust(width)}  {wrapped[0]}")
        lines.extend(f"  {' ' * width}  {more}" for more in wrapped[1:])
    return "\n".join(lines)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to a mistyped ``word``, or ""."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
