"""The private agreement of a PRIVATE customer: each of its accounts is engaged there with full
roles, so that the private PSU can give consent to them (assumption, ``assumptions.md``).

Used where accounts come into being: the SA handler (``resources.sandbox_accounts``), the data
fill (``resources.sandbox_fill``, for its roles and limits) and the seeding of a production-like
bank's existing data (``existing_data``), which therefore need not import a handler module.
"""

from __future__ import annotations

from reference_server.model import sandbox_data as data
from reference_server.model.store import Store

__all__ = ["PRIVATE_LIMIT", "PRIVATE_ROLES", "engage_private_account"]

#: Roles of the engagement a private customer gets on its own account (assumption).
PRIVATE_ROLES: tuple[str, ...] = ("OWNER", "VIEW", "REGISTER", "APPROVE", "INTERNAL_TRANSFER")
#: Register and approval limits of that engagement (int32, spec 2.9).
PRIVATE_LIMIT = 1_000_000


def engage_private_account(store: Store, customer: data.Customer, account: data.Account) -> None:
    """Add a PRIVATE customer's account to its private agreement (created with the customer)."""
    for agreement in store.children(data.AGREEMENTS, customer.id):
        if agreement.holder == customer.id:
            store.add(
                data.ENGAGEMENTS,
                data.Engagement(
                    id=data.new_id(),
                    agreement_id=agreement.id,
                    customer=customer.id,
                    customer_id=customer.id,
                    account_id=account.id,
                    roles=PRIVATE_ROLES,
                    register_limit=PRIVATE_LIMIT,
                    approval_limit=PRIVATE_LIMIT,
                    name=account.name,
                ),
            )
            return
