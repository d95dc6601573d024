"""The SCA step done by the profile's command (``[sca] mode = "command"``), which gets the link
and says where the PSU was sent back to."""

from __future__ import annotations

import os
import shlex
import subprocess

from conformance.bankside.sca.base import ScaError, ScaOutcome

__all__ = ["CommandSca"]


class CommandSca:
    """Runs the profile's command with the link as its last argument and waits for it.

    The command also gets ``CONFORMANCE_SCA_ACTION`` (approve or cancel),
    ``CONFORMANCE_SCA_CUSTOMER_NUMBER``, ``CONFORMANCE_REDIRECT_URI`` and, where the profile sends
    one, ``CONFORMANCE_NOK_REDIRECT_URI`` in its environment; the last line it prints that starts
    with the TPP-Redirect-URI (or the TPP-Nok-Redirect-URI) is taken as the landing URL, where the
    PSU was sent back to: the flows judge it (a failed SCA returns where the TPP asked).
    """

    def __init__(
        self,
        command: str,
        redirect_uri: str,
        *,
        timeout: float = 300.0,
        nok_redirect_uri: str | None = None,
    ) -> None:
        self.command = shlex.split(command)
        self.redirect_uri = redirect_uri
        self.nok_redirect_uri = nok_redirect_uri
        self.timeout = timeout

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        environment = {
            **os.environ,
            "CONFORMANCE_SCA_ACTION": "approve" if approve else "cancel",
            "CONFORMANCE_SCA_CUSTOMER_NUMBER": customer_number or "",
            "CONFORMANCE_REDIRECT_URI": self.redirect_uri,
        }
        if self.nok_redirect_uri:
            environment["CONFORMANCE_NOK_REDIRECT_URI"] = self.nok_redirect_uri
        try:
            finished = subprocess.run(
                [*self.command, link],
                env=environment,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise ScaError(f"the SCA command {self.command[0]!r} was not found") from None
        except subprocess.TimeoutExpired:
            raise ScaError(
                f"the SCA command {shlex.join(self.command)} did not finish within "
                f"{self.timeout:g} s"
            ) from None
        if finished.returncode != 0:
            detail = (finished.stderr or finished.stdout).strip().splitlines()[-1:] or [""]
            raise ScaError(
                f"the SCA command {shlex.join(self.command)} failed with exit code "
                f"{finished.returncode}: {detail[0]}"
            )
        landings = tuple(uri for uri in (self.redirect_uri, self.nok_redirect_uri) if uri)
        back = [
            line.strip()
            for line in finished.stdout.splitlines()
            if line.strip().startswith(landings)
        ]
        return ScaOutcome(approved=approve, redirect_url=back[-1] if back else None)
