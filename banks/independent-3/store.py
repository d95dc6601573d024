"""In-memory repository layer (one process, guarded by a single re-entrant lock)."""
import random
import threading

from common import new_id


class Repo:
    """A typed table: id -> dict."""

    def __init__(self, name):
        self.name, self.rows = name, {}

    def add(self, row, key="id"):
        row.setdefault(key, new_id())
        self.rows[row[key]] = row
        return row

    def get(self, rid):
        return self.rows.get(rid)

    def all(self):
        return list(self.rows.values())

    def delete(self, rid):
        return self.rows.pop(rid, None)

    def find(self, **kw):
        return [r for r in self.rows.values() if all(r.get(k) == v for k, v in kw.items())]


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self.customers = Repo("customers")
        self.accounts = Repo("accounts")
        self.card_accounts = Repo("cardAccounts")
        self.agreements = Repo("agreements")
        self.transactions = Repo("transactions")        # sandbox account transactions
        self.card_transactions = Repo("cardTransactions")
        self.payments = Repo("payments")
        self.baskets = Repo("baskets")
        self.authorisations = Repo("authorisations")
        self.consents = Repo("consents")
        self.idempotency = {}                            # (tpp, x-request-id) -> (body-hash, status, body)
        self.detail_calls = {}                           # (consent, date) -> count of unattended E8 calls

    def customer_by_number(self, number):
        for c in self.customers.all():
            if c["customerNumber"] == number:
                return c
        return None

    def customer_by_ref(self, ref):
        """customerId, customerNumber or national identity."""
        return self.customers.get(ref) or self.customer_by_number(ref)

    def account_by_ref(self, bban=None, iban=None):
        for a in self.accounts.all():
            if (bban and a["bban"] == bban) or (iban and a["iban"] == iban):
                return a
        return None

    def visible_accounts(self, customer):
        """Accounts a PSU may offer for consent: own accounts, and accounts of agreements where the
        PSU has an engagement with both REGISTER and VIEW."""
        out = [a for a in self.accounts.all() if a["ownerCustomerId"] == customer["customerId"]]
        for ag in self.agreements.all():
            for e in ag["engagements"]:
                if e["customer"] in (customer["customerId"], customer["customerNumber"]) and \
                        {"REGISTER", "VIEW"} <= set(e["roles"]):
                    a = self.account_by_ref(iban=e["account"].get("iban"), bban=e["account"].get("bban"))
                    if a and a not in out:
                        out.append(a)
        return out


def random_digits(n):
    return "".join(random.choice("0123456789") for _ in range(n))


def bban_to_iban(bban):
    """Norwegian IBAN from an 11-digit BBAN (ISO 13616 check digits)."""
    s = bban + "NO00"
    num = "".join(str(int(ch, 36)) for ch in s)
    check = 98 - int(num) % 97
    return f"NO{check:02d}{bban}"


def new_bban():
    base = "1503" + random_digits(6)
    weights = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
    r = 11 - sum(int(d) * w for d, w in zip(base, weights)) % 11
    if r == 10:
        return new_bban()
    return base + str(0 if r == 11 else r)
