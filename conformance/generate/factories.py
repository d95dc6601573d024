"""Valid request bodies and PSU data, deterministic from a seed (Faker ``no_NO``, identifiers with
check digits), each satisfying its schema and the cross-field rules.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from faker import Faker

from conformance._types import JsonObject
from conformance.contract import identifiers as ids
from conformance.contract import load_contract

__all__ = [
    "CONSENT_DAYS",
    "balance_update",
    "consent_request",
    "format_amount",
    "ncbct_payment",
    "ndct_payment",
    "periodic_payment",
    "psu_headers",
    "sandbox_account_create",
    "sandbox_account_transactions",
    "sandbox_agreement_create",
    "sandbox_card_account_create",
    "sandbox_card_transactions",
    "sandbox_customer_create",
    "sandbox_engagement",
    "signing_basket",
]


#: Sandbox dates lie at least this many days before ``today``: dates are days, and a target in
#: another time zone may already (or still) be on a different date than the suite.
PAST_MARGIN_DAYS = 2

#: spec 2.7 NCBCT / spec 8: regulatory reporting from NOK 100 000; the NCBCT product is meant for
#: transfers of that size, so its default amounts start there.
_NCBCT_MIN_NOK = 100_000
_MAX_INT32 = 2_147_483_647
#: The longest identifier or free text the suite sends where the spec states no bound (the
#: sandbox's names, the card transaction id and its details, an agreement's name, a sandbox
#: transaction's parties): ISO 20022's Max35Text, the bound a
#: bank most often chooses there, so every bound a bank may choose accepts it
#: (``schemas/silences.json``, "unbounded-strings").
UNBOUNDED_TEXT_MAX = 35


_PER_THREAD = threading.local()


def _faker() -> Faker:
    """One ``Faker("no_NO")`` per thread: building one costs ~1.4 ms, reseeding it almost nothing.

    Safe because every factory reseeds it (``_sources``) before drawing and no factory calls another
    while it still draws from it; a factory's output depends only on its seed, never on call order.
    Per thread, because scenarios may run in threads side by side (``conformance.runners.pool``):
    two of them drawing from one generator would each get a mix of both seeds' values.
    """
    fake: Faker | None = getattr(_PER_THREAD, "faker", None)
    if fake is None:
        fake = _PER_THREAD.faker = Faker("no_NO")
    return fake


def _sources(seed: int, purpose: str) -> tuple[random.Random, Faker]:
    """A ``Random`` and the shared ``Faker("no_NO")``, both seeded from ``seed`` and ``purpose``."""
    key = f"{purpose}:{seed}"
    fake = _faker()
    fake.seed_instance(key)
    return random.Random(key), fake


def _minor_units(given: Mapping[str, int] | None) -> Mapping[str, int]:
    if given is not None:
        return given
    return load_contract().minor_units


def format_amount(value: Decimal | int | str, currency: str, minor_units: Mapping[str, int]) -> str:
    """``value`` as a payment amount string with exactly the currency's minor units (spec 2.1).

    ``Decimal("100")`` in NOK is ``"100.00"``, in JPY ``"100"``, in KWD ``"100.000"``. A value with
    more fraction digits than the currency has is refused rather than rounded.
    """
    digits = minor_units[currency]
    amount = Decimal(value)
    quantum = Decimal(1).scaleb(-digits)
    exact = amount.quantize(quantum)
    if exact != amount:
        raise ValueError(f"{value} has more fraction digits than {currency} allows ({digits})")
    return f"{exact:.{digits}f}"


def _random_amount(rng: random.Random, low: int, high: int, digits: int) -> Decimal:
    """A positive amount in [low, high] with ``digits`` fraction digits."""
    scale = 10**digits
    return Decimal(rng.randint(low * scale, high * scale)).scaleb(-digits)


def _instructed_amount(
    rng: random.Random,
    amount: Decimal | int | str | None,
    currency: str,
    minor_units: Mapping[str, int] | None,
    *,
    low: int,
    high: int,
) -> JsonObject:
    units = _minor_units(minor_units)
    if amount is None:
        amount = _random_amount(rng, low, high, units[currency])
    return {"amount": format_amount(amount, currency, units), "currency": currency}


def _address(fake: Faker, country: str = "NO") -> JsonObject:
    """A ``creditorAddress`` (spec 2.7): street at most 70 characters, country required."""
    return {
        "street": fake.street_name()[:70],
        "buildingNumber": str(fake.building_number()),
        "postalCode": str(fake.postcode()),
        "city": fake.city(),
        "country": country,
    }


def _remittance_text(fake: Faker) -> str:
    """An unstructured remittance text: non-empty, at most 140 characters (spec 2.7, spec 8)."""
    return fake.sentence(nb_words=4).rstrip(".")[:140]


# --- payments (spec 2.7; E16, E17, E18) ---------------------------------------------------------


def ndct_payment(
    seed: int,
    *,
    debtor_bban: str | None = None,
    amount: Decimal | int | str | None = None,
    currency: str = "NOK",
    kid: bool = True,
    kid_algorithm: ids.KidAlgorithm = "MOD10",
    creditor_bban: str | None = None,
    minor_units: Mapping[str, int] | None = None,
    kid_reference_type: str = "KID",
) -> JsonObject:
    """An NDCT body (spec 2.7, E16) the target must accept.

    ``amount`` (drawn between 10 and 5000 when absent) is written with exactly the currency's minor
    units (:func:`format_amount`); to send a wrongly formatted amount, change the returned body.

    With ``kid`` the remittance is one structured-array item of ``kid_reference_type`` with a valid
    ``kid_algorithm`` check digit (spec 2.7: "An OCR/KID reference belongs in the structured
    array"); without it, an unstructured text. The two forms are never combined
    (XF-remittance-exclusive). ``debtorAccount`` holds a ``bban`` only (XF-debtor-account-one-of).
    A payment in another currency than NOK goes to a currency account and names the creditor's
    BIC, which spec 2.7 requires for such payments.
    """
    rng, fake = _sources(seed, "ndct_payment")
    body: JsonObject = {
        "instructedAmount": _instructed_amount(
            rng, amount, currency, minor_units, low=10, high=5000
        ),
        "creditorName": fake.name()[:70],
        "creditorAccount": {"bban": creditor_bban or ids.generate_bban(rng), "currency": currency},
        "creditorAddress": _address(fake),
        "debtorAccount": {"bban": debtor_bban or ids.generate_bban(rng), "currency": "NOK"},
    }
    if currency != "NOK":
        body["creditorAgent"] = ids.generate_bic(rng, country="NO")
    if kid:
        reference = ids.generate_kid(rng, length=rng.randint(6, 15), algorithm=kid_algorithm)
        body["remittanceInformationStructuredArray"] = [
            {"reference": reference, "referenceType": kid_reference_type}
        ]
    else:
        body["remittanceInformationUnstructured"] = _remittance_text(fake)
    return body


def periodic_payment(
    seed: int,
    *,
    today: date,
    frequency: str = "Monthly",
    months: Sequence[int] | None = None,
    debtor_bban: str | None = None,
    creditor_bban: str | None = None,
    amount: Decimal | int | str | None = None,
    currency: str = "NOK",
    minor_units: Mapping[str, int] | None = None,
) -> JsonObject:
    """A periodic NDCT body (spec 2.7, E17) starting a week after ``today``, ending a year later.

    ``dayOfExecution`` is the start date's day of month. For ``MonthlyVariable`` the months list
    (``monthsOfExecution``, the schema's name for the field the spec does not name) is ``months``
    or three distinct months, sorted (XF-months-unique); other frequencies carry no months list.
    """
    rng, fake = _sources(seed, "periodic_payment")
    start = today + timedelta(days=7)
    body: JsonObject = {
        "instructedAmount": _instructed_amount(
            rng, amount, currency, minor_units, low=10, high=5000
        ),
        "creditorName": fake.name()[:70],
        "creditorAccount": {"bban": creditor_bban or ids.generate_bban(rng), "currency": currency},
        "creditorAddress": _address(fake),
        "debtorAccount": {"bban": debtor_bban or ids.generate_bban(rng), "currency": "NOK"},
        "remittanceInformationUnstructured": _remittance_text(fake),
        "startDate": start.isoformat(),
        "endDate": (start + timedelta(days=365)).isoformat(),
        "executionRule": "following",
        "frequency": frequency,
        "dayOfExecution": str(start.day),
    }
    if frequency == "MonthlyVariable":
        chosen = list(months) if months is not None else sorted(rng.sample(range(1, 13), 3))
        body["monthsOfExecution"] = chosen
    return body


def ncbct_payment(
    seed: int,
    *,
    amount: Decimal | int | str | None = None,
    currency: str = "NOK",
    regulatory: bool = True,
    creditor_bban: bool = False,
    creditor_country: str = "DE",
    debtor_bban: str | None = None,
    minor_units: Mapping[str, int] | None = None,
) -> JsonObject:
    """An NCBCT body (spec 2.7, E18): a cross-border transfer, by default of NOK 100 000 or more.

    The creditor account abroad (``creditor_country``) is an IBAN, or with ``creditor_bban`` that
    IBAN's BBAN part; ``creditorAgent`` (a BIC of that country) is always given, as spec 2.7
    requires it for a BBAN (XF-ncbct-creditor-agent). With ``regulatory`` the regulatory reporting
    code and information are included, which spec 2.7 requires from NOK 100 000
    (XF-ncbct-regulatory-reporting); without it the drawn amount stays below NOK 100 000, so the
    body is valid either way unless an ``amount`` of 100 000 or more is forced.
    """
    rng, fake = _sources(seed, "ncbct_payment")
    iban = ids.generate_iban(rng, country=creditor_country)
    creditor_account = {"bban": iban[4:]} if creditor_bban else {"iban": iban}
    low, high = (_NCBCT_MIN_NOK, 900_000) if regulatory else (1_000, _NCBCT_MIN_NOK - 1)
    body: JsonObject = {
        "instructedAmount": _instructed_amount(
            rng, amount, currency, minor_units, low=low, high=high
        ),
        "creditorName": fake.company()[:70],
        "creditorAgent": ids.generate_bic(rng, country=creditor_country),
        "creditorAccount": {**creditor_account, "currency": currency},
        "creditorAddress": _address(fake, country=creditor_country),
        "debtorAccount": {"bban": debtor_bban or ids.generate_bban(rng), "currency": "NOK"},
        "remittanceInformationUnstructured": _remittance_text(fake),
        "purposeCode": "SUPP",
    }
    if regulatory:
        body["regulatoryReportingCode"] = rng.choice(("14", "26", "29", "31"))
        body["regulatoryReportingInformation"] = _remittance_text(fake)
    return body


def signing_basket(payment_ids: Iterable[str]) -> JsonObject:
    """An E1 body grouping previously created payments (spec 4.3 E1; at most 10, spec 8)."""
    return {"paymentIds": list(payment_ids)}


#: How far ahead a consent the suite asks for is valid: within spec 8's 90-day consent age (E8)
#: and 180-day SCA renewal, so a bank bounding ``validUntil`` by either takes it.
CONSENT_DAYS = 89


def consent_request(
    seed: int,
    ibans: Iterable[str],
    *,
    valid_until: date | None = None,
    model: str = "detailed",
) -> JsonObject:
    """A consent body (CC, assumed NextGenPSD2 shape) for accounts, balances and transactions.

    ``model`` is the bank's consent model (the profile's ``[consent] model``): ``detailed`` names
    ``ibans`` in the three lists, ``bank-offered`` sends them empty (the PSU chooses the
    accounts at SCA), ``global`` sends ``allPsd2: allAccounts`` (``ibans`` are then unused).
    ``validUntil`` defaults to :data:`CONSENT_DAYS` days from today (UTC): a date every bank
    takes, one that bounds a consent by spec 8's 180-day SCA renewal or 90-day consent age as
    well as one that takes NextGenPSD2's 9999-12-31 ("as long as allowed").
    ``frequencyPerDay`` is 4, the number of calls spec 8 allows per day without PSU-IP-Address.
    The body has nothing random; ``seed`` keeps the signature of every other factory.
    """
    references = [{"iban": iban} for iban in ibans] if model == "detailed" else []
    access: JsonObject = (
        {"allPsd2": "allAccounts"}
        if model == "global"
        else {
            "accounts": references,
            "balances": [dict(reference) for reference in references],
            "transactions": [dict(reference) for reference in references],
        }
    )
    if valid_until is None:
        valid_until = datetime.now(UTC).date() + timedelta(days=CONSENT_DAYS)
    return {
        "access": access,
        "recurringIndicator": True,
        "validUntil": valid_until.isoformat(),
        "frequencyPerDay": 4,
        "combinedServiceIndicator": False,
    }


# --- PSU headers (spec 4.2, spec 5 item 5) -------------------------------------------------------


def psu_headers(seed: int, *, corporate: bool = False) -> dict[str, str]:
    """PSU context headers of one PSU: PSU-ID, PSU-IP-Address, PSU-Context, PSU-Corporate-ID.

    PSU-ID is a version-4 UUID made from the seed's random bits, so one seed is one PSU.
    PSU-IP-Address is a public IPv4 address. A corporate PSU also sends PSU-Corporate-ID (spec 7
    rule 3), here an organisation number, and PSU-Context CORPORATE.
    """
    rng, fake = _sources(seed, "psu_headers")
    headers = {
        "PSU-ID": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "PSU-IP-Address": fake.ipv4_public(),
        "PSU-Context": "CORPORATE" if corporate else "PRIVATE",
    }
    if corporate:
        headers["PSU-Corporate-ID"] = ids.generate_organisation_number(rng)
    return headers


# --- sandbox (spec 2.9, spec 4.1, spec 4.3 E5/E6/E7/E15) ------------------------------------------


def sandbox_customer_create(
    seed: int,
    customer_type: Literal["PRIVATE", "CORPORATE"] = "PRIVATE",
    *,
    customer_number: str | None = None,
) -> JsonObject:
    """A sandbox customer creation body (SCU). A private customer carries a national identity
    number (the X-PSU-IDENTITY of spec 5 item 5); ``customerNumber`` is left to the server unless
    given."""
    rng, fake = _sources(seed, "sandbox_customer_create")
    body: JsonObject = {"customerType": customer_type}
    if customer_type == "PRIVATE":
        body["customerName"] = fake.name()[:UNBOUNDED_TEXT_MAX]
        body["nationalIdentityNumber"] = ids.generate_national_id(rng)
    else:
        body["customerName"] = fake.company()[:UNBOUNDED_TEXT_MAX]
    if customer_number is not None:
        body["customerNumber"] = customer_number
    return body


def sandbox_account_create(
    seed: int,
    customer_number: str,
    *,
    currency: str = "NOK",
    bban: str | None = None,
    balance: int | None = None,
) -> JsonObject:
    """A sandbox account creation body (SA): a current account with a closing booked and an
    expected balance (int32 amounts, spec 2.1); the IBAN is the BBAN's (spec 2.9)."""
    rng, _ = _sources(seed, "sandbox_account_create")
    bban = bban or ids.generate_bban(rng)
    amount = balance if balance is not None else rng.randint(1_000, 500_000)
    return {
        "customerNumber": customer_number,
        "accountName": rng.choice(("Brukskonto", "Sparekonto", "Regningskonto", "Lønnskonto")),
        "bban": bban,
        "iban": ids.bban_to_iban(bban),
        "currency": currency,
        "product": "Brukskonto",
        "cashAccountType": "CACC",
        "creditLine": 0,
        "balances": [
            {"balanceAmount": {"currency": currency, "amount": amount}, "balanceType": kind}
            for kind in ("closingBooked", "expected")
        ],
    }


def sandbox_card_account_create(
    seed: int, customer_number: str, *, currency: str = "NOK"
) -> JsonObject:
    """A sandbox card account creation body (SCA): a credit card with a masked PAN (spec 2.9)."""
    rng, fake = _sources(seed, "sandbox_card_account_create")
    return {
        "customerNumber": customer_number,
        "maskedPan": ids.generate_masked_pan(rng),
        "currency": currency,
        "creditLimit": {"currency": currency, "amount": rng.choice((10_000, 25_000, 50_000))},
        "name": fake.name()[:UNBOUNDED_TEXT_MAX],
        "product": "Mastercard",
        "accountNumber": ids.generate_bban(rng),
        "expiry": f"{rng.randint(1, 12):02d}/{rng.randint(28, 32)}",
    }


def sandbox_agreement_create(seed: int, owner: str | None) -> JsonObject:
    """A sandbox agreement creation body (SAG); ``owner`` (the corporation's customer id) is
    omitted for a private agreement (spec 2.9: owner optional)."""
    _, fake = _sources(seed, "sandbox_agreement_create")
    body: JsonObject = {"name": f"Avtale {fake.company()}"[:UNBOUNDED_TEXT_MAX]}
    if owner is not None:
        body["owner"] = owner
    return body


def sandbox_engagement(
    seed: int,
    customer: str,
    iban: str,
    roles: Sequence[str] = ("REGISTER", "VIEW"),
) -> JsonObject:
    """An E6 engagement body: the PSU ``customer`` sees the account ``iban`` with ``roles``.

    The default roles REGISTER and VIEW are the pair spec 4.3 E6 needs for the account to be
    offered for consent.
    """
    rng, _ = _sources(seed, "sandbox_engagement")
    register_limit = rng.choice((50_000, 100_000, 250_000))
    return {
        "customer": customer,
        "account": {"iban": iban},
        "roles": list(roles),
        "registerLimit": register_limit,
        "approvalLimit": register_limit * 2,
    }


def _past_dates(rng: random.Random, today: date) -> tuple[date, date]:
    """A (booking, value) pair, booking not after value, both PAST_MARGIN_DAYS or more ago."""
    value = today - timedelta(days=rng.randint(PAST_MARGIN_DAYS + 1, 60))
    booking = value - timedelta(days=rng.randint(0, 1))
    return booking, value


def sandbox_account_transactions(
    seed: int, account: Mapping[str, Any], count: int = 1, *, today: date
) -> list[JsonObject]:
    """An E7 body: ``count`` transactions debiting ``account`` (a mapping with ``iban``, ``bban``
    and optionally ``currency``, such as an SA body or a sandbox account resource).

    The debtor of every item is the account itself: spec 7 rule 5 rejects another account as
    debtor. Dates follow spec 4.3 E7: both in the past (PAST_MARGIN_DAYS or more before
    ``today``), booking not after value.
    """
    rng, fake = _sources(seed, "sandbox_account_transactions")
    currency = str(account.get("currency", "NOK"))
    debtor = {"iban": str(account["iban"]), "bban": str(account["bban"])}
    debtor_name = fake.name()[:UNBOUNDED_TEXT_MAX]
    items = []
    for _ in range(count):
        booking, value = _past_dates(rng, today)
        creditor_bban = ids.generate_bban(rng)
        items.append(
            {
                "amount": rng.randint(10, 20_000),
                "currency": currency,
                "valueDate": value.isoformat(),
                "bookingDate": booking.isoformat(),
                "remittanceInformationUnstructured": _remittance_text(fake),
                "creditorName": fake.company()[:UNBOUNDED_TEXT_MAX],
                "creditorAccount": {
                    "iban": ids.bban_to_iban(creditor_bban),
                    "bban": creditor_bban,
                },
                "debtorName": debtor_name,
                "debtorAccount": dict(debtor),
                "bankTransactionCode": "PMNT-ICDT-DMCT",
                "ultimateDebtor": debtor_name,
                "ultimateCreditor": fake.company()[:UNBOUNDED_TEXT_MAX],
                "purposeCode": "OTHR",
                "creditorId": ids.generate_organisation_number(rng),
            }
        )
    return items


def sandbox_card_transactions(
    seed: int, masked_pan: str, count: int = 1, *, today: date, currency: str = "NOK"
) -> list[JsonObject]:
    """An E5 body: ``count`` card purchases on the card ``masked_pan``.

    Booking and transaction date are the same past day: spec 4.3 E5's "booking not after the
    value date" is read with the transaction date as the value date (rule
    SB-dates-in-past-card-booking-after-transaction), and the same day satisfies it under either
    reading. Amounts are int32 (spec 2.1 sandbox amounts); no currency exchange.
    """
    rng, fake = _sources(seed, "sandbox_card_transactions")
    items = []
    for _ in range(count):
        day = today - timedelta(days=rng.randint(PAST_MARGIN_DAYS + 1, 60))
        amount = rng.randint(10, 5_000)
        items.append(
            {
                "cardTransactionId": uuid.UUID(int=rng.getrandbits(128), version=4).hex,
                "terminalId": f"T{rng.randint(0, 99_999_999):08d}",
                "bookingDate": day.isoformat(),
                "transactionDate": day.isoformat(),
                "transactionAmount": {"currency": currency, "amount": amount},
                "originalAmount": {"currency": currency, "amount": amount},
                "merchantCategoryCode": rng.choice(("5411", "5812", "5541", "5912")),
                "cardAcceptorId": f"{rng.randint(0, 999_999_999_999_999):015d}",
                "maskedPan": masked_pan,
                "transactionDetails": fake.company()[:UNBOUNDED_TEXT_MAX],
                "proprietaryBankTransactionCode": "PURCHASE",
                "invoiced": "false",
                "markupFee": {"currency": currency, "amount": 0},
                "markupFeePercentage": "0.00",
                "cardAcceptorAddress": _address(fake),
            }
        )
    return items


def balance_update(seed: int, currency: str) -> list[JsonObject]:
    """An E15 body: a closing booked and an expected balance (spec 2.1 Balance, int32 amounts)."""
    rng, _ = _sources(seed, "balance_update")
    booked = rng.randint(0, 1_000_000)
    expected = min(booked + rng.randint(0, 10_000), _MAX_INT32)
    return [
        {"balanceAmount": {"currency": currency, "amount": booked}, "balanceType": "closingBooked"},
        {"balanceAmount": {"currency": currency, "amount": expected}, "balanceType": "expected"},
    ]
