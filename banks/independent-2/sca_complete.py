"""Complete an SCA the way this bank's PSU does: open the scaRedirect page, read the code
shown by the (sandbox) code device, and submit customer number + code.

    python sca_complete.py <scaRedirect URL> <customerNumber> [--deny]

Prints the final scaStatus (FINALISED or FAILED) and exits 0 when FINALISED.
The URL is the `_links.scaRedirect.href` of a payment creation (with PSU-Context), of a
basket/payment/consent authorisation start, or of a 401 answer.
"""
import re
import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def complete(url, customer_number, deny=False):
    opener = urllib.request.build_opener(NoRedirect)
    with opener.open(url, timeout=30) as r:
        page = r.read().decode()
    otp = re.search(r'<output id="otp">(\d+)</output>', page).group(1)
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    action = re.search(r'<form method="post" action="([^"]+)"', page).group(1)
    parts = urllib.parse.urlsplit(url)
    post_url = f"{parts.scheme}://{parts.netloc}{action}"
    form = urllib.parse.urlencode({"token": token, "customerNumber": customer_number, "otp": otp,
                                   "action": "deny" if deny else "approve"}).encode()
    req = urllib.request.Request(post_url, data=form, method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with opener.open(req, timeout=30) as r:
            hdrs = r.headers
    except urllib.error.HTTPError as e:
        hdrs = e.headers
    return hdrs.get("X-SCA-Status", "FAILED"), hdrs.get("Location")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--deny"]
    if len(args) != 2:
        sys.exit(__doc__)
    status, loc = complete(args[0], args[1], "--deny" in sys.argv)
    print(status, loc or "")
    sys.exit(0 if status == "FINALISED" else 1)
