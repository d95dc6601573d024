"""Set-up data for scenarios, created through the target's own sandbox API (spec 4.1, 4.3).

A scenario needs things to exist before its one request: a customer whose PSU-ID it can send, an
account with transactions (E3, E11), a card account with booked and pending transactions (E4,
E10), an agreement with an engagement (E13), a consent confirmed through SCA and a transaction id
from the account list (E8), payments of each product (E1, PS, PC, PA), a basket (E2).

:class:`DataFactory` creates them with ordinary, signed requests through the worker's client, so
they are recorded with the scenario that caused them. Two kinds of data:

- **shared** (``customer()``, ``account()``, ``card_account()``, ``engagement()``, ``consent()``):
  made once per worker and cached, for scenarios that only read. Each worker has its own, so
  pytest-xdist workers never share mutable state;
- **fresh** (``new_*``, ``payment()``, ``basket()``): made for one scenario, seeded from its
  scenario seed, for scenarios that change what they touch;
- **own** (``own_*``, ``own_recent()``): what a scenario makes for itself so that what it creates
  is that resource's first (issue 29), except in a scenario whose one request is to be refused
  (``SetUpBase.refused_alone``): those of one operation share it until one is not refused.

Without the sandbox API (``profile.sandbox = false``) the shared data comes from the profile's
PSU identities and production identifiers, and anything else makes the scenario not applicable.
A set-up request the target refuses is a :class:`~conformance.checks.ConformanceFailure` of the
operation that refused it (a valid request must be accepted), titled as set-up.
"""

from __future__ import annotations

from conformance.bankside.setup_data.payments import DataFactory
from conformance.bankside.setup_data.records import (
    FIRST_ACCESS_STATUS,
    NDCT_PRODUCT,
    PRODUCT_OF_OPERATION,
    Account,
    Agreement,
    Basket,
    CardAccount,
    Consent,
    Customer,
    Engagement,
    Payment,
)

__all__ = [
    "FIRST_ACCESS_STATUS",
    "NDCT_PRODUCT",
    "PRODUCT_OF_OPERATION",
    "Account",
    "Agreement",
    "Basket",
    "CardAccount",
    "Consent",
    "Customer",
    "DataFactory",
    "Engagement",
    "Payment",
]
