"""Smoke client: makes a CA + TPP certificate, signs requests (section 5) and walks the main flows.

    python client_smoke.py                      # starts its own server on a free port, then tests it
    python client_smoke.py --base URL --pki DIR # against a running server that trusts DIR/ca.pem
                                                # (create DIR first with: python tpp.py make-pki DIR)
"""
import argparse
import datetime as dt
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tpp  # noqa: E402
import sca_complete  # noqa: E402

FAILS = []


def check(cond, what, detail=""):
    print(("PASS " if cond else "FAIL ") + what + ("" if cond else f"  -> {detail}"))
    if not cond:
        FAILS.append(what)


def luhn_kid(base):
    tot = 0
    for i, d in enumerate(reversed(base)):
        x = int(d) * 2 if i % 2 == 0 else int(d)
        tot += x - 9 if x > 9 else x
    return base + str((10 - tot % 10) % 10)


def run(base, pki):
    c = tpp.Client(base, pki)
    psu = str(uuid.uuid4())
    today = dt.date.today().isoformat()
    yday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    pis = {"x-accept-fix": "amount-as-string", "TPP-Session-ID": "smoke-session",
           "TPP-Redirect-URI": "https://tpp.example.com/cb", "PSU-ID": psu, "PSU-IP-Address": "192.0.2.10"}

    # ---------------- sandbox data
    st, cu, _ = c.request("POST", "/v1/sandbox/customers", {"customerType": "PRIVATE", "customerName": "Kari Nordmann"})
    check(st == 201, "create sandbox customer", (st, cu))
    cn = cu["customerNumber"]
    bal = [{"balanceAmount": {"currency": "NOK", "amount": 500000}, "balanceType": "expected"},
           {"balanceAmount": {"currency": "NOK", "amount": 500000}, "balanceType": "closingBooked"}]
    st, a1, _ = c.request("POST", "/v1/sandbox/accounts", {"customerNumber": cn, "accountName": "Brukskonto",
                                                          "currency": "NOK", "product": "BRUKSKONTO", "balances": bal})
    check(st == 201, "create sandbox account", (st, a1))
    st, a2, _ = c.request("POST", "/v1/sandbox/accounts", {"customerNumber": cn, "accountName": "Sparekonto",
                                                          "currency": "NOK", "product": "SPAR", "cashAccountType": "SVGS"})
    check(st == 201, "create second sandbox account", (st, a2))
    st, got, _ = c.request("GET", f"/v1/sandbox/accounts/{a1['id']}")
    check(st == 200 and isinstance(got, list) and got[0]["bban"] == a1["bban"], "E12 get sandbox account", (st, got))
    tx = {"amount": 250, "currency": "NOK", "valueDate": yday, "bookingDate": yday,
          "remittanceInformationUnstructured": "Husleie", "creditorName": "Utleier AS",
          "creditorAccount": {"iban": a2["iban"], "bban": a2["bban"]}, "debtorName": "Kari Nordmann",
          "debtorAccount": {"iban": a1["iban"], "bban": a1["bban"]}, "bankTransactionCode": "PMNT-ICDT",
          "ultimateDebtor": "Kari Nordmann", "ultimateCreditor": "Utleier AS", "purposeCode": "OTHR",
          "creditorId": "NO123"}
    st, txs, _ = c.request("POST", f"/v1/sandbox/accounts/{a1['id']}/transactions", [tx])
    check(st == 201, "E7 create sandbox transactions", (st, txs))
    bad_tx = dict(tx, debtorAccount={"iban": a2["iban"], "bban": a2["bban"]})
    st, e, _ = c.request("POST", f"/v1/sandbox/accounts/{a1['id']}/transactions", [bad_tx])
    check(st == 400, "E7 refuses another account as debtor", (st, e))
    st, lst, _ = c.request("GET", f"/v1/sandbox/accounts/{a1['id']}/transactions?limit=10")
    check(st == 200 and len(lst) == 1, "E3 list sandbox transactions", (st, lst))
    st, one, _ = c.request("GET", f"/v1/sandbox/accounts/{a1['id']}/transactions/{txs[0]['id']}")
    check(st == 200 and one["id"] == txs[0]["id"], "E11 get sandbox transaction", (st, one))
    st, e, _ = c.request("PUT", f"/v1/sandbox/accounts/{a1['id']}/balances",
                         [{"balanceAmount": {"currency": "NOK", "amount": 400000}, "balanceType": "expected"}])
    check(st == 204, "E15 change account balance", (st, e))
    st, card, _ = c.request("POST", "/v1/sandbox/card-accounts", {"customerNumber": cn, "name": "Visa", "product": "VISA",
                                                                  "currency": "NOK", "creditLimit": {"currency": "NOK", "amount": 50000}})
    check(st == 201, "create sandbox card account", (st, card))
    k = card["cardAccount"]
    ctx_item = {"cardTransactionId": "ct-1", "terminalId": "T1", "bookingDate": yday, "transactionDate": yday,
                "transactionAmount": {"currency": "NOK", "amount": 120}, "originalAmount": {"currency": "NOK", "amount": 120},
                "merchantCategoryCode": "5411", "cardAcceptorId": "ACC1", "maskedPan": k["maskedPan"],
                "transactionDetails": "Groceries", "proprietaryBankTransactionCode": "PURCHASE", "invoiced": "false",
                "markupFee": {"currency": "NOK", "amount": 0}, "markupFeePercentage": "0",
                "cardAcceptorAddress": {"city": "Oslo", "country": "NO"}}
    st, r, _ = c.request("POST", f"/v1/sandbox/card-accounts/{k['resourceId']}/transactions", [ctx_item])
    check(st == 201 and len(r["cardTransactions"]["booked"]) == 1, "E5 create card transactions", (st, r))
    st, r, _ = c.request("GET", f"/v1/sandbox/card-accounts/{k['resourceId']}/transactions?bookingStatus=booked")
    check(st == 200 and len(r["cardTransactions"]["booked"]) == 1, "E4 list card transactions", (st, r))
    st, r, _ = c.request("GET", f"/v1/sandbox/card-accounts/{k['resourceId']}")
    check(st == 200 and r["cardAccount"]["resourceId"] == k["resourceId"], "E10 get card account", (st, r))
    st, corp, _ = c.request("POST", "/v1/sandbox/customers", {"customerType": "CORPORATE", "customerName": "Bedrift AS"})
    st, ca, _ = c.request("POST", "/v1/sandbox/accounts", {"customerNumber": corp["customerNumber"], "accountName": "Drift",
                                                          "currency": "NOK", "product": "BEDRIFT", "balances": bal})
    st, ag, _ = c.request("POST", "/v1/sandbox/agreements", {"name": "Bedrift avtale", "owner": corp["customerId"]})
    check(st == 201, "create sandbox agreement", (st, ag))
    st, en, h = c.request("POST", f"/v1/sandbox/agreements/{ag['id']}/engagements",
                          {"customer": cu["customerId"], "account": {"iban": ca["iban"]},
                           "roles": ["VIEW", "REGISTER", "APPROVE"], "registerLimit": 100000, "approvalLimit": 100000})
    check(st == 201, "E6 create engagement", (st, en))
    st, r, _ = c.request("GET", h["Location"], digest=True)
    check(st == 200 and r["account"]["iban"] == ca["iban"], "E13 get engagement", (st, r))
    st, r, _ = c.request("GET", f"/v1/sandbox/agreements/{ag['id']}")
    check(st == 200 and len(r["engagements"]) == 1, "E14 get agreement", (st, r))
    st, r, _ = c.request("GET", "/v1/sandbox/customers?withAccounts=true&withAgreements=true")
    check(st == 200 and len(r) == 2, "E9 list customers", (st, r))

    # ---------------- single payment with SCA
    ndct = {"instructedAmount": {"amount": "125.50", "currency": "NOK"}, "creditorName": "Utleier AS",
            "creditorAccount": {"bban": a2["bban"], "currency": "NOK"}, "creditorAddress": {"country": "NO", "city": "Oslo"},
            "debtorAccount": {"bban": a1["bban"], "currency": "NOK"},
            "remittanceInformationStructuredArray": [{"reference": luhn_kid("1234567"), "referenceType": "KID"}]}
    st, p1, _ = c.request("POST", "/v1/payments/norwegian-domestic-credit-transfers", ndct,
                          dict(pis, **{"PSU-Context": "PRIVATE"}))
    check(st == 201 and p1["transactionStatus"] == "RCVD" and "scaRedirect" in p1["_links"], "E16 create NDCT payment", (st, p1))
    path = f"/v1/payments/norwegian-domestic-credit-transfers/{p1['paymentId']}"
    st, s1, _ = c.request("GET", path + "/status")
    check(st == 200 and s1["transactionStatus"] == "RCVD", "payment status RCVD", (st, s1))
    res, _ = sca_complete.complete(p1["_links"]["scaRedirect"]["href"], cn)
    check(res == "FINALISED", "SCA of single payment", res)
    st, s1, _ = c.request("GET", path + "/status")
    check(st == 200 and s1["transactionStatus"] == "ACTC", "payment status ACTC after SCA", (st, s1))
    st, r, _ = c.request("POST", "/v1/sandbox/batch-runs", raw=b"")
    st, s1, _ = c.request("GET", path + "/status")
    check(st == 200 and s1["transactionStatus"] == "ACSC", "payment ACSC after batch run", (st, s1))
    bad = dict(ndct, remittanceInformationStructuredArray=[{"reference": "1234561", "referenceType": "KID"}])
    st, e, _ = c.request("POST", "/v1/payments/norwegian-domestic-credit-transfers", bad, pis)
    check(st == 400 and e["code"] == "KID_INVALID", "invalid KID is 400 KID_INVALID", (st, e))

    # ---------------- signing basket
    ids = []
    for amt in ("10.00", "20.00"):
        st, p, _ = c.request("POST", "/v1/payments/norwegian-domestic-credit-transfers",
                             dict(ndct, instructedAmount={"amount": amt, "currency": "NOK"}), pis)
        check(st == 201 and "scaRedirect" not in p["_links"], f"create basket payment {amt}", (st, p))
        ids.append(p["paymentId"])
    ncbct = {"instructedAmount": {"amount": "150.00", "currency": "EUR"}, "creditorName": "Empfänger GmbH",
             "creditorAccount": {"iban": "DE89370400440532013000", "currency": "EUR"},
             "debtorAccount": {"bban": a1["bban"], "currency": "NOK"}, "creditorAgent": "COBADEFFXXX"}
    st, p, _ = c.request("POST", "/v1/payments/norwegian-cross-border-credit-transfers", ncbct, pis)
    check(st == 201, "E18 create NCBCT payment", (st, p))
    ids.append(p["paymentId"])
    st, bk, _ = c.request("POST", "/v1/signing-baskets", {"paymentIds": ids}, pis)
    check(st == 201 and bk["transactionStatus"] == "RCVD", "E1 create signing basket", (st, bk))
    st, au, _ = c.request("POST", f"/v1/signing-baskets/{bk['basketId']}/authorisations", None, pis)
    check(st == 201 and au["scaStatus"] == "STARTED", "E2 start basket authorisation", (st, au))
    res, _ = sca_complete.complete(au["_links"]["scaRedirect"]["href"], cn)
    check(res == "FINALISED", "SCA of signing basket", res)
    st, r, _ = c.request("GET", f"/v1/signing-baskets/{bk['basketId']}/status")
    check(st == 200 and r["transactionStatus"] == "ACTC", "basket status ACTC", (st, r))
    st, r, _ = c.request("GET", au["_links"]["self"]["href"])
    check(st == 200 and r["scaStatus"] == "FINALISED", "basket authorisation FINALISED", (st, r))
    per = {"instructedAmount": {"amount": "99.00", "currency": "NOK"}, "creditorName": "Barnehage",
           "creditorAccount": {"bban": a2["bban"], "currency": "NOK"}, "debtorAccount": {"bban": a1["bban"], "currency": "NOK"},
           "startDate": today, "frequency": "MonthlyVariable", "monthsOfExecution": [1, 3, 5], "dayOfExecution": "15"}
    st, pp, _ = c.request("POST", "/v1/periodic-payments/norwegian-domestic-credit-transfers", per, pis)
    check(st == 201, "E17 create periodic payment", (st, pp))
    st, e, _ = c.request("POST", "/v1/signing-baskets", {"paymentIds": [pp["paymentId"]]}, pis)
    check(st == 400 and e["code"] == "REFERENCE_MIX_INVALID", "periodic in basket refused", (st, e))

    # ---------------- AIS consent and accounts
    ais_h = {k: v for k, v in pis.items()}
    consent = {"access": {"allPsd2": "allAccounts"}, "recurringIndicator": True,
               "validUntil": (dt.date.today() + dt.timedelta(days=90)).isoformat(), "frequencyPerDay": 4}
    st, co, _ = c.request("POST", "/v1/consents", consent, ais_h)
    check(st == 201 and co["consentStatus"] == "received", "create consent", (st, co))
    read_h = {"x-accept-fix": "amount-as-string", "TPP-Session-ID": "smoke-session",
              "TPP-Redirect-URI": "https://tpp.example.com/cb", "Consent-ID": co["consentId"], "PSU-IP-Address": "192.0.2.10"}
    st, e, _ = c.request("GET", "/v1/accounts", None, read_h)
    check(st == 401 and "scaRedirect" in e.get("_links", {}), "account list before SCA is 401 with scaRedirect", (st, e))
    res, _ = sca_complete.complete(co["_links"]["scaRedirect"]["href"], cn)
    check(res == "FINALISED", "SCA of consent", res)
    st, al, _ = c.request("GET", "/v1/accounts", None, read_h)
    check(st == 200 and len(al["accounts"]) == 3, "account list with consent", (st, al))
    st, r, _ = c.request("GET", f"/v1/accounts/{a1['id']}/balances", None, read_h)
    check(st == 200 and r["balances"][0]["balanceAmount"]["amount"].endswith(".00"), "account balances", (st, r))
    st, r, _ = c.request("GET", f"/v1/accounts/{a1['id']}/transactions?bookingStatus=booked", None, read_h)
    check(st == 200 and len(r["transactions"]["booked"]) >= 1, "account transactions", (st, r))
    tid = r["transactions"]["booked"][-1]["transactionId"]
    st, r, _ = c.request("GET", f"/v1/accounts/{a1['id']}/transactions/{tid}", None, read_h)
    check(st == 200 and r["transactionsDetails"]["transactionId"] == tid, "E8 transaction details", (st, r))

    # ---------------- gateway strictness
    st, e, _ =  c.request("GET", "/v1/sandbox/customers", None, after={"Signature": 'keyId="SN=1,CA=CN=x",algorithm="rsa-sha256",headers="x-request-id",signature="AAAA"'})
    check(st in (400, 403), "forged signature refused", (st, e))
    st, e, _ = c.request("POST", "/v1/payments/norwegian-domestic-credit-transfers", ndct, dict(pis, **{"PSU-IP-Address": None}))
    check(st == 400 and e["code"] == "HTTP_HEADER_REQUIRED", "missing PSU-IP-Address refused", (st, e))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base")
    ap.add_argument("--pki")
    a = ap.parse_args()
    proc = None
    pki = a.pki or tempfile.mkdtemp(prefix="smoke-pki-")
    if not os.path.exists(os.path.join(pki, "tpp.pem")):
        tpp.make_pki(pki)
    base = a.base
    if not base:
        port = free_port()
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "server.py"), "--port", str(port),
                                 "--trust", os.path.join(pki, "ca.pem")])
        base = f"http://localhost:{port}"
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
    try:
        run(base, pki)
    finally:
        if proc:
            proc.terminate()
            proc.wait()
    print(f"\n{'ALL PASSED' if not FAILS else str(len(FAILS)) + ' FAILED'}")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
