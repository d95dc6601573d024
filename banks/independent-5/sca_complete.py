#!/usr/bin/env python3
"""Complete an SCA of this bank the way its PSU would (BankID-style redirect page).

Usage: python sca_complete.py <scaRedirect URL> [--customer-number N] [--otp CODE] [--deny]

  --customer-number  sandbox customerNumber of the PSU (spec 5.7); default: env SCA_CUSTOMER_NUMBER
                     or the first sandbox customer shown on ... (must be given when none is set)
  --otp              one-time code; the sandbox accepts 123456 (default); any other code fails the SCA
  --deny             the PSU presses "Deny": the SCA ends FAILED (payments RJCT, consent rejected)

Prints the resulting scaStatus (FINALISED or FAILED) and the TPP redirect Location.
Exit status: 0 when the bank took the answer (302), 2 on credentials refused / unknown SCA.
"""
import argparse
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--customer-number", default=os.environ.get("SCA_CUSTOMER_NUMBER"))
    ap.add_argument("--otp", default="123456")
    ap.add_argument("--deny", action="store_true")
    a = ap.parse_args()
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(a.url, timeout=10).read()  # the PSU opens the page first
    except urllib.error.HTTPError as e:
        print(f"SCA page not available: {e.code}", file=sys.stderr)
        return 2
    form = {"action": "deny" if a.deny else "approve", "otp": a.otp}
    if a.customer_number:
        form["customerNumber"] = a.customer_number
    elif not a.deny:
        print("--customer-number (or SCA_CUSTOMER_NUMBER) is required to approve", file=sys.stderr)
        return 2
    req = urllib.request.Request(a.url, data=urllib.parse.urlencode(form).encode(), method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        r = opener.open(req, timeout=10)
        print(f"unexpected answer {r.status}: {r.read()[:200]!r}", file=sys.stderr)
        return 2
    except urllib.error.HTTPError as e:
        if e.code == 302:
            loc = e.headers.get("Location", "")
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
            print(q.get("scaStatus", ["?"])[-1])
            print(loc)
            return 0
        print(f"refused {e.code}: {e.read()[:200].decode(errors='replace')}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
