"""Decoupled SCA (``[sca] approach = "decoupled"``): another step stands for the PSU deciding in
the bank's app, then the TPP polls the authorisation's ``scaStatus`` until it ends."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from conformance.bankside.sca.base import ScaError, ScaOutcome, ScaRedirectBroken, ScaStep
from conformance.bankside.sca.reference import ReferenceSca
from conformance.checks import json_document

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.profile import ScaSettings

__all__ = ["FINAL_SCA_STATUSES", "DecoupledSca"]

#: The scaStatus values after which nothing more happens (spec 3 lists them; FINALISED and FAILED
#: end an authorisation, EXEMPTED needs none).
FINAL_SCA_STATUSES = frozenset({"FINALISED", "FAILED", "EXEMPTED"})


class DecoupledSca:
    """Decoupled SCA: the PSU decides in the bank's app while the TPP polls ``scaStatus``.

    ``decide`` stands for the PSU: a person at the terminal, the profile's command (both get the
    ``scaStatus`` link), or against the reference server its SCA page, which plays the bank's
    app (``/sca/{id}``, the ``scaStatus`` link without ``/status``). The status link is then
    read, signed as the TPP, every ``poll_interval`` seconds until the status is final; one that
    is still open after ``poll_timeout`` seconds ends the step with a :class:`ScaError`.
    """

    def __init__(
        self,
        decide: ScaStep,
        client: TargetClient,
        settings: ScaSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.decide = decide
        self.client = client
        self.interval = settings.poll_interval
        self.timeout = settings.poll_timeout
        self.sleep = sleep

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        app_link = link.removesuffix("/status") if isinstance(self.decide, ReferenceSca) else link
        self.decide.complete(app_link, customer_number=customer_number, approve=approve)
        deadline = time.monotonic() + self.timeout
        while True:
            status = self._status(link)
            if status in FINAL_SCA_STATUSES:
                return ScaOutcome(approved=status != "FAILED")
            if time.monotonic() + self.interval > deadline:
                raise ScaError(
                    f"the decoupled authorisation at {link} was still {status} after "
                    f"{self.timeout:g} s ([sca] poll_timeout)"
                )
            self.sleep(self.interval)

    def _status(self, link: str) -> str:
        answer = self.client.request("GET", link, headers={"Accept": "application/json"})
        document = json_document(answer) if answer.status == 200 else None
        status = document.get("scaStatus") if isinstance(document, Mapping) else None
        if not isinstance(status, str):
            raise ScaRedirectBroken(
                f"the scaStatus link {link} answered HTTP {answer.status} without a scaStatus"
            )
        return status
