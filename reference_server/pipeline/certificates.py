"""What a bank's gateway and its supervisor check of a TPP's certificates beyond spec 5, after the
signature and the chain (``auth``) held. Spec 5 speaks only of "the TPP certificate"; each check
here is a reading of PSD2 practice (ETSI TS 119 495, EN 319 412-5, RTS Art. 34), listed in
``assumptions.md``, and the suite judges it at should (docs/explanation/security.md):

1. revocation: a signing certificate, or the QWAC of the TLS connection, whose issuer's list
   (``--crl``) revokes it → 401 ``CERTIFICATE_INVALID``;
2. certificate type: a signing certificate of QcType ``web`` (a QWAC, which authenticates TLS)
   that is not also of QcType ``eseal`` → 401 ``CERTIFICATE_INVALID``;
3. the QWAC's roles: a QWAC that carries PSD2 roles but not the one the operation needs → 403
   ``FORBIDDEN``, as for the signing certificate;
4. pairing: a QWAC and a signing certificate naming different organisations (their
   organizationIdentifier) → 401 ``CERTIFICATE_INVALID``.

Checks 3 and 4 need the TLS client certificate, which the connection hands over
(``Request.client_certificate``); over plain HTTP they do not apply. Each has a fault that turns it
off (``revoked-certificate-accepted``, ``qwac-signing-accepted``, ``qwac-roles-unchecked``,
``qwac-seal-pairing-unchecked``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from cryptography import x509

from conformance.contract.facts import AUTH_TPP_CODE, ROLE_OF_FAMILY
from conformance.contract.request_rules import missing_role
from conformance.errors import CertificateError
from conformance.signing import read_psd2_roles, read_qc_types
from reference_server.api import ApiError, AuthContext, Request, ServerState
from reference_server.model.bank_style import organisation_of
from reference_server.pipeline.due import due, refuse

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = ["check"]

_SIGNING = "TPP-Signature-Certificate"
#: Where a problem with the TLS client certificate is reported (it has no header).
_TLS = "TLS client certificate"


def check(app: ServerState, request: Request, operation: Operation, auth: AuthContext) -> None:
    """Every check of this module, in the order of its docstring; raises :class:`ApiError`."""
    seal = auth.certificate
    qwac = _client_certificate(request.client_certificate)
    check_not_revoked(app, seal, qwac)
    check_seal_type(app, seal)
    check_qwac_roles(app, operation, qwac)
    check_pairing(app, seal, qwac)


@lru_cache(maxsize=64)
def _client_certificate(der: bytes | None) -> x509.Certificate | None:
    """The TLS client certificate, parsed once per DER (a connection sends one for all its
    requests); None without one."""
    return None if der is None else x509.load_der_x509_certificate(der)


def _invalid(app: ServerState, requirement: str, message: str, path: str) -> ApiError:
    """401 ``CERTIFICATE_INVALID`` where ``requirement`` (``catalogue.SECURITY_CASES``) makes it
    due (``due.refuse``)."""
    return refuse(
        due(app.contract, requirement, None),
        message,
        code="CERTIFICATE_INVALID",
        status=401,
        path=path,
        tpp_code=AUTH_TPP_CODE,
    )


def check_not_revoked(
    app: ServerState, seal: x509.Certificate | None, qwac: x509.Certificate | None
) -> None:
    """1. Neither certificate is on its issuer's revocation list."""
    if not app.revocation:
        return
    for certificate, path, what in ((seal, _SIGNING, "signing"), (qwac, _TLS, "TLS client")):
        if certificate is not None and app.revocation.revoked(certificate):
            if app.faulty("revoked-certificate-accepted"):
                return
            raise _invalid(
                app,
                "AUTH-revoked-certificate",
                f"the {what} certificate (serial {certificate.serial_number:X}) is revoked by "
                f"its issuer {certificate.issuer.rfc4514_string()}",
                path,
            )


def check_seal_type(app: ServerState, seal: x509.Certificate | None) -> None:
    """2. The signing certificate is not a QWAC: QcType web without eseal is refused."""
    if seal is None:
        return
    try:
        types = read_qc_types(seal)
    except CertificateError:
        return  # an unreadable statement is the role check's business (``auth``)
    if "web" in types and "eseal" not in types and not app.faulty("qwac-signing-accepted"):
        raise _invalid(
            app,
            "AUTH-seal-is-qwac",
            "the signing certificate is of QcType web (a QWAC, for TLS): requests are signed "
            "with a sealing certificate (QcType eseal)",
            _SIGNING,
        )


def check_qwac_roles(app: ServerState, operation: Operation, qwac: x509.Certificate | None) -> None:
    """3. A QWAC that carries PSD2 roles carries the operation's."""
    needed = ROLE_OF_FAMILY.get(operation.family)
    if qwac is None or needed is None or app.faulty("qwac-roles-unchecked"):
        return
    try:
        roles = read_psd2_roles(qwac)
    except CertificateError as error:
        raise _invalid(
            app,
            "AUTH-qwac-missing-role",
            f"the TLS client certificate cannot be read: {error.message}",
            _TLS,
        ) from None
    violation = missing_role(operation, roles, what="the TLS client certificate (QWAC)", path=_TLS)
    if violation is not None:
        raise refuse(
            due(app.contract, "AUTH-qwac-missing-role", None),
            violation.text,
            code=violation.code,
            status=403,
            path=violation.path,
        )


def check_pairing(
    app: ServerState, seal: x509.Certificate | None, qwac: x509.Certificate | None
) -> None:
    """4. The QWAC and the signing certificate name the same organisation."""
    if seal is None or qwac is None or app.faulty("qwac-seal-pairing-unchecked"):
        return
    connected, signing = organisation_of(qwac), organisation_of(seal)
    if connected != signing:
        raise _invalid(
            app,
            "AUTH-qwac-other-organisation",
            f"the TLS client certificate names {connected}, the signing certificate {signing}: "
            "one TPP shows its own QWAC and seal",
            _SIGNING,
        )
