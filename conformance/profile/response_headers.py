"""``[response_headers] promised``: the response headers a bank promises (as Berlin Group
NextGenPSD2 banks do), which the suite then holds it to.

Spec 4.2 shows request headers only: that an answer echoes X-Request-ID, names a created resource
in Location and its SCA approach in ASPSP-SCA-Approach is the suite's reading (rules.json
``RH-*``), graded should. A bank that promises one of them lists it here: a missing or wrong one
then counts as a must failure for that bank, and every report says it is the bank's own promise,
not a sentence of interface.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.profile.toml_table import Table

__all__ = ["PROMISABLE_HEADERS", "ResponseHeaderPromises", "read"]

#: The response headers a profile can promise (the ``RH-*`` rows of ``rules.json``).
PROMISABLE_HEADERS = ("X-Request-ID", "Location", "ASPSP-SCA-Approach")


@dataclass(frozen=True)
class ResponseHeaderPromises:
    """``[response_headers]``: the headers the bank promises (names as spelt above)."""

    promised: frozenset[str] = frozenset()

    def promises(self, header: str) -> bool:
        """Whether the bank promises ``header`` (case-insensitive)."""
        return header.lower() in {name.lower() for name in self.promised}

    def promise(self, headers: Iterable[str]) -> str:
        """What a report says of a broken promise of ``headers`` ("" when none is promised)."""
        named = [header for header in headers if self.promises(header)]
        if not named:
            return ""
        return (
            f"the bank promises {' and '.join(named)} on its answers ([response_headers] "
            "promised in its profile); interface.md does not state it: a broken promise counts "
            "as a must failure for this bank, not as a breach of the spec"
        )


def read(table: Table) -> ResponseHeaderPromises:
    """``[response_headers]`` (every key checked; an unknown header name is an error)."""
    names = table.strings("promised") or ()
    known = {name.lower(): name for name in PROMISABLE_HEADERS}
    for name in names:
        if name.lower() not in known:
            raise table.error(
                "promised",
                f"names {name!r}, which is not one of {', '.join(PROMISABLE_HEADERS)}",
            )
    table.finish()
    return ResponseHeaderPromises(frozenset(known[name.lower()] for name in names))
