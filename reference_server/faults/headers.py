"""The faults of the response headers a certifier checks (rules.json ``RH-*``: our readings,
graded should). Each breaks its header on every answer, so every scenario that judges it fails:
the row's own, the positive scenarios and the flows that judge an answer carrying it (every flow
for X-Request-ID; for the other two, those that judge a creation's answer: a basket made, or a
payment's, basket's or cancellation's authorisation started)."""

from __future__ import annotations

from reference_server.faults.model import Fault

__all__ = ["HEADER_FAULTS"]

#: The operations whose answers carry Location (a 201) and ASPSP-SCA-Approach (rules.json).
_CREATIONS = ("E1", "E2", "E16", "E17", "E18", "PA", "PCA", "CA", "CC")
#: The flows that judge an authorisation's start as a step (PA, E2, PCA); a consent's is set-up
#: data, its answer not judged there.
_AUTHORISING_FLOWS = (
    "STATE-payment-sca-*",
    "STATE-basket-sca-*",
    "STATE-*-authorisation-started",
    "STATE-batch-run-advances",
    "STATE-payment-cancellation-sca*",
    "STATE-sca-failure-return",
)
#: The basket worst-case flows that authorise (the one of statuses after creation does not), and
#: BR's flow, which makes the basket it reads back (E1's answer judged).
_AUTHORISING_BASKETS = (
    "E1-basket-with-cancelled-payment-is-worst-case",
    "E1-basket-with-rejected-payment-is-worst-case",
    "BR-basket-reads-back",
)

#: The payment flows that judge a payment's authorisation started with PA: a bank that starts
#: every payment's SCA at its creation (``[sca] start = "creation"``) gives them no PA answer.
_PAYMENT_FLOWS_THROUGH_PA = (
    "E16-batch-run-advances-status",
    "E16-sca-cancelled-payment-rejected",
    "E16-sca-completed-status-advances",
    "E17-sca-cancelled-payment-rejected",
    "E17-sca-completed-status-advances",
    "E18-batch-run-advances-status",
    "E18-sca-cancelled-payment-rejected",
    "E18-sca-completed-status-advances",
    "PA-failed-sca-returns-where-the-tpp-asked",
)

HEADER_FAULTS: tuple[Fault, ...] = (
    Fault(
        "request-id-not-echoed",
        "spec 4.2 (X-Request-ID; its echo on the answer is our reading: should)",
        "answers without the request's X-Request-ID",
        rules=("RH-request-id-echoed", "POS-*", "STATE-*"),
        seen_through_pa=("PA-failed-sca-returns-where-the-tpp-asked",),
        level="should",
    ),
    Fault(
        "location-missing",
        "spec 4.3 (a creation's answer; Location on its 201 is our reading: should)",
        "answers a payment, basket, consent or authorisation created (201) without Location",
        rules=("RH-location-on-creation", "POS-*", *_AUTHORISING_FLOWS),
        operations=_CREATIONS,
        scenarios=_AUTHORISING_BASKETS,
        seen_through_pa=_PAYMENT_FLOWS_THROUGH_PA,
        level="should",
    ),
    Fault(
        "sca-approach-header-wrong",
        "spec 5 item 6 (SCA by redirect; ASPSP-SCA-Approach naming it is our reading: should)",
        "names the SCA approach EMBEDDED in ASPSP-SCA-Approach, which it does not run",
        rules=("RH-sca-approach-named", "POS-*", *_AUTHORISING_FLOWS),
        operations=_CREATIONS,
        scenarios=_AUTHORISING_BASKETS,
        seen_through_pa=_PAYMENT_FLOWS_THROUGH_PA,
        level="should",
    ),
)
