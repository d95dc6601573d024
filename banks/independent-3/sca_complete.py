"""Complete an SCA the way a Fjordbank sandbox PSU does (BankID simulated by the customerNumber).

Usage (from any directory):
    python sca_complete.py <scaRedirect URL> [--customer-number 31125461118] [--reject]

It POSTs {"customerNumber": ..., "action": "approve"|"reject"} as JSON to the scaRedirect URL (the same
page a browser PSU sees) and prints the JSON answer: {"authorisationId", "scaStatus", "redirectUri"}.
Exit code 0 when the SCA ends FINALISED (or FAILED after --reject), 1 otherwise.
The default customerNumber is the seeded demo PSU Ola Nordmann.
"""
import argparse
import json
import sys
import urllib.error
import urllib.request

DEFAULT_CUSTOMER = "31125461118"


def complete(url, customer_number=DEFAULT_CUSTOMER, approve=True):
    data = json.dumps({"customerNumber": customer_number, "action": "approve" if approve else "reject"}).encode()
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url", help="the scaRedirect href returned by the API")
    ap.add_argument("--customer-number", default=DEFAULT_CUSTOMER)
    ap.add_argument("--reject", action="store_true")
    a = ap.parse_args()
    status, body = complete(a.url, a.customer_number, not a.reject)
    print(json.dumps(body))
    want = "FAILED" if a.reject else "FINALISED"
    sys.exit(0 if status == 200 and body.get("scaStatus") == want else 1)


if __name__ == "__main__":
    main()
