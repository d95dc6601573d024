"""Object-level authorisation: a payment, signing basket or consent belongs to the TPP that made
it and to its PSU, and no other TPP or PSU reaches it (OWASP API Security Top 10, API1; the spec
is silent, so the suite grades it should).

A TPP is known by its signing certificate (spec 5 item 1): the organisation identifier of its
subject (the PSD2 authorisation number, ``PSDNO-FSA-...``), else the whole subject. A resource
another TPP asks for is answered as if it did not exist (404, or 401 CONSENT_UNKNOWN for a
Consent-ID header): saying "not yours" would tell that it exists. ``--shared-sandbox`` turns the
checks off for a sandbox that is deliberately shared between TPPs; a resource stored before
owners were recorded (``--data``) belongs to nobody and is reachable by all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptography import x509

from reference_server.model.bank_style import certificate_owner_of, organisation_of

if TYPE_CHECKING:
    from reference_server.api import Call

__all__ = ["owned", "same_psu", "tpp_of"]


def tpp_of(call: Call) -> str | None:
    """The calling TPP's identity: its certificate's organisation identifier, else its subject;
    under the permissive reading ``ownership-per-certificate`` the certificate itself (issuer and
    serial number): spec 5 item 1 knows a TPP by "its signing certificate" and no more."""
    certificate: x509.Certificate | None = call.auth.certificate
    if certificate is None:
        return None
    if call.app.reads("ownership-per-certificate"):
        return certificate_owner_of(certificate)
    return organisation_of(certificate)


def owned(call: Call, owner: str | None) -> bool:
    """Whether the caller may reach a resource of ``owner`` (any caller when the sandbox is
    shared, the owner is unknown, the call is a reference-server control, or the
    ``tpp-ownership-unchecked`` fault is on)."""
    if owner is None or not call.app.ownership_checks:
        return True
    if call.operation is None:
        return True  # the reference server's own controls (loopback only, unsigned)
    return tpp_of(call) == owner or call.app.faulty("tpp-ownership-unchecked")


def same_psu(call: Call, owner_customer_id: str | None) -> bool:
    """Whether the PSU the request names may reach a resource of the sandbox customer
    ``owner_customer_id``: no PSU named (PSU-ID is optional there), either side not a known
    customer (an unknown PSU identifies at SCA, spec 4.3 E2's 401), or the same customer. Off
    with the sandbox shared, for the reference server's controls, and under the fault
    ``psu-ownership-unchecked``."""
    caller = call.auth.customer_id
    if caller is None or owner_customer_id is None or caller == owner_customer_id:
        return True
    if not call.app.ownership_checks or call.operation is None:
        return True
    return call.app.faulty("psu-ownership-unchecked")
