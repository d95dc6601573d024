"""What a finished SCA does to payments, baskets and consents."""
from common import now, today


def _payment_outcome(w, p, cust):
    from payments import debtor_of
    acct = debtor_of(w, p)
    if acct is None or not w.may_sign(cust, acct, float(p["amount"])):
        p["status"] = "RJCT"
        p["reason"] = "PSU may not sign for the debtor account"
        return False
    if p["service"] == "periodic-payments":
        p["status"] = "ACTC"
    else:
        p["status"] = "PDNG" if p["execDate"] and p["execDate"] > today() else "ACTC"
    p["authorisedBy"] = cust["customerId"]
    return True


def _psu_matches(a, w, cust):
    psu = a.get("psuId")
    if psu and psu in w.customers and psu != cust["customerId"]:
        return False
    return True


def complete(a, cust):
    w = a["world"]
    if not _psu_matches(a, w, cust):
        fail(a, "authenticated PSU differs from PSU-ID")
        return "You are not the customer this request was made for."
    if a["kind"] == "payment":
        ok = _payment_outcome(w, w.payments[a["target"]], cust)
        a["scaStatus"] = "FINALISED" if ok else "FAILED"
        return "Payment approved." if ok else "You cannot sign for this account."
    if a["kind"] == "basket":
        b = w.baskets[a["target"]]
        oks = [_payment_outcome(w, w.payments[pid], cust) for pid in b["paymentIds"]]
        a["scaStatus"] = "FINALISED" if any(oks) else "FAILED"
        return f"{sum(oks)} of {len(oks)} payment(s) approved."
    c = w.consents[a["target"]]
    accts = w.consentable_accounts(cust)
    req = c["access"]
    if not (req.get("availableAccounts") or req.get("allPsd2")):
        wanted = {(r.get("iban"), r.get("bban")) for k in ("accounts", "balances", "transactions") for r in req.get(k, [])}
        accts = [x for x in accts if any(x["iban"] == i or x["bban"] == b for i, b in wanted)]
    if not accts:
        fail(a, "no consentable account")
        return "None of the requested accounts can be shared."
    c["accountIds"] = [x["id"] for x in accts]
    c["customerId"] = cust["customerId"]
    c["consentStatus"] = "valid"
    c["scaTime"] = now()
    a["scaStatus"] = "FINALISED"
    return f"Access granted to {len(accts)} account(s)."


def fail(a, reason):
    w = a["world"]
    a["scaStatus"] = "FAILED"
    a["failure"] = reason
    if a["kind"] == "payment":
        w.payments[a["target"]]["status"] = "RJCT"
    elif a["kind"] == "basket":
        for pid in w.baskets[a["target"]]["paymentIds"]:
            if w.payments[pid]["status"] == "RCVD":
                w.payments[pid]["status"] = "RJCT"
    else:
        c = w.consents[a["target"]]
        if c["consentStatus"] == "received":
            c["consentStatus"] = "rejected"
