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
    ``CONFORMANCE_SCA_CUSTOMER_NUMBER`` and ``CONFORMANCE_REDIRECT_URI`` in its environment; the
    last line it prints that starts with the TPP-Redirect-URI is taken as the redirect back.
    """

    def __init__(self, command: str, redirect_uri: str, *, timeout: float = 300.0) -> None:
        self.command = shlex.split(command)
        self.redirect_uri = redirect_uri
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
        back = [
            line.strip()
            for line in finished.stdout.splitlines()
            if line.strip().startswith(self.redirect_uri)
        ]
        return ScaOutcome(approved=approve, redirect_url=back[-1] if back else None)
