"""Complete an SCA of the independent-4 bank the way its PSU would.

usage: python sca_complete.py <scaRedirect URL> [--customer NUMBER] [--deny]

--customer  the sandbox customerNumber used as the PSU identity (default: env SCA_CUSTOMER, else 10000001,
            the number the server gives the first sandbox customer created without one).
            Consents need an existing customer; payments and baskets accept any non-empty number.
--deny      refuse the authorisation (payment(s) become RJCT, consent rejected, scaStatus FAILED).
Prints the final redirect (or JSON) and exits 0 when the bank accepted the answer, 1 otherwise.
"""
import argparse, os, sys, urllib.parse, http.client


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--customer", default=os.environ.get("SCA_CUSTOMER", "10000001"))
    ap.add_argument("--deny", action="store_true")
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=10)
    path = u.path + ("?" + u.query if u.query else "")
    conn.request("GET", path)
    r = conn.getresponse(); r.read()
    if r.status != 200:
        print(f"SCA page answered {r.status}"); return 1
    form = urllib.parse.urlencode({"customerNumber": a.customer, "decision": "deny" if a.deny else "approve"})
    conn.request("POST", u.path, body=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    r = conn.getresponse(); body = r.read().decode()
    if r.status == 302:
        print(r.getheader("Location")); return 0
    print(r.status, body)
    return 0 if r.status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
