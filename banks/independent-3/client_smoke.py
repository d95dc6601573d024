"""Smoke client: makes a CA + TPP certificate, signs requests (part 5) and walks the main flows.

    python client_smoke.py --make-ca DIR            # writes DIR/ca.pem, DIR/tpp.pem, DIR/tpp.key
    python server.py --port 8099 --trust DIR/ca.pem &
    python client_smoke.py --base http://127.0.0.1:8099 --dir DIR
"""
import argparse
import base64
import datetime as dt
import email.utils
import hashlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

import sca_complete


def make_identity(d):
    os.makedirs(d, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Sandbox TPP CA"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "Sandbox TPP Issuing CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
          .not_valid_after(now + dt.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subj = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Smoke TPP AS"),
                      x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, "PSDNO-FSA-123456789"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "smoke-tpp.example")])
    cert = (x509.CertificateBuilder().subject_name(subj).issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=365)).sign(ca_key, hashes.SHA256()))
    open(os.path.join(d, "ca.pem"), "wb").write(ca.public_bytes(serialization.Encoding.PEM))
    open(os.path.join(d, "tpp.pem"), "wb").write(cert.public_bytes(serialization.Encoding.PEM))
    open(os.path.join(d, "tpp.key"), "wb").write(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


class Tpp:
    def __init__(self, base, d):
        self.base = base.rstrip("/")
        self.cert = x509.load_pem_x509_certificate(open(os.path.join(d, "tpp.pem"), "rb").read())
        self.key = serialization.load_pem_private_key(open(os.path.join(d, "tpp.key"), "rb").read(), None)
        self.cert_b64 = base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()
        self.key_id = f"SN={self.cert.serial_number:x},CA={self.cert.issuer.rfc4514_string()}"
        self.psu_id = "0f8f3a52-6c1e-4a8e-9d7c-3f1b2a6e9c01"

    def call(self, method, path, body=None, headers=None, psu=True):
        data = b"" if body is None else json.dumps(body).encode()
        h = {"X-Request-ID": str(uuid.uuid4()), "Date": email.utils.formatdate(usegmt=True),
             "x-accept-fix": "amount-as-string", "TPP-Session-ID": str(uuid.uuid4()),
             "TPP-Redirect-URI": "https://tpp.example/cb", "TPP-Signature-Certificate": self.cert_b64,
             "Accept": "application/json"}
        if psu:
            h.update({"PSU-ID": self.psu_id, "PSU-IP-Address": "192.0.2.10"})
        if body is not None:
            h["Content-Type"] = "application/json"
            h["Digest"] = "SHA-256=" + base64.b64encode(hashlib.sha256(data).digest()).decode()
        h.update(headers or {})
        signed = ["(request-target)"] + [n for n in ("date", "digest", "x-request-id", "psu-id", "psu-corporate-id",
                                                     "tpp-redirect-uri") if n in {k.lower() for k in h}]
        low = {k.lower(): v for k, v in h.items()}
        lines = [f"(request-target): {method.lower()} {path}"] + [f"{n}: {low[n]}" for n in signed[1:]]
        sig = base64.b64encode(self.key.sign("\n".join(lines).encode(), padding.PKCS1v15(), hashes.SHA256())).decode()
        h["Signature"] = (f'keyId="{self.key_id}",algorithm="rsa-sha256",headers="{" ".join(signed)}",'
                          f'signature="{sig}"')
        req = urllib.request.Request(self.base + path, data=data if body is not None else None, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, json.loads(raw) if raw else None


FAILS = []


def check(name, cond, info=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else f"  -> {info}"))
    if not cond:
        FAILS.append(name)


def run(t):
    ndct = "/v1/payments/norwegian-domestic-credit-transfers"
    body = {"instructedAmount": {"amount": "125.50", "currency": "NOK"}, "creditorName": "Kari Nordmann",
            "creditorAccount": {"bban": "86011117947", "currency": "NOK"},
            "creditorAddress": {"street": "Storgata", "buildingNumber": "1", "postalCode": "0155", "city": "Oslo",
                                "country": "NO"},
            "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
            "remittanceInformationUnstructured": "Smoke test"}
    # 1. single payment with SCA, status
    st, r = t.call("POST", ndct, body, {"PSU-Context": "PRIVATE"})
    check("create NDCT payment 201", st == 201 and r["transactionStatus"] == "RCVD", (st, r))
    pid = r["paymentId"]
    st, s = t.call("GET", f"{ndct}/{pid}/status")
    check("payment status RCVD", st == 200 and s["transactionStatus"] == "RCVD", (st, s))
    code, res = sca_complete.complete(r["_links"]["scaRedirect"]["href"])
    check("payment SCA finalised", code == 200 and res["scaStatus"] == "FINALISED", (code, res))
    st, s = t.call("GET", f"{ndct}/{pid}/status")
    check("payment status ACTC after SCA", s.get("transactionStatus") == "ACTC", (st, s))
    # 2. bad signature is refused
    st, r = t.call("POST", ndct, body, {"Digest": "SHA-256=" + base64.b64encode(b"x" * 32).decode()})
    check("tampered digest refused 400", st == 400, (st, r))
    # 3. basket of two payments (second one NCBCT) with SCA
    ids = []
    b2 = dict(body, instructedAmount={"amount": "99.00", "currency": "NOK"})
    st, r = t.call("POST", ndct, b2)
    ids.append(r["paymentId"])
    ncbct = {"instructedAmount": {"amount": "150000.00", "currency": "NOK"}, "creditorName": "Svenska AB",
             "creditorAccount": {"iban": "SE4550000000058398257466", "currency": "SEK"},
             "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
             "regulatoryReportingCode": "14", "regulatoryReportingInformation": "Goods import"}
    st, r = t.call("POST", "/v1/payments/norwegian-cross-border-credit-transfers", ncbct)
    check("create NCBCT payment 201", st == 201 and r.get("transactionFeeIndicator") is True, (st, r))
    ids.append(r["paymentId"])
    st, bk = t.call("POST", "/v1/signing-baskets", {"paymentIds": ids})
    check("create basket 201 RCVD", st == 201 and bk["transactionStatus"] == "RCVD", (st, bk))
    st, au = t.call("POST", f"/v1/signing-baskets/{bk['basketId']}/authorisations")
    check("start basket authorisation 201 STARTED", st == 201 and au["scaStatus"] == "STARTED", (st, au))
    code, res = sca_complete.complete(au["_links"]["scaRedirect"]["href"])
    check("basket SCA finalised", res.get("scaStatus") == "FINALISED", (code, res))
    st, s = t.call("GET", f"/v1/signing-baskets/{bk['basketId']}/status")
    check("basket ACTC", s.get("transactionStatus") == "ACTC", (st, s))
    # 4. periodic payment cannot join a basket
    per = {k: v for k, v in body.items() if k != "remittanceInformationUnstructured"}
    per.update(startDate=(dt.date.today() + dt.timedelta(days=3)).isoformat(), frequency="Monthly",
               dayOfExecution="15", executionRule="following")
    st, r = t.call("POST", "/v1/periodic-payments/norwegian-domestic-credit-transfers", per)
    check("create periodic 201", st == 201, (st, r))
    st, e = t.call("POST", "/v1/signing-baskets", {"paymentIds": [r["paymentId"]]})
    check("periodic in basket -> REFERENCE_MIX_INVALID", st == 400 and e["code"] == "REFERENCE_MIX_INVALID", (st, e))
    # 5. consent + account list + transaction details
    st, c = t.call("POST", "/v1/consents", {"access": {}, "validUntil": (dt.date.today() + dt.timedelta(days=90))
                                            .isoformat(), "frequencyPerDay": 4, "recurringIndicator": True})
    check("create consent 201", st == 201 and c["consentStatus"] == "received", (st, c))
    code, res = sca_complete.complete(c["_links"]["scaRedirect"]["href"])
    check("consent SCA finalised", res.get("scaStatus") == "FINALISED", (code, res))
    st, al = t.call("GET", "/v1/accounts", headers={"Consent-ID": c["consentId"]})
    check("account list with consent", st == 200 and len(al["accounts"]) >= 2, (st, al))
    acc = al["accounts"][0]["resourceId"]
    st, tl = t.call("GET", f"/v1/accounts/{acc}/transactions", headers={"Consent-ID": c["consentId"]})
    check("transactions list", st == 200 and "booked" in tl["transactions"], (st, tl))
    if tl["transactions"]["booked"]:
        tid = tl["transactions"]["booked"][0]["transactionId"]
        st, td = t.call("GET", f"/v1/accounts/{acc}/transactions/{tid}", headers={"Consent-ID": c["consentId"]})
        check("transaction details", st == 200 and td["transactionsDetails"]["transactionId"] == tid, (st, td))
    # 6. sandbox calls
    st, cust = t.call("GET", "/v1/sandbox/customers?withAccounts=true&withAgreements=true", psu=False)
    check("sandbox customers", st == 200 and any(x["customerNumber"] == "31125461118" for x in cust), (st, cust))
    st, nc = t.call("POST", "/v1/sandbox/customers", {"customerType": "PRIVATE", "customerName": "Smoke Tester"},
                    psu=False)
    check("sandbox create customer", st == 201, (st, nc))
    st, na = t.call("POST", "/v1/sandbox/accounts", {"customerNumber": nc["customerNumber"], "accountName": "Smoke"},
                    psu=False)
    check("sandbox create account", st == 201, (st, na))
    y = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    tx = {"amount": -100, "currency": "NOK", "valueDate": y, "bookingDate": y,
          "remittanceInformationUnstructured": "Smoke", "creditorName": "Shop",
          "creditorAccount": {"iban": "NO9386011117947", "bban": "86011117947"}, "debtorName": "Smoke Tester",
          "debtorAccount": {"iban": na["iban"], "bban": na["bban"]}, "bankTransactionCode": "PMNT-RCDT",
          "ultimateDebtor": "Smoke Tester", "ultimateCreditor": "Shop", "purposeCode": "OTHR", "creditorId": "NO1"}
    st, r = t.call("POST", f"/v1/sandbox/accounts/{na['id']}/transactions", [tx], psu=False)
    check("sandbox create transaction 201", st == 201, (st, r))
    bad = dict(tx, debtorAccount={"iban": "NO9386011117947", "bban": "86011117947"})
    st, r = t.call("POST", f"/v1/sandbox/accounts/{na['id']}/transactions", [bad], psu=False)
    check("sandbox foreign debtor refused", st == 400, (st, r))
    st, r = t.call("GET", f"/v1/sandbox/accounts/{na['id']}/transactions?limit=10", psu=False)
    check("sandbox list transactions", st == 200 and len(r) == 1, (st, r))
    st, r = t.call("POST", "/v1/sandbox/batch-runs", {}, psu=False)
    st, s = t.call("GET", f"{ndct}/{pid}/status")
    check("batch run settles payment ACSC", s.get("transactionStatus") == "ACSC", (st, s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="http://127.0.0.1:8099")
    ap.add_argument("--dir", default="smoke-identity")
    ap.add_argument("--make-ca", metavar="DIR")
    a = ap.parse_args()
    if a.make_ca:
        make_identity(a.make_ca)
        print(f"wrote {a.make_ca}/ca.pem, tpp.pem, tpp.key")
        return
    if not os.path.exists(os.path.join(a.dir, "tpp.pem")):
        make_identity(a.dir)
    run(Tpp(a.base, a.dir))
    print("SMOKE", "FAILED: " + ", ".join(FAILS) if FAILS else "PASSED")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
