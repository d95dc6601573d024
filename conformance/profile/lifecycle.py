"""The bank's choices about the lifecycle of its payments and its release (issue 23): whether
cancelling an authorised payment needs SCA (``[cancellation] sca``), where a failed SCA returns
(``nok_redirect_uri``, sent as TPP-Nok-Redirect-URI), which release of the interface it runs
(``release``: spec 9 dates what each release added), and the optional operations it offers
(``[operations] optional``, read with the operations table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

from conformance.contract.releases import LATEST_RELEASE, OLDEST_RELEASE, Release
from conformance.profile.toml_table import Table

__all__ = ["CANCELLATION_SCA", "CancellationSca", "Lifecycle", "read_lifecycle"]

#: ``authorised``: cancelling a payment that was already authorised needs its own SCA (the
#: platform's portals: DELETE answers 202 with a link, then the cancellation authorisation);
#: ``never``: a cancellation is carried out at once.
CancellationSca = Literal["authorised", "never"]
CANCELLATION_SCA: tuple[CancellationSca, ...] = get_args(CancellationSca)


@dataclass(frozen=True)
class Lifecycle:
    """The lifecycle choices of a profile (each key in ``docs/reference/profile.md``).

    ``release`` None is the release the spec shows (1.22.0): nothing is gated.
    ``optional_operations`` are the contract's optional operations (``"optional": true``, such
    as the platform's sandbox reset SI) this bank offers; the others are not applicable.
    """

    cancellation_sca: CancellationSca = "authorised"
    nok_redirect_uri: str | None = None
    release: Release | None = None
    optional_operations: frozenset[str] = frozenset()

    @property
    def cancellation_needs_sca(self) -> bool:
        return self.cancellation_sca == "authorised"

    def released_after(self, release: Release) -> bool:
        """Whether ``release`` came after the bank's (what it added is not there yet)."""
        return self.release is not None and release > self.release


def read_lifecycle(top: Table, optional_operations: frozenset[str]) -> Lifecycle:
    """``[cancellation] sca``, ``nok_redirect_uri`` and ``release`` of the profile's top table;
    ``optional_operations`` were read with ``[operations]``."""
    cancellation = top.table("cancellation")
    sca = cancellation.get("sca", str, "authorised")
    if sca not in CANCELLATION_SCA:
        raise cancellation.error("sca", f"must be one of {', '.join(CANCELLATION_SCA)}")
    cancellation.finish()
    nok = top.optional_str("nok_redirect_uri")
    if nok is not None:
        parts = urlsplit(nok)
        if not parts.scheme or not parts.netloc:
            raise top.error("nok_redirect_uri", f"must be an absolute URL, not {nok!r}")
    chosen: CancellationSca = "never" if sca == "never" else "authorised"
    return Lifecycle(
        cancellation_sca=chosen,
        nok_redirect_uri=nok,
        release=_release(top),
        optional_operations=optional_operations,
    )


def _release(top: Table) -> Release | None:
    text = top.optional_str("release")
    if text is None:
        return None
    release = Release.parse(text)
    if release is None:
        raise top.error("release", f"must be a release such as '1.21.18', not {text!r}")
    if not OLDEST_RELEASE <= release <= LATEST_RELEASE:
        raise top.error(
            "release",
            f"is {release}: spec 9 shows releases {OLDEST_RELEASE} to {LATEST_RELEASE}",
        )
    return release
