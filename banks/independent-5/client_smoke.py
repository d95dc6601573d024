#!/usr/bin/env python3
"""Smoke test: makes a CA + TPP certificate, starts server.py on a free port, signs every request
(draft-cavage-10: keyId SN=<hex>,CA=<DN>, rsa-sha256, Digest SHA-256) and walks the main flows.

Usage: python client_smoke.py                      (starts its own server on a free port)
       python client_smoke.py --ca-dir D           (only writes D/ca.pem + D/ca-key.pem)
       python client_smoke.py --ca-dir D --base http://127.0.0.1:P   (server started with --trust D/ca.pem)
"""
import argparse, base64, datetime as dt, hashlib, json, os, socket, subprocess, sys, tempfile, time, uuid
import urllib.error, urllib.parse, urllib.request
from cryptography import x509
from cryptography.x509.oid import NameOID
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa, padding

HERE = os.path.dirname(os.path.abspath(__file__))


def make_ca():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Smoke Test QTSP"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "Smoke Test CA")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_tpp(ca_key, ca_cert):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Smoke TPP AS"),
                      x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, "PSDNO-FSA-123456789"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "smoke-tpp")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=90)).sign(ca_key, hashes.SHA256()))
    return key, cert


class Client:
    def __init__(self, base, key, cert):
        self.base, self.key, self.cert = base, key, cert
        self.cert_b64 = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
        self.key_id = f"SN={cert.serial_number:x},CA={cert.issuer.rfc4514_string()}"

    def call(self, method, path, body=None, headers=None, digest=False):
        h = {"X-Request-ID": str(uuid.uuid4()), "TPP-Signature-Certificate": self.cert_b64,
             "Date": dt.datetime.now(dt.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")}
        h.update(headers or {})
        data = b""
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if body is not None or digest:
            h["Digest"] = "SHA-256=" + base64.b64encode(hashlib.sha256(data).digest()).decode()
        signed = ["(request-target)"] + [n for n in ("date", "digest", "x-request-id", "psu-id", "psu-corporate-id",
                                                     "tpp-redirect-uri") if any(k.lower() == n for k in h)]
        lower = {k.lower(): v for k, v in h.items()}
        lines = [f"(request-target): {method.lower()} {path}"] + [f"{n}: {lower[n]}" for n in signed[1:]]
        sig = base64.b64encode(self.key.sign("\n".join(lines).encode(), padding.PKCS1v15(), hashes.SHA256())).decode()
        h["Signature"] = (f'keyId="{self.key_id}",algorithm="rsa-sha256",headers="{" ".join(signed)}",'
                          f'signature="{sig}"')
        req = urllib.request.Request(self.base + path, data=data or None, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, (json.loads(raw) if raw else None)


PSU = {"x-accept-fix": "amount-as-string", "TPP-Session-ID": "sess-1", "TPP-Redirect-URI": "https://tpp.example/cb",
       "PSU-IP-Address": "192.0.2.10"}


def sca(url, customer, deny=False):
    cmd = [sys.executable, os.path.join(HERE, "sca_complete.py"), url, "--customer-number", customer]
    if deny:
        cmd.append("--deny")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()[0]


def expect(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok  ", msg)


def run(c):
    today = dt.date.today()
    past = (today - dt.timedelta(days=3)).isoformat()
    # ---- sandbox data
    s, cust = c.call("POST", "/v1/sandbox/customers", {"customerType": "PRIVATE", "customerName": "Kari Nordmann"})
    expect(s == 201, f"create sandbox customer {s}")
    psu_id, cnum = cust["customerId"], cust["customerNumber"]
    psu = dict(PSU, **{"PSU-ID": psu_id})
    s, acc = c.call("POST", "/v1/sandbox/accounts", {"customerNumber": cnum, "accountName": "Brukskonto",
                    "bban": "12345678903", "iban": "NO9312345678903", "currency": "NOK", "product": "BRUKSKONTO",
                    "cashAccountType": "CACC", "creditLine": 0,
                    "balances": [{"balanceAmount": {"currency": "NOK", "amount": 50000}, "balanceType": "closingBooked"}]})
    expect(s == 201, f"create sandbox account {s}")
    aid = acc["id"]
    tx = {"amount": -250, "currency": "NOK", "valueDate": past, "bookingDate": past,
          "remittanceInformationUnstructured": "Groceries", "creditorName": "Butikken AS",
          "creditorAccount": {"iban": "NO8330001234567", "bban": "30001234567"}, "debtorName": "Kari Nordmann",
          "debtorAccount": {"iban": "NO9312345678903", "bban": "12345678903"}, "bankTransactionCode": "PMNT-ICDT",
          "ultimateDebtor": "Kari Nordmann", "ultimateCreditor": "Butikken AS", "purposeCode": "OTHR", "creditorId": "X1"}
    s, txs = c.call("POST", f"/v1/sandbox/accounts/{aid}/transactions", [tx])
    expect(s == 201, f"E7 create sandbox transaction {s}")
    bad = dict(tx, debtorAccount={"iban": "NO0000000000000", "bban": "00000000000"})
    s, _ = c.call("POST", f"/v1/sandbox/accounts/{aid}/transactions", [bad])
    expect(s == 400, f"E7 other account as debtor rejected {s}")
    s, lst = c.call("GET", f"/v1/sandbox/accounts/{aid}/transactions?limit=5")
    expect(s == 200 and len(lst) == 1, f"E3 sandbox transactions {s}")
    s, _ = c.call("GET", f"/v1/sandbox/accounts/{aid}/transactions?limit=0")
    expect(s == 400, f"E3 limit 0 rejected {s}")
    s, one = c.call("GET", f"/v1/sandbox/accounts/{aid}/transactions/{txs[0]['id']}")
    expect(s == 200, f"E11 one sandbox transaction {s}")
    s, arr = c.call("GET", f"/v1/sandbox/accounts/{aid}")
    expect(s == 200 and isinstance(arr, list), f"E12 sandbox account {s}")
    s, _ = c.call("PUT", f"/v1/sandbox/accounts/{aid}/balances",
                  [{"balanceAmount": {"currency": "NOK", "amount": 60000}, "balanceType": "expected"}])
    expect(s == 204, f"E15 change balance {s}")
    s, custs = c.call("GET", "/v1/sandbox/customers?withAccounts=true&withAgreements=false")
    expect(s == 200 and custs[0]["accounts"] == [aid], f"E9 customers {s}")
    s, card = c.call("POST", "/v1/sandbox/card-accounts", {"customerNumber": cnum, "maskedPan": "525412******1234",
                     "currency": "NOK", "creditLimit": {"currency": "NOK", "amount": 20000}, "cardId": "C1",
                     "cardIdVNo": "1", "accountNumber": "12345678903", "expiry": "12/29", "name": "Visa",
                     "product": "VISA", "status": "enabled"})
    expect(s == 201, f"create card account {s}")
    cid = card["cardAccount"]["resourceId"]
    ctx_ = {"cardTransactionId": "ct1", "terminalId": "T1", "bookingDate": past, "transactionDate": past,
            "transactionAmount": {"currency": "NOK", "amount": 100}, "originalAmount": {"currency": "NOK", "amount": 100},
            "merchantCategoryCode": "5411", "cardAcceptorId": "A1", "maskedPan": "525412******1234",
            "transactionDetails": "Shop", "proprietaryBankTransactionCode": "PUR", "invoiced": "false",
            "markupFee": {"currency": "NOK", "amount": 0}, "markupFeePercentage": "0",
            "cardAcceptorAddress": {"city": "Oslo", "country": "NO"}}
    s, _ = c.call("POST", f"/v1/sandbox/card-accounts/{cid}/transactions", [ctx_])
    expect(s == 201, f"E5 card transactions {s}")
    s, ct = c.call("GET", f"/v1/sandbox/card-accounts/{cid}/transactions?bookingStatus=booked")
    expect(s == 200 and len(ct["cardTransactions"]["booked"]) == 1, f"E4 card transactions {s}")
    s, _ = c.call("GET", f"/v1/sandbox/card-accounts/{cid}")
    expect(s == 200, f"E10 card account {s}")
    s, corp = c.call("POST", "/v1/sandbox/customers", {"customerType": "CORPORATE", "customerName": "Firma AS"})
    s, cacc = c.call("POST", "/v1/sandbox/accounts", {"customerNumber": corp["customerNumber"], "accountName": "Drift",
                     "bban": "98765432106", "iban": "NO0398765432106", "currency": "NOK", "product": "DRIFT"})
    s, ag = c.call("POST", "/v1/sandbox/agreements", {"name": "Firma avtale", "owner": corp["customerNumber"]})
    expect(s == 201, f"create agreement {s}")
    s, eng = c.call("POST", f"/v1/sandbox/agreements/{ag['id']}/engagements",
                    {"customer": cnum, "account": {"iban": "NO0398765432106"}, "roles": ["VIEW", "REGISTER"],
                     "registerLimit": 100000, "approvalLimit": 0})
    expect(s == 201, f"E6 engagement {s}")
    s, agv = c.call("GET", f"/v1/sandbox/agreements/{ag['id']}")
    expect(s == 200 and len(agv["engagements"]) == 1, f"E14 agreement {s}")
    s, e1 = c.call("GET", f"/v1/sandbox/agreements/{ag['id']}/engagements/{agv['engagements'][0]['id']}", digest=True)
    expect(s == 200, f"E13 engagement {s}")

    # ---- payments
    ndct = {"instructedAmount": {"amount": "1500.00", "currency": "NOK"}, "creditorName": "Utleier AS",
            "creditorAccount": {"bban": "30001234567", "currency": "NOK"},
            "creditorAddress": {"street": "Storgata", "buildingNumber": "1", "postalCode": "0155", "city": "Oslo",
                                "country": "NO"},
            "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
            "remittanceInformationUnstructured": "Husleie"}
    s, p = c.call("POST", "/v1/payments/norwegian-domestic-credit-transfers", ndct,
                  dict(psu, **{"PSU-Context": "PRIVATE"}))
    expect(s == 201 and "scaRedirect" in p["_links"], f"E16 NDCT with SCA link {s}")
    s, dup = c.call("POST", "/v1/payments/norwegian-domestic-credit-transfers", ndct, psu)
    expect(s == 409, f"E16 logical duplicate refused {s}")
    s, st = c.call("GET", f"/v1/payments/norwegian-domestic-credit-transfers/{p['paymentId']}/status")
    expect(s == 200 and st["transactionStatus"] == "RCVD", f"payment status RCVD {s}")
    expect(sca(p["_links"]["scaRedirect"]["href"], cnum) == "FINALISED", "payment SCA finalised")
    s, st = c.call("GET", f"/v1/payments/norwegian-domestic-credit-transfers/{p['paymentId']}/status")
    expect(st["transactionStatus"] == "ACTC", f"payment status ACTC after SCA")
    s, _ = c.call("POST", "/v1/payments/norwegian-domestic-credit-transfers",
                  dict(ndct, instructedAmount={"amount": "15", "currency": "NOK"}), psu)
    expect(s == 400, f"amount without 2 decimals rejected {s}")
    # basket
    ids = []
    for amt in ("10.00", "20.00"):
        s, bp = c.call("POST", "/v1/payments/norwegian-domestic-credit-transfers?allowLogicalDuplicate=true",
                       dict(ndct, instructedAmount={"amount": amt, "currency": "NOK"}), psu)
        expect(s == 201 and "scaRedirect" not in bp["_links"], f"E16 payment for basket {s}")
        ids.append(bp["paymentId"])
    s, ncb = c.call("POST", "/v1/payments/norwegian-cross-border-credit-transfers",
                    {"instructedAmount": {"amount": "150000.00", "currency": "NOK"}, "creditorName": "Svensk AB",
                     "creditorAccount": {"iban": "SE4550000000058398257466", "currency": "SEK"},
                     "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
                     "regulatoryReportingCode": "14", "regulatoryReportingInformation": "Goods"}, psu)
    expect(s == 201, f"E18 NCBCT {s}")
    ids.append(ncb["paymentId"])
    s, per = c.call("POST", "/v1/periodic-payments/norwegian-domestic-credit-transfers",
                    {"instructedAmount": {"amount": "100.00", "currency": "NOK"}, "creditorName": "Sparing",
                     "creditorAccount": {"bban": "30001234567", "currency": "NOK"},
                     "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
                     "startDate": (today + dt.timedelta(days=2)).isoformat(), "frequency": "MonthlyVariable",
                     "monthsOfExecution": [1, 6], "dayOfExecution": "15", "executionRule": "following"}, psu)
    expect(s == 201, f"E17 periodic {s}")
    s, err = c.call("POST", "/v1/signing-baskets", {"paymentIds": [ids[0], per["paymentId"]]}, psu)
    expect(s == 400 and err["code"] == "REFERENCE_MIX_INVALID", f"periodic in basket refused {s}")
    s, bk = c.call("POST", "/v1/signing-baskets", {"paymentIds": ids}, psu)
    expect(s == 201 and bk["transactionStatus"] == "RCVD", f"E1 basket {s}")
    s, au = c.call("POST", f"/v1/signing-baskets/{bk['basketId']}/authorisations", None, psu)
    expect(s == 201 and au["scaStatus"] == "STARTED", f"E2 start basket authorisation {s}")
    expect(sca(au["_links"]["scaRedirect"]["href"], cnum) == "FINALISED", "basket SCA finalised")
    s, bs = c.call("GET", f"/v1/signing-baskets/{bk['basketId']}/status")
    expect(s == 200 and bs["transactionStatus"] == "ACTC", f"basket status ACTC {s}")
    s, _ = c.call("POST", "/v1/sandbox/batch-runs")
    # ---- consent on first account-list access + E8
    s, e = c.call("GET", "/v1/accounts", None, psu)
    expect(s == 401 and "scaRedirect" in e["_links"], f"account list asks for consent SCA {s}")
    expect(sca(e["_links"]["scaRedirect"]["href"], cnum) == "FINALISED", "consent SCA finalised")
    s, al = c.call("GET", "/v1/accounts", None, psu)
    expect(s == 200 and len(al["accounts"]) == 2, f"account list after consent {s}")
    s, tl = c.call("GET", f"/v1/accounts/{aid}/transactions", None, psu)
    expect(s == 200 and tl["transactions"]["booked"], f"account transactions list {s}")
    tid = tl["transactions"]["booked"][0]["transactionId"]
    s, d = c.call("GET", f"/v1/accounts/{aid}/transactions/{tid}", None, psu)
    expect(s == 200 and d["transactionsDetails"]["transactionAmount"]["amount"] == "-250.00", f"E8 details {s}")
    nip = {k: v for k, v in psu.items() if k != "PSU-IP-Address"}
    codes = [c.call("GET", f"/v1/accounts/{aid}/transactions/{tid}", None, nip)[0] for _ in range(5)]
    expect(codes == [200, 200, 200, 200, 429], f"E8 4/day without PSU-IP-Address {codes}")
    # ---- signature checks
    s, _ = c.call("GET", "/v1/sandbox/customers", None, {"TPP-Signature-Certificate": "AAAA"})
    expect(s in (400, 403), f"bad certificate refused {s}")
    print("SMOKE PASSED")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="URL of a running server (it must trust the CA of --ca-dir)")
    ap.add_argument("--ca-dir", help="directory holding ca.pem + ca-key.pem (created on first use)")
    a = ap.parse_args()
    if a.ca_dir:
        os.makedirs(a.ca_dir, exist_ok=True)
        kp, cp = os.path.join(a.ca_dir, "ca-key.pem"), os.path.join(a.ca_dir, "ca.pem")
        if os.path.exists(kp) and os.path.exists(cp):
            ca_key = serialization.load_pem_private_key(open(kp, "rb").read(), None)
            ca_cert = x509.load_pem_x509_certificate(open(cp, "rb").read())
        else:
            ca_key, ca_cert = make_ca()
            open(kp, "wb").write(ca_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
            open(cp, "wb").write(ca_cert.public_bytes(serialization.Encoding.PEM))
            print(f"wrote {cp} (start the server with --trust {cp})")
            if not a.base:
                return
    else:
        ca_key, ca_cert = make_ca()
    tpp_key, tpp_cert = make_tpp(ca_key, ca_cert)
    proc = None
    base = a.base
    if not base:
        d = tempfile.mkdtemp()
        ca_path = os.path.join(d, "ca.pem")
        with open(ca_path, "wb") as f:
            f.write(ca_cert.public_bytes(serialization.Encoding.PEM))
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "server.py"), "--port", str(port), "--trust", ca_path])
        base = f"http://127.0.0.1:{port}"
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close(); break
            except OSError:
                time.sleep(0.1)
    elif not a.ca_dir:
        sys.exit("--base needs --ca-dir (the CA the running server trusts)")
    try:
        run(Client(base, tpp_key, tpp_cert))
    finally:
        if proc:
            proc.terminate(); proc.wait()


if __name__ == "__main__":
    main()
