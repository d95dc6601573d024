"""Smoke test of the independent-4 bank.

Makes (or reuses) a CA in --outdir (ca.pem + ca.key) and a fresh TPP certificate issued by it, signs every
request as interface.md part 5 says, and runs the flows against a running server.

  python client_smoke.py --make-ca-only                 # writes smoke-certs/ca.pem and ca.key
  python server.py --port 8099 --trust smoke-certs/ca.pem &
  python client_smoke.py --port 8099                   # against the running server
or in one go (starts and stops its own server):  python client_smoke.py --start --port 8099
"""
import argparse, base64, datetime as dt, hashlib, json, os, subprocess, sys, time, uuid, http.client, urllib.parse
from cryptography import x509
from cryptography.x509.oid import NameOID
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa, padding

HERE = os.path.dirname(os.path.abspath(__file__))


def make_certs(outdir):
    os.makedirs(outdir, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    ca_pem, ca_keyf = os.path.join(outdir, "ca.pem"), os.path.join(outdir, "ca.key")
    if os.path.exists(ca_pem) and os.path.exists(ca_keyf):  # reuse the CA a running server already trusts
        ca = x509.load_pem_x509_certificate(open(ca_pem, "rb").read())
        ca_key = serialization.load_pem_private_key(open(ca_keyf, "rb").read(), None)
        ca_name = ca.subject
    else:
        ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        ca_name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Smoke CA"),
                             x509.NameAttribute(NameOID.COMMON_NAME, "Smoke Test CA")])
        ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
              .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
              .not_valid_after(now + dt.timedelta(days=365)).add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
              .sign(ca_key, hashes.SHA256()))
        open(ca_pem, "wb").write(ca.public_bytes(serialization.Encoding.PEM))
        open(ca_keyf, "wb").write(ca_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    tpp = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Smoke TPP"),
                                                              x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Smoke TPP AS")]))
           .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
           .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=90)).sign(ca_key, hashes.SHA256()))
    return tpp, key


class Client:
    def __init__(self, port, cert, key):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.cert, self.key = cert, key
        self.certb64 = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
        self.wrap = False
        self.keyid = f"SN={cert.serial_number:x},CA={cert.issuer.rfc4514_string()}"

    def call(self, method, path, body=None, headers=None, sign=True):
        h = {"X-Request-ID": str(uuid.uuid4()), "Date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())}
        h.update(headers or {})
        data = b""
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
            h["Digest"] = "SHA-256=" + base64.b64encode(hashlib.sha256(data).digest()).decode()
        if sign:
            names = [n for n in ["date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"]
                     if any(k.lower() == n for k in h)]
            names = ["(request-target)"] + names
            lower = {k.lower(): v for k, v in h.items()}
            s = "\n".join(f"(request-target): {method.lower()} {path}" if n == "(request-target)" else f"{n}: {lower[n]}"
                          for n in names)
            sig = base64.b64encode(self.key.sign(s.encode(), padding.PKCS1v15(), hashes.SHA256())).decode()
            h["TPP-Signature-Certificate"] = self.certb64
            h["Signature"] = f'keyId="{self.keyid}",algorithm="rsa-sha256",headers="{" ".join(names)}",signature="{sig}"'
            if self.wrap:
                h["Signature"] = "=?utf-8?B?" + base64.b64encode(h["Signature"].encode()).decode() + "?="
        self.conn.request(method, path, body=data if body is not None else None, headers=h)
        r = self.conn.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, raw.decode()


PSU = str(uuid.uuid4())
PAYH = {"x-accept-fix": "amount-as-string", "TPP-Session-ID": str(uuid.uuid4()), "TPP-Redirect-URI": "https://tpp.example/cb",
        "PSU-ID": PSU, "PSU-IP-Address": "192.0.2.10"}


def expect(label, got, want):
    ok = got[0] == want
    print(("PASS" if ok else "FAIL"), label, got[0], "" if ok else json.dumps(got[1])[:300])
    if not ok:
        raise SystemExit(1)
    return got[1]


def sca(url, *extra):
    r = subprocess.run([sys.executable, os.path.join(HERE, "sca_complete.py"), url, *extra], capture_output=True, text=True)
    print("SCA", "ok" if r.returncode == 0 else "failed", r.stdout.strip())
    if r.returncode:
        raise SystemExit(1)


def ndct(amount="150.00", debtor="12345678903"):
    return {"instructedAmount": {"amount": amount, "currency": "NOK"}, "creditorName": "Kari Nordmann",
            "creditorAccount": {"bban": "12345678903", "currency": "NOK"}, "creditorAddress": {"country": "NO", "city": "Oslo"},
            "debtorAccount": {"bban": debtor, "currency": "NOK"}, "remittanceInformationUnstructured": "smoke"}


def run(port, tpp, key):
    c = Client(port, tpp, key)
    P = "/v1/payments/norwegian-domestic-credit-transfers"
    # sandbox data
    cust = expect("create customer", c.call("POST", "/v1/sandbox/customers", {"customerType": "PRIVATE", "customerName": "Ola"}), 201)
    num = cust["customerNumber"]
    acc = expect("create account", c.call("POST", "/v1/sandbox/accounts", {"customerNumber": num, "currency": "NOK"}), 201)
    expect("get account (E12)", c.call("GET", f"/v1/sandbox/accounts/{acc['id']}"), 200)
    yday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    tx = {"amount": 250, "currency": "NOK", "valueDate": yday, "bookingDate": yday, "remittanceInformationUnstructured": "rent",
          "creditorName": "Landlord", "creditorAccount": {"iban": "NO9386011117947", "bban": "86011117947"},
          "debtorName": "Ola", "debtorAccount": {"iban": acc["iban"], "bban": acc["bban"]}, "bankTransactionCode": "PMNT-ICDT",
          "ultimateDebtor": "Ola", "ultimateCreditor": "Landlord", "purposeCode": "OTHR", "creditorId": "C1"}
    expect("create transactions (E7)", c.call("POST", f"/v1/sandbox/accounts/{acc['id']}/transactions", [tx]), 201)
    bad = dict(tx, debtorAccount={"iban": "NO9386011117947", "bban": "86011117947"})
    expect("E7 other debtor rejected", c.call("POST", f"/v1/sandbox/accounts/{acc['id']}/transactions", [bad]), 400)
    txs = expect("list sandbox transactions (E3)", c.call("GET", f"/v1/sandbox/accounts/{acc['id']}/transactions?limit=5"), 200)
    expect("E3 limit 0", c.call("GET", f"/v1/sandbox/accounts/{acc['id']}/transactions?limit=0"), 400)
    expect("customers (E9)", c.call("GET", "/v1/sandbox/customers?withAccounts=true&withAgreements=true"), 200)
    # payment
    pay = expect("create NDCT (E16)", c.call("POST", P, ndct(debtor=acc["bban"]), PAYH), 201)
    st = expect("payment status", c.call("GET", f"{P}/{pay['paymentId']}/status"), 200)
    assert st["transactionStatus"] == "RCVD", st
    sca(pay["_links"]["scaRedirect"]["href"], "--customer", num)
    st = expect("payment status after SCA", c.call("GET", f"{P}/{pay['paymentId']}/status"), 200)
    assert st["transactionStatus"] == "ACTC", st
    pd = expect("create NDCT to deny", c.call("POST", P, ndct("5.00"), PAYH), 201)
    sca(pd["_links"]["scaRedirect"]["href"], "--customer", num, "--deny")
    st = expect("payment status after denied SCA", c.call("GET", f"{P}/{pd['paymentId']}/status"), 200)
    assert st["transactionStatus"] == "RJCT", st
    c.wrap = True
    expect("RFC 2047 wrapped Signature", c.call("POST", P, ndct("7.00"), PAYH), 201)
    c.wrap = False
    c.keyid = "SN=%X,CA=C=NO, O=Smoke CA, CN=Smoke Test CA" % tpp.serial_number
    expect("keyId with other DN order", c.call("GET", f"{P}/{pd['paymentId']}/status"), 200)
    c.keyid = "SN=1,CA=C=NO, O=Smoke CA, CN=Smoke Test CA"
    expect("keyId with wrong serial", c.call("GET", f"{P}/{pd['paymentId']}/status"), 401)
    c.keyid = f"SN={tpp.serial_number:x},CA={tpp.issuer.rfc4514_string()}"
    import tempfile
    other_tpp, other_key = make_certs(tempfile.mkdtemp())  # issued by a CA the server does not trust
    expect("untrusted CA", Client(port, other_tpp, other_key).call("GET", f"{P}/{pd['paymentId']}/status"), 401)
    expect("unsigned request", c.call("POST", P, ndct(), PAYH, sign=False), 401)
    expect("bad amount", c.call("POST", P, ndct(amount="150.0"), PAYH), 400)
    ncb = {"instructedAmount": {"amount": "100000.00", "currency": "NOK"}, "creditorName": "Hans",
           "creditorAccount": {"iban": "DE89370400440532013000", "currency": "EUR"}, "debtorAccount": {"bban": acc["bban"], "currency": "NOK"}}
    expect("NCBCT without reporting", c.call("POST", "/v1/payments/norwegian-cross-border-credit-transfers", ncb, PAYH), 400)
    ncb.update(regulatoryReportingCode="14", regulatoryReportingInformation="goods")
    p3 = expect("create NCBCT (E18)", c.call("POST", "/v1/payments/norwegian-cross-border-credit-transfers", ncb, PAYH), 201)
    # basket
    p1 = expect("create NDCT 1", c.call("POST", P, ndct("10.00"), PAYH), 201)
    p2 = expect("create NDCT 2", c.call("POST", P, ndct("20.00"), PAYH), 201)
    per = dict(ndct(), startDate=dt.date.today().isoformat(), frequency="MonthlyVariable", monthsOfExecution=[1, 1])
    del per["creditorAddress"]
    expect("periodic duplicate month", c.call("POST", "/v1/periodic-payments/norwegian-domestic-credit-transfers", per, PAYH), 400)
    per["monthsOfExecution"] = [1, 6]
    pp = expect("create periodic (E17)", c.call("POST", "/v1/periodic-payments/norwegian-domestic-credit-transfers", per, PAYH), 201)
    expect("basket with periodic", c.call("POST", "/v1/signing-baskets", {"paymentIds": [p1["paymentId"], pp["paymentId"]]}, PAYH), 400)
    b = expect("create basket (E1)", c.call("POST", "/v1/signing-baskets",
                                            {"paymentIds": [p1["paymentId"], p2["paymentId"], p3["paymentId"]]}, PAYH), 201)
    a = expect("start basket auth (E2)", c.call("POST", f"/v1/signing-baskets/{b['basketId']}/authorisations", None, PAYH), 201)
    assert a["scaStatus"] == "STARTED"
    sca(a["_links"]["scaRedirect"]["href"], "--customer", num)
    s = expect("basket auth status", c.call("GET", a["_links"]["self"]["href"].split("//", 1)[1].split("/", 1)[1].join(["/", ""])), 200)
    assert s["scaStatus"] == "FINALISED", s
    for p in (p1, p2):
        st = expect("basket payment status", c.call("GET", f"{P}/{p['paymentId']}/status"), 200)
        assert st["transactionStatus"] == "ACTC", st
    expect("E2 unknown basket", c.call("POST", "/v1/signing-baskets/nope/authorisations", None, PAYH), 404)
    # consent, accounts, E8
    con = expect("create consent", c.call("POST", "/v1/consents", {"access": {"transactions": []}}, PAYH), 201)
    sca(con["_links"]["scaRedirect"]["href"], "--customer", num)
    H = dict(PAYH, **{"Consent-ID": con["consentId"]})
    accs = expect("account list", c.call("GET", "/v1/accounts", None, H), 200)["accounts"]
    assert accs and accs[0]["resourceId"] == acc["id"], accs
    lst = expect("transactions list", c.call("GET", f"/v1/accounts/{acc['id']}/transactions", None, H), 200)
    tid = lst["transactions"]["booked"][0]["transactionId"]
    d = expect("transaction details (E8)", c.call("GET", f"/v1/accounts/{acc['id']}/transactions/{tid}", None, H), 200)
    assert "transactionsDetails" in d, d
    noip = {k: v for k, v in H.items() if k != "PSU-IP-Address"}
    for i in range(4):
        expect(f"E8 without IP #{i+1}", c.call("GET", f"/v1/accounts/{acc['id']}/transactions/{tid}", None, noip), 200)
    expect("E8 without IP #5", c.call("GET", f"/v1/accounts/{acc['id']}/transactions/{tid}", None, noip), 429)
    # card account + agreements
    card = expect("create card account", c.call("POST", "/v1/sandbox/card-accounts", {"customerNumber": num}), 201)["cardAccount"]
    ctx = {"cardTransactionId": "ct1", "terminalId": "T1", "bookingDate": yday, "transactionDate": yday,
           "transactionAmount": {"currency": "NOK", "amount": "100"}, "originalAmount": {"currency": "NOK", "amount": "100"},
           "merchantCategoryCode": "5411", "cardAcceptorId": "A1", "maskedPan": card["maskedPan"], "transactionDetails": "Shop",
           "proprietaryBankTransactionCode": "PUR", "invoiced": "false", "markupFee": {"currency": "NOK", "amount": 0},
           "markupFeePercentage": "0", "cardAcceptorAddress": {"city": "Oslo", "country": "NO"}}
    expect("card transactions (E5)", c.call("POST", f"/v1/sandbox/card-accounts/{card['resourceId']}/transactions", [ctx]), 201)
    expect("card transactions (E4)", c.call("GET", f"/v1/sandbox/card-accounts/{card['resourceId']}/transactions?bookingStatus=booked"), 200)
    expect("card account (E10)", c.call("GET", f"/v1/sandbox/card-accounts/{card['resourceId']}"), 200)
    ag = expect("create agreement", c.call("POST", "/v1/sandbox/agreements", {"name": "Agreement", "owner": num}), 201)
    expect("create engagement (E6)", c.call("POST", f"/v1/sandbox/agreements/{ag['id']}/engagements",
               {"customer": num, "account": {"iban": acc["iban"]}, "roles": ["VIEW", "REGISTER"], "registerLimit": 1000, "approvalLimit": 0}), 201)
    agv = expect("agreement (E14)", c.call("GET", f"/v1/sandbox/agreements/{ag['id']}"), 200)
    eid = agv["engagements"][0]["id"]
    expect("engagement (E13)", c.call("GET", f"/v1/sandbox/agreements/{ag['id']}/engagements/{eid}"), 200)
    expect("balances (E15)", c.call("PUT", f"/v1/sandbox/accounts/{acc['id']}/balances",
                                    [{"balanceAmount": {"currency": "NOK", "amount": 500}, "balanceType": "closingBooked"}]), 204)
    expect("E11", c.call("GET", f"/v1/sandbox/accounts/{acc['id']}/transactions/{txs[0]['id']}"), 200)
    print("SMOKE OK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--outdir", default=os.path.join(HERE, "smoke-certs"))
    ap.add_argument("--start", action="store_true", help="start server.py on --port with the new CA and stop it afterwards")
    ap.add_argument("--make-ca-only", action="store_true")
    a = ap.parse_args()
    tpp, key = make_certs(a.outdir)
    if a.make_ca_only:
        print("CA in", a.outdir); return
    proc = None
    if a.start:
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "server.py"), "--port", str(a.port),
                                 "--trust", os.path.join(a.outdir, "ca.pem")])
        time.sleep(1.0)
    try:
        run(a.port, tpp, key)
    finally:
        if proc:
            proc.terminate(); proc.wait()


if __name__ == "__main__":
    main()
