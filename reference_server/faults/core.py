"""The faults of the core: signatures, headers, limits, sandbox data and the error body."""

from __future__ import annotations

from reference_server.faults.model import Fault

__all__ = ["CORE_FAULTS", "ERROR_ANSWER_RULES"]


#: Every rule whose scenarios meet an error answer of the faithful server on the way, which each
#: of them requires to be the spec 7 JSON body: ``html-errors`` breaks them all. Not among them:
#: ERR-8 (an empty list, no error), VER-v1-prefix (a 404 outside the interface's ``/v1``) and the
#: checks of the QWAC (``AUTH-qwac-*``: not applicable without mutual TLS, which this fault's
#: self-check run does not use).
ERROR_ANSWER_RULES: tuple[str, ...] = (
    "AUTH-body-changed-after-signing",
    "AUTH-certificate-other-ca",
    "AUTH-date-far-*",
    "AUTH-expired-certificate",
    "AUTH-other-psu",
    "AUTH-other-tpp",
    "AUTH-replay",
    "AUTH-revoked-certificate",
    "AUTH-seal-is-qwac",
    "AUTH-headers-list-incomplete",
    "AUTH-keyid-*",
    "AUTH-missing-role",
    "AUTH-no-*",
    "AUTH-stale-digest",
    "AUTH-wrong-*",
    "CNS-*",
    "E-amount-positive",
    "E-basket-authorised-again-blocked",
    "E-day-of-execution-in-month",
    "E-execution-date-not-past",
    "E-logical-duplicate-refused",
    "E-logical-duplicate-refused-when-false",
    "E-periodic-end-not-before-start",
    "ERR-1-reference-mix-invalid",
    "ERR-2-*",
    "ERR-3-*",
    "ERR-4-*",
    "ERR-5-*",
    "ERR-6-*",
    "ERR-7-*",
    "HDR-*",
    "LIM-amount-19-integer-digits",
    "LIM-amount-precision-18-scale-5",
    "LIM-bank-transaction-code-length-request",
    "LIM-basket-max-10-payments",
    "LIM-bban-max-30",
    "LIM-creditor-name-max-70",
    "LIM-iban-max-34",
    "LIM-limit-at-least-1",
    "LIM-psu-message-max-512",
    "LIM-regulatory-reporting-nok-100000",
    "LIM-remittance-unstructured-*",
    "LIM-sca-renewal-180-days",
    "LIM-tpp-message-text-max-512",
    "LIM-transaction-details-*",
    "LIM-ultimate-debtor-max-70",
    "ROB-*",
    "SB-dates-in-past-*",
    "SB-engagement-account-owner",
    "SCH-*",
    "STATE-consent-needs-register-and-view",
    "XF-*",
)

#: The operations on one payment, basket or consent whose another-TPP scenario the server answers
#: as if the resource did not exist (``pipeline/ownership.py``); one list, so that an operation
#: added to the contract is added to every fault below that names them.
_OWNED_RESOURCE_OPERATIONS = (
    *("E1", "E2", "BR", "BS"),
    *("PS", "PC", "PA", "PCA"),
    *("CS", "CA", "CG", "CD"),
)
#: The same with an another-PSU scenario (E1 has none: a basket is made of the PSU's payments).
_OTHER_PSU_OPERATIONS = tuple(op for op in _OWNED_RESOURCE_OPERATIONS if op != "E1")

CORE_FAULTS: tuple[Fault, ...] = (
    Fault(
        "skip-digest-check",
        "spec 4.2 Digest / spec 5 part 4",
        "accepts a Digest header that does not match the body",
        rules=("AUTH-stale-digest", "AUTH-body-changed-after-signing"),
        level="must",
    ),
    Fault(
        "accept-any-signature",
        "spec 5 part 2",
        "accepts a Signature whose value does not verify with the certificate",
        rules=("AUTH-wrong-key",),
        level="must",
    ),
    Fault(
        "ignore-required-header",
        "spec 4.2 required headers",
        "does not refuse a request that lacks a required header",
        rules=("HDR-required",),
        level="must",
    ),
    Fault(
        "accept-keyid-mismatch",
        "spec 5 part 2 keyId",
        "accepts a keyId whose serial or CA does not match the certificate",
        rules=("AUTH-keyid-serial-mismatch", "AUTH-keyid-ca-mismatch"),
        level="must",
    ),
    Fault(
        "stale-date-accepted",
        "spec 5 part 2 (the signed Date; freshness not stated: security, should)",
        "accepts a signed request whose Date lies far outside the allowed clock skew (a replay)",
        rules=("AUTH-date-far-*",),
        level="should",
    ),
    Fault(
        "tpp-ownership-unchecked",
        "spec 5 part 1 (the TPP its certificate names; ownership not stated: security, should)",
        "lets a TPP read, cancel and authorise another TPP's payments, baskets and consents",
        rules=("AUTH-other-tpp",),
        level="should",
    ),
    Fault(
        "psu-ownership-unchecked",
        "spec 5 part 5 (the PSU a request names; ownership not stated: security, should)",
        "lets one PSU read, cancel and authorise another PSU's payments, baskets and consents",
        rules=("AUTH-other-psu",),
        # E8 names the consent as AL and AT do (its Consent-ID, or its TPP session)
        operations=(*_OTHER_PSU_OPERATIONS, "AL", "AT", "E8"),
        level="should",
    ),
    Fault(
        "replay-accepted",
        "spec 5 part 2 (a signed request used twice; not stated: security, should)",
        "carries out a byte-identical replay of a signed request again",
        rules=("AUTH-replay",),
        # E16 and E18 refuse the copy anyway: it is a logical duplicate (spec 4.3 E16)
        operations=("E17", "CC"),
        level="should",
    ),
    Fault(
        "ignore-headers-list",
        "spec 5 part 2 headers",
        "accepts a signed headers list that leaves out a present header it must cover",
        rules=("AUTH-headers-list-incomplete",),
        level="must",
    ),
    Fault(
        "no-limit-minimum",
        "spec 8 limit / spec 4.3 E3, E4",
        "accepts limit=0 on E3 and E4",
        rules=("LIM-limit-at-least-1", "SCH-minimum"),
        operations=("E3", "E4"),
        fields=("limit",),
        level="must",
    ),
    Fault(
        "accept-future-sandbox-dates",
        "spec 4.3 E5, E7 / spec 8 sandbox transaction rule",
        "accepts sandbox transactions booked or valued in the future",
        rules=("SB-dates-in-past-*",),
        level="must",
    ),
    Fault(
        "accept-foreign-debtor",
        "spec 7 rule 5",
        "accepts a sandbox transaction whose debtor is another account",
        rules=("ERR-5-foreign-debtor-account",),
        level="must",
    ),
    Fault(
        "accept-invalid-customer-type",
        "spec 7 rule 7",
        "accepts a sandbox customer whose customerType is not PRIVATE or CORPORATE",
        rules=("ERR-7-customer-type-invalid", "SCH-enum", "SCH-type"),
        operations=("SCU",),
        fields=("customerType",),
        # should: SCU's request is only named (spec 4.1), where the type travels is our reading
        level="should",
    ),
    Fault(
        "html-errors",
        "spec 7 error body",
        "answers errors with an HTML page instead of the JSON error body",
        rules=ERROR_ANSWER_RULES,
        level="must",
    ),
    Fault(
        "corporate-without-id-accepted",
        "spec 7 rule 3",
        "accepts a request of a corporate PSU that does not send PSU-Corporate-ID",
        rules=("ERR-3-corporate-without-corporate-id", "HDR-corporate-id"),
        level="must",
    ),
    Fault(
        "no-psu-id-format-check",
        "spec 7 rule 7 / spec 4.2 PSU-ID",
        "accepts a PSU-ID that is not a UUID",
        rules=("ERR-7-psu-id-malformed", "HDR-format"),
        fields=("PSU-ID",),
        level="must",
    ),
    Fault(
        "trace-not-implemented",
        "spec 7 / RFC 9110 section 15.5.6",
        "answers TRACE on a known path with 501 instead of 405 with Allow",
        rules=("ROB-trace-not-allowed",),
        level="should",
    ),
    Fault(
        "server-error-on-malformed-json",
        "spec 7 (500 is for system errors)",
        "answers a malformed JSON body with 500 SYSTEM_ERROR instead of a 4xx",
        rules=("ROB-malformed-json",),
        level="must",
    ),
    Fault(
        "server-error-on-invalid-utf8",
        "spec 7 (500 is for system errors)",
        "answers a body that is not UTF-8 with 500 SYSTEM_ERROR instead of a 4xx",
        rules=("ROB-invalid-utf8",),
        level="must",
    ),
    Fault(
        "server-error-on-wrong-content-type",
        "spec 7 (500 is for system errors)",
        "answers a body sent as text/plain with 500 SYSTEM_ERROR instead of 415",
        rules=("ROB-wrong-content-type",),
        level="should",
    ),
    Fault(
        "server-error-on-oversized-body",
        "spec 7 (500 is for system errors)",
        "answers a body over the size limit with 500 SYSTEM_ERROR instead of 413",
        rules=("ROB-oversized-body",),
        level="should",
    ),
    Fault(
        "server-error-on-unknown-resource",
        "spec 7 (500 is for system errors; E2 shows 404 RESOURCE_UNKNOWN)",
        "answers a request for a resource or product that does not exist with 500 instead of 404",
        rules=("ROB-unknown-id", "ROB-unknown-path", "VER-v1-prefix"),
        # the payment product in the path: 404 PRODUCT_UNKNOWN
        scenarios=tuple(
            f"{operation}-path.payment-product-{keyword}-unknown-rejected"
            for operation, keyword in (
                ("E16", "const"),
                ("E17", "const"),
                ("E18", "const"),
                ("PA", "enum"),
                ("PC", "enum"),
                ("PCA", "enum"),
                ("PS", "enum"),
            )
        )
        # another TPP's or PSU's payment, basket or consent is answered as unknown (ownership.py)
        + tuple(f"{op}-auth-other-tpp-refused" for op in _OWNED_RESOURCE_OPERATIONS)
        + tuple(f"{op}-auth-other-psu-refused" for op in _OTHER_PSU_OPERATIONS),
        level="must",
    ),
    Fault(
        "no-content-type",
        "spec 4.2 (the server answers with Content-Type)",
        "sends its successful JSON answers without Content-Type",
        rules=("POS-*",),
        # every operation that answers with a body (PC's 204 has none)
        operations=(
            *("AL", "AT", "BR", "BS", "CA", "CC", "CG", "CS", "PA", "PCA", "PS"),
            *("SA", "SAG", "SCA", "SCU", "SDF", "SI"),
            *(f"E{number}" for number in range(1, 19)),
        ),
        level="must",
    ),
    Fault(
        "with-accounts-ignored",
        "spec 4.3 E9 (withAccounts includes the customer's mock accounts)",
        "lists sandbox customers without their accounts even with withAccounts=true",
        rules=("SB-customers-with-accounts-listed",),
        level="must",
    ),
    Fault(
        "unstable-transaction-ids",
        "spec 9 (1.18.0: stable transaction ids)",
        "gives the transactions of a sandbox account new ids in every listing (E3)",
        rules=("SB-booked-transaction-ids-stable",),
        # flows that read a listed id back, or compare pages of one list, meet it too
        scenarios=(
            "E11-created-transaction-reads-back",
            "E3-offset-and-limit-page-the-list",
            "E3-paging-walks-to-the-end",
        ),
        level="must",
    ),
    Fault(
        "sca-no-return",
        "spec 5 item 6 (after SCA the PSU returns to the TPP-Redirect-URI)",
        "ends a signing basket's SCA redirect on its own page instead of sending the PSU back",
        rules=(
            "STATE-basket-sca-completed",
            "STATE-basket-sca-cancelled",
            "E-basket-authorised-again-blocked",
        ),
        scenarios=("E1-basket-with-rejected-payment-is-worst-case",),
        level="must",
    ),
    Fault(
        "nok-redirect-ignored",
        "spec 5 item 6, read with the platform's TPP-Nok-Redirect-URI (where a failed SCA returns)",
        "sends the PSU of a failed SCA back to the TPP-Redirect-URI although the TPP sent a "
        "TPP-Nok-Redirect-URI",
        rules=("STATE-sca-failure-return",),
        level="should",
    ),
    Fault(
        "sandbox-initialize-keeps-changes",
        "spec 4.3 (sandbox data), read with the platform's sandbox reset (SI)",
        "puts the default customers back on POST /v1/sandbox/initialize but keeps what was added "
        "to their accounts since",
        rules=("STATE-sandbox-reset",),
        level="should",
    ),
    Fault(
        "redirect-preferred-false-refused",
        "spec 4.2 (TPP-Redirect-Preferred: false asks for biometric authentication)",
        "refuses a payment that sends the optional TPP-Redirect-Preferred: false",
        scenarios=tuple(
            f"{operation}-header-TPP-Redirect-Preferred-false-accepted"
            for operation in ("E16", "E17", "E18")
        ),
        level="must",
    ),
    Fault(
        "with-agreements-ignored",
        "spec 4.3 E9 (withAgreements includes the related agreements)",
        "lists sandbox customers without their agreements even with withAgreements=true",
        rules=("SB-customers-with-agreements-listed",),
        level="must",
    ),
)
