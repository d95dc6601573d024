"""In-memory state. One sandbox 'world' per TPP (identified by certificate subject + issuer)."""
import random
import threading

from common import make_iban, nor_bban_ok

LOCK = threading.RLock()
WORLDS = {}
AUTHS = {}          # authorisationId -> authorisation record (needs global lookup for the SCA page)
SEEN_REQUEST_IDS = {}  # tpp -> set of X-Request-ID


class World:
    def __init__(self, tpp):
        self.tpp = tpp
        self.customers = {}      # customerId -> customer
        self.accounts = {}       # id -> account
        self.transactions = {}   # accountId -> [tx]
        self.cards = {}          # resourceId -> card account
        self.card_tx = {}        # resourceId -> [card tx]
        self.agreements = {}     # id -> agreement
        self.payments = {}       # paymentId -> payment
        self.baskets = {}        # basketId -> basket
        self.consents = {}       # consentId -> consent
        self.detail_calls = {}   # (consentId, date) -> count of E8 calls without PSU-IP-Address

    def customer_by_number(self, number):
        for c in self.customers.values():
            if c["customerNumber"] == number:
                return c
        return None

    def account_by(self, bban=None, iban=None):
        for a in self.accounts.values():
            if (bban and a["bban"] == bban) or (iban and a["iban"] == iban):
                return a
        return None

    def new_bban(self):
        while True:
            body = "1506" + "".join(random.choice("0123456789") for _ in range(6))
            for c in "0123456789":
                if nor_bban_ok(body + c) and not self.account_by(bban=body + c):
                    return body + c

    def new_customer_number(self):
        while True:
            n = "".join(random.choice("0123456789") for _ in range(8))
            if n[0] != "0" and not self.customer_by_number(n):
                return n

    def engagements_of(self, customer_id):
        for ag in self.agreements.values():
            for e in ag["engagements"]:
                if e["customer"] == customer_id:
                    yield ag, e

    def consentable_accounts(self, cust):
        """Accounts offered for consent: owned ones, and engagements with both REGISTER and VIEW."""
        out = [a for a in self.accounts.values() if a["customerNumber"] == cust["customerNumber"]]
        for _, e in self.engagements_of(cust["customerId"]):
            if "REGISTER" in e["roles"] and "VIEW" in e["roles"]:
                a = self.account_by(iban=e["account"]["iban"])
                if a and a not in out:
                    out.append(a)
        return out

    def may_sign(self, cust, acct, amount):
        if acct["customerNumber"] == cust["customerNumber"]:
            return True
        for _, e in self.engagements_of(cust["customerId"]):
            if e["account"]["iban"] == acct["iban"] and ("OWNER" in e["roles"] or (
                    "APPROVE" in e["roles"] and amount <= e["approvalLimit"])):
                return True
        return False


def world(tpp):
    with LOCK:
        w = WORLDS.get(tpp)
        if w is None:
            w = WORLDS[tpp] = World(tpp)
        return w


def remember_request_id(tpp, rid):
    with LOCK:
        seen = SEEN_REQUEST_IDS.setdefault(tpp, set())
        if rid in seen:
            return False
        seen.add(rid)
        return True


__all__ = ["LOCK", "WORLDS", "AUTHS", "World", "world", "remember_request_id", "make_iban"]
