"""The SCA step done by a person at the terminal (``[sca] mode = "manual"``): the link is printed
and the suite waits for Enter."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import IO

from conformance.bankside.sca.base import ScaOutcome
from conformance.checks import NotApplicable

__all__ = ["ManualSca"]


def _open_terminal() -> IO[str]:
    return open("/dev/tty", "r+", encoding="utf-8")


class ManualSca:
    """Prints the link on the terminal (``/dev/tty``, past pytest's capture) and waits for Enter.

    A person completes SCA in a browser as the PSU. Without a terminal, or under pytest-xdist
    (several workers cannot share one person), the scenario is not applicable.
    """

    def __init__(
        self,
        *,
        terminal: Callable[[], IO[str]] = _open_terminal,
        environ: Mapping[str, str] | None = None,
        decoupled: bool = False,
    ) -> None:
        self.decoupled = decoupled
        self.terminal = terminal
        self.environ: Mapping[str, str] = os.environ if environ is None else environ

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        if self.environ.get("PYTEST_XDIST_WORKER"):
            raise NotApplicable(
                "manual SCA needs one interactive process: run without pytest-xdist (-n)"
            )
        try:
            stream = self.terminal()
        except OSError:
            raise NotApplicable("manual SCA needs a terminal, and none is attached") from None
        with stream:
            what = "APPROVE" if approve else "CANCEL"
            who = f" as customer {customer_number}" if customer_number else ""
            if self.decoupled:
                stream.write(
                    f"\n[conformance] In the bank's app, {what} the authorisation{who}; its "
                    f"status is at\n    {link}\nPress Enter when done. "
                )
            else:
                stream.write(
                    f"\n[conformance] Open this link and {what} the authorisation{who}:\n"
                    f"    {link}\nPress Enter when done. "
                )
            stream.flush()
            stream.readline()
        return ScaOutcome(approved=approve)
