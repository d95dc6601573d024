"""What every SCA step is (spec 5 item 6): the :class:`ScaStep` protocol the strategies of this
package follow, the :class:`ScaOutcome` a step ends with, and the two ways it can fail: on the
suite's side (:class:`ScaError`) or on the target's (:class:`ScaRedirectBroken`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from conformance.errors import ConformanceError

__all__ = ["ScaError", "ScaOutcome", "ScaRedirectBroken", "ScaStep"]


class ScaError(ConformanceError):
    """The SCA step could not be completed: the page, the command or the terminal failed."""


class ScaRedirectBroken(ScaError):
    """The target's side of the redirect failed: its page, its form, or the way back to the
    TPP-Redirect-URI (spec 5 item 6). A verdict on the target, not a failure of the suite."""


@dataclass(frozen=True)
class ScaOutcome:
    """How the redirect ended: ``redirect_url`` is where the PSU was sent back to (the
    TPP-Redirect-URI with the bank's query), None when the step does not learn it."""

    approved: bool
    redirect_url: str | None = None


class ScaStep(Protocol):
    """Takes a PSU through one SCA redirect (spec 5 item 6)."""

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        """Authenticate (``approve``) or cancel at ``link`` as the customer ``customer_number``
        (spec 5 item 7: the sandbox customer's customerNumber is the SCA identifier)."""
        ...
