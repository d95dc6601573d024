"""How a traffic finding is graded: must where the spec states the rule, should where it rests on
the contract's reading. One small function decides (:func:`grade`), from data the contract
already carries: a rule row's ``stated``, an operation's ``assumptions`` by topic, whether the
spec defines the operation at all (E1–E18) or only names it. Where the spec states the rule, the
finding quotes the sentence of interface.md verbatim (:data:`QUOTES`; a test holds each quote to
the spec file), so that switching to "a must carries its quote" is a change of this module only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from conformance.contract import Operation, Rule

__all__ = [
    "QUOTES",
    "RULE_QUOTES",
    "Grade",
    "grade",
    "grade_operation",
    "grade_rule",
    "is_spec_operation",
]

MUST: Final = "must"
SHOULD: Final = "should"

#: Sentences and table rows of interface.md, verbatim, by the key a check names.
QUOTES: Mapping[str, str] = MappingProxyType(
    {
        "json": "Request and response bodies are JSON.",
        "signed": "Every request is signed with the TPP certificate and carries PSU context "
        "headers (see part 5).",
        "certificate": "The TPP sends its signing certificate, base64 encoded, in "
        "TPP-Signature-Certificate.",
        "signature": "The Signature header follows the HTTP message signature draft, version 10, "
        "with the requirements of the PSD2 framework:",
        "keyid": "`keyId` has the form SN=<serial_hex>,CA=<full_CA_distinguished_name>, where "
        "the serial number is that of the signing certificate in hexadecimal.",
        "algorithm": "`algorithm` names the same algorithm as the certificate; rsa-sha256 is "
        "expected.",
        "headers-list": "the signed `headers` list contains date, digest, x-request-id, psu-id, "
        "psu-corporate-id and tpp-redirect-uri, each when available.",
        "signature-value": "the signature value is Base64(RSA-SHA256(signing string)).",
        "digest": "Requests that carry a body include Digest, the base64 sha256 or sha512 hash "
        "of the body (RFC 3230, RFC 5843).",
        "psu": "The PSU is identified by PSU-ID (UUID), or by X-PSU-IDENTITY (national identity "
        "or D-number) on payment creation; corporate users also pass PSU-Corporate-ID, and "
        "PSU-Context selects PRIVATE or CORPORATE.",
        "required-headers": "Required headers per operation (all other listed PSU-* headers are "
        "optional):",
        "prefix": "The interface is under the path prefix /v1.",
        "ndct-product": "The NDCT product identifier used in a payments path is "
        "norwegian-domestic-credit-transfers.",
        "content-type": "the server answers with Content-Type, Content-Encoding and "
        "Content-Language",
        "error-body": "Error body (all operations that show one):",
        "statuses-E2": "| E2 | 201, 400 (code RESOURCE_BLOCKED), 401 (body has "
        "`_links.scaRedirect`), 404 (RESOURCE_UNKNOWN), 500 (SYSTEM_ERROR) |",
        "statuses-E17": "| E17 | 201, 400 (for example FORMAT_ERROR), 401 (scaRedirect), 403 "
        "(for example PRODUCT_INVALID), 404 (RESOURCE_UNKNOWN), 500 (SYSTEM_ERROR) |",
        "sca-started": "The one move shown: starting the basket authorisation returns status "
        "STARTED.",
        "worst-case": "The basket status is a single value that stands for the worst case among "
        "all payments in the basket.",
        "pdng": "A payment in status PDNG refuses deletion with an error.",
        "stable-ids": "1.18.0 added stable transaction ids for booked transactions",
        "tpp-codes": "Codes allowed in `tppMessages[].code` of payment responses:",
    }
)

#: Rule rows of ``rules.json`` whose spec sentence is quoted (by rule id or id prefix).
RULE_QUOTES: Mapping[str, str] = MappingProxyType(
    {
        "ERR-1-": "When a signing basket receives a bulk or periodic payment, then the answer is "
        "400 with code REFERENCE_MIX_INVALID.",
        "ERR-2-": "When a KID is missing or invalid, then the status is 400 (BAD_REQUEST class), "
        "not 401.",
        "ERR-3-": "When a corporate user sends a request without PSU-Corporate-ID, then the "
        "answer is 400.",
        "ERR-4-": "When a periodic payment with frequency MonthlyVariable lists a month more "
        "than once, then it is rejected.",
        "ERR-5-": "When a sandbox transaction is created with another account as its debtor, "
        "then an error answer is returned.",
        "ERR-6-": "When a payment in status PDNG is deleted, then an error message is returned.",
        "XF-remittance-exclusive": "Rule: the unstructured and the structured array remittance "
        "forms are mutually exclusive in one request.",
        "XF-ncbct-regulatory-reporting": "| regulatory reporting | required at NOK 100 000 or "
        "more | E18 |",
        "LIM-regulatory-reporting-nok-100000": "| regulatory reporting | required at NOK 100 000 "
        "or more | E18 |",
        "XF-amount-minor-units": "| Amount in payments and transaction details | string. The "
        "precision is 18 and the scale 5, but the number of fraction digits must equal the ISO "
        "4217 minor units of the currency. |",
        "SB-dates-in-past-": "Sandbox transaction rule: booking and value dates are before now, "
        "and booking date is not after value date.",
        "XF-months-unique": "| list of months | integer list | months 1-12 in which a "
        "MonthlyVariable payment runs; a bound of 1 to 11 is shown for it; duplicates are "
        "rejected |",
    }
)


@dataclass(frozen=True)
class Grade:
    """A finding's tier: ``level`` must or should, ``quote`` the spec's sentence (must), and
    ``basis`` the reading a should rests on."""

    level: str
    quote: str = ""
    basis: str = ""


def grade(*, stated: bool, quote: str = "", reading: str = "") -> Grade:
    """The one decision: a rule the spec states is must (with its quote); anything else is
    should, naming the reading it rests on."""
    if stated:
        return Grade(MUST, quote=quote)
    return Grade(SHOULD, quote=quote, basis=reading or "the contract's reading of the spec")


_OPERATION_OF_SPEC = re.compile(r"^E[0-9]+$")


def is_spec_operation(operation: Operation) -> bool:
    """Whether the spec defines the operation (E1 … E18) rather than only naming or implying it."""
    return bool(_OPERATION_OF_SPEC.match(operation.id))


def grade_operation(operation: Operation, *topics: str, quote: str = "") -> Grade:
    """A requirement on ``operation`` that rests on what the contract says of it: should when the
    operation is one the spec only names, or when it carries an assumption on one of ``topics``
    (``required-headers``, ``request``, ``response``, ``status``, ``path``); must otherwise."""
    if not is_spec_operation(operation):
        return grade(
            stated=False,
            quote=quote,
            reading=f"{operation.id} is an operation the spec only names or implies; its "
            "shape is the contract's assumption",
        )
    assumed = [item for item in operation.assumptions if item.topic in topics]
    if assumed:
        return grade(
            stated=False,
            quote=quote,
            reading=f"rests on the contract's assumption ({assumed[0].topic}): {assumed[0].text}",
        )
    return grade(stated=True, quote=quote)


def rule_quote(rule: Rule) -> str:
    """The quoted sentence of a rule row, or "" when none is recorded."""
    for key, quote in RULE_QUOTES.items():
        if rule.id == key or (key.endswith("-") and rule.id.startswith(key)):
            return quote
    return ""


def grade_rule(rule: Rule) -> Grade:
    """A rule row: must unless its ``stated`` is ``reading`` (the suite's reading)."""
    return grade(
        stated=rule.level == MUST,
        quote=rule_quote(rule),
        reading=f"{rule.id} rests on the suite's reading of {rule.spec}",
    )


def grade_chosen(what: str) -> Grade:
    """What the suite chose where the spec only says "rejected" (a status, a code)."""
    return grade(stated=False, reading=f"the spec does not show {what}; the suite chose it")
