"""The faults of the certificate checks banks and supervisors make beyond spec 5
(``pipeline/certificates.py``): revocation, the certificate type, the QWAC's roles and the pairing
of QWAC and seal. Each is a reading of PSD2 practice the suite judges at should (security group),
so each is graded ``should``: a run under one of them fails only should findings, which
``--strict`` counts (the self-check runs should faults with it)."""

from __future__ import annotations

from reference_server.faults.model import Fault

__all__ = ["CERTIFICATE_FAULTS"]

#: The QWAC checks need the TLS client certificate: their self-check runs over mutual TLS.
_MUTUAL_TLS = ("--tls",)

CERTIFICATE_FAULTS: tuple[Fault, ...] = (
    Fault(
        "revoked-certificate-accepted",
        "spec 5 part 1 (the TPP certificate; revocation not stated: security, should)",
        "accepts a signing certificate its CA has revoked (--crl)",
        rules=("AUTH-revoked-certificate",),
        level="should",
    ),
    Fault(
        "qwac-signing-accepted",
        "spec 5 part 1 (the TPP certificate; its type not stated: security, should)",
        "accepts requests signed with a QWAC-type certificate (QcType web, not eseal)",
        rules=("AUTH-seal-is-qwac",),
        level="should",
    ),
    Fault(
        "qwac-roles-unchecked",
        "spec 5 part 1 (the TPP certificate; the QWAC's roles not stated: security, should)",
        "accepts a TLS client certificate (QWAC) without the PSD2 role the operation needs",
        rules=("AUTH-qwac-missing-role",),
        run_options=_MUTUAL_TLS,
        level="should",
    ),
    Fault(
        "qwac-seal-pairing-unchecked",
        "spec 5 part 1 (the TPP certificate; QWAC and seal of one TPP not stated: security, "
        "should)",
        "accepts a QWAC and a signing certificate of different organisations together",
        rules=("AUTH-qwac-other-organisation",),
        run_options=_MUTUAL_TLS,
        level="should",
    ),
)
