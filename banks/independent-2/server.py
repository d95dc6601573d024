"""Independent-2 Bank: strict PSD2 gateway (http.server, state in memory).

Start:  python server.py --port P --trust CA.pem [--trust CA2.pem] [--public-url URL]
"""
import argparse
import gzip
import json
import re
import sys
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ais
import payments
import sandbox
import sca
import security
from common import ApiError
from store import LOCK, world, remember_request_id
from validate import parse_body

MAX_BODY = 256 * 1024
SIG = ("x-request-id", "tpp-signature-certificate", "signature")
BODY = SIG + ("digest",)
PIS = ("x-accept-fix", "x-request-id", "tpp-session-id", "tpp-redirect-uri", "digest", "tpp-signature-certificate",
       "signature", "psu-id", "psu-ip-address")
PIS_DELETE = SIG + ("psu-id",)
AIS = ("x-accept-fix", "x-request-id", "tpp-session-id", "tpp-redirect-uri", "tpp-signature-certificate",
       "signature", "consent-id")
CONSENT = ("x-accept-fix", "x-request-id", "tpp-session-id", "tpp-redirect-uri", "digest",
           "tpp-signature-certificate", "signature", "psu-id", "psu-ip-address")
CONSENT_READ = SIG + ("tpp-session-id",)
NEEDS_AMOUNT_FIX = {PIS, AIS, CONSENT}

SERVICE = r"(?P<service>payments|periodic-payments)"
ID = r"[A-Za-z0-9._~-]{1,128}"


def P(pattern):
    return re.compile("^" + pattern.replace("{", "(?P<").replace("}", ">" + ID + ")") + "$")


# (method, path regex, handler, required headers, json body expected)
ROUTES = [
    ("POST", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})$"), payments.create, PIS, True),
    ("GET", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})/(?P<paymentId>{ID})$"), payments.get, SIG, False),
    ("DELETE", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})/(?P<paymentId>{ID})$"), payments.cancel, PIS_DELETE, False),
    ("GET", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})/(?P<paymentId>{ID})/status$"), payments.status, SIG, False),
    ("POST", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})/(?P<paymentId>{ID})/authorisations$"), payments.start_auth, PIS, None),
    ("GET", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})/(?P<paymentId>{ID})/authorisations$"), payments.list_auths, SIG, False),
    ("GET", re.compile(rf"^/v1/{SERVICE}/(?P<product>{ID})/(?P<paymentId>{ID})/authorisations/(?P<authorisationId>{ID})$"), payments.get_auth, SIG, False),
    ("POST", P("/v1/signing-baskets"), payments.create_basket, PIS, True),
    ("GET", P("/v1/signing-baskets/{basketId}"), payments.get_basket, SIG, False),
    ("DELETE", P("/v1/signing-baskets/{basketId}"), payments.delete_basket, PIS_DELETE, False),
    ("GET", P("/v1/signing-baskets/{basketId}/status"), payments.get_basket_status, SIG, False),
    ("POST", P("/v1/signing-baskets/{basketId}/authorisations"), payments.start_basket_auth, PIS, None),
    ("GET", P("/v1/signing-baskets/{basketId}/authorisations"), payments.list_basket_auths, SIG, False),
    ("GET", P("/v1/signing-baskets/{basketId}/authorisations/{authorisationId}"), payments.get_basket_auth, SIG, False),
    ("POST", P("/v1/consents"), ais.create_consent, CONSENT, True),
    ("GET", P("/v1/consents/{consentId}"), ais.get_consent, CONSENT_READ, False),
    ("DELETE", P("/v1/consents/{consentId}"), ais.delete_consent, CONSENT_READ, False),
    ("GET", P("/v1/consents/{consentId}/status"), ais.consent_status, CONSENT_READ, False),
    ("POST", P("/v1/consents/{consentId}/authorisations"), ais.start_consent_auth, CONSENT, None),
    ("GET", P("/v1/consents/{consentId}/authorisations"), ais.list_consent_auths, CONSENT_READ, False),
    ("GET", P("/v1/consents/{consentId}/authorisations/{authorisationId}"), ais.get_consent_auth, CONSENT_READ, False),
    ("GET", P("/v1/accounts"), ais.list_accounts, AIS, False),
    ("GET", P("/v1/accounts/{id}"), ais.get_account, AIS, False),
    ("GET", P("/v1/accounts/{id}/balances"), ais.balances, AIS, False),
    ("GET", P("/v1/accounts/{id}/transactions"), ais.transactions, AIS, False),
    ("GET", P("/v1/accounts/{id}/transactions/{transactionId}"), ais.transaction_details, AIS, False),
    ("POST", P("/v1/sandbox/customers"), sandbox.create_customer, BODY, True),
    ("GET", P("/v1/sandbox/customers"), sandbox.list_customers, SIG, False),
    ("GET", P("/v1/sandbox/customers/{customerId}"), sandbox.get_customer, SIG, False),
    ("POST", P("/v1/sandbox/accounts"), sandbox.create_account, BODY, True),
    ("GET", P("/v1/sandbox/accounts/{mockAccountId}"), sandbox.get_account, SIG, False),
    ("DELETE", P("/v1/sandbox/accounts/{mockAccountId}"), sandbox.delete_account, SIG, False),
    ("PUT", P("/v1/sandbox/accounts/{mockAccountId}/balances"), sandbox.change_balance, BODY, True),
    ("GET", P("/v1/sandbox/accounts/{mockAccountId}/transactions"), sandbox.list_transactions, SIG, False),
    ("POST", P("/v1/sandbox/accounts/{mockAccountId}/transactions"), sandbox.create_transactions, BODY, True),
    ("GET", P("/v1/sandbox/accounts/{mockAccountId}/transactions/{mockTransactionId}"), sandbox.get_transaction, SIG, False),
    ("POST", P("/v1/sandbox/card-accounts"), sandbox.create_card_account, BODY, True),
    ("GET", P("/v1/sandbox/card-accounts/{mockCardAccountId}"), sandbox.get_card_account, SIG, False),
    ("GET", P("/v1/sandbox/card-accounts/{mockCardAccountId}/transactions"), sandbox.list_card_transactions, SIG, False),
    ("POST", P("/v1/sandbox/card-accounts/{mockCardAccountId}/transactions"), sandbox.create_card_transactions, BODY, True),
    ("POST", P("/v1/sandbox/agreements"), sandbox.create_agreement, BODY, True),
    ("GET", P("/v1/sandbox/agreements/{mockAgreementId}"), sandbox.get_agreement, SIG, False),
    ("POST", P("/v1/sandbox/agreements/{mockAgreementId}/engagements"), sandbox.create_engagement, BODY, True),
    ("GET", P("/v1/sandbox/agreements/{mockAgreementId}/engagements/{mockEngagementId}"), sandbox.get_engagement, BODY, False),
    ("POST", P("/v1/sandbox/batch-runs"), sandbox.run_batch, BODY, None),
]
SANDBOX_PREFIX = "/v1/sandbox/"


class Ctx:
    pass


def _wants_gzip(v):
    if not v:
        return False
    for part in v.split(","):
        bits = [b.strip() for b in part.split(";")]
        if bits[0].lower() == "gzip":
            q = next((b[2:] for b in bits[1:] if b.lower().startswith("q=")), "1")
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


def _accept_ok(h):
    acc = h.get("accept")
    if acc:
        types = [t.split(";")[0].strip().lower() for t in acc.split(",")]
        if not any(t in ("application/json", "application/*", "*/*") for t in types):
            return False
    ch = h.get("accept-charset")
    if ch:
        sets = [t.split(";")[0].strip().lower() for t in ch.split(",")]
        if not any(t in ("utf-8", "*") for t in sets):
            return False
    return True


class Handler(BaseHTTPRequestHandler):
    server_version = "Independent2Bank/1.0"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    trust = None

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))

    # -------------------------------------------------------------- plumbing
    def _send(self, status, body, headers=None, ctype="application/json; charset=utf-8"):
        data = b""
        if body is not None:
            data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Language", "en")
            if data and _wants_gzip(self.headers.get("Accept-Encoding")):
                data = gzip.compress(data)
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Vary", "Accept-Encoding")
        self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        rid = self.headers.get("X-Request-ID") if self.headers else None
        if rid and security.UUID_OK(rid):
            self.send_header("X-Request-ID", rid)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, e):
        hdrs = dict(e.headers)
        self._send(e.status, e.body(), hdrs)

    def _read_body(self):
        if self.headers.get("Transfer-Encoding"):
            raise ApiError(411, "FORMAT_ERROR", "Transfer-Encoding is not accepted; send Content-Length")
        cl = self.headers.get_all("Content-Length") or []
        if len(cl) > 1:
            raise ApiError(400, "FORMAT_ERROR", "Content-Length repeated")
        if not cl:
            return b""
        if not re.fullmatch(r"\d{1,9}", cl[0].strip()):
            raise ApiError(400, "FORMAT_ERROR", "bad Content-Length")
        n = int(cl[0])
        if n > MAX_BODY:
            raise ApiError(413, "FORMAT_ERROR", "request body too large")
        return self.rfile.read(n)

    def _headers(self):
        h = {}
        for k in self.headers.keys():
            lk = k.lower()
            vals = self.headers.get_all(k)
            if lk in h or len(vals) > 1:
                raise ApiError(400, "FORMAT_ERROR", f"header {k} repeated")
            h[lk] = vals[0].strip()
        return h

    def _dispatch(self):
        try:
            self.close_connection = True
            url = urllib.parse.urlsplit(self.path)
            path = url.path
            try:
                qs = urllib.parse.parse_qs(url.query, keep_blank_values=True, strict_parsing=bool(url.query))
            except ValueError:
                raise ApiError(400, "FORMAT_ERROR", "malformed query string")
            for k, v in qs.items():
                if len(v) > 1:
                    raise ApiError(400, "FORMAT_ERROR", f"query parameter {k} repeated")
            query = {k: v[0] for k, v in qs.items()}
            raw = self._read_body()
            if path.startswith("/sca/"):
                return self._sca(path, query, raw)
            found, allowed = None, []
            for method, rx, fn, req, js in ROUTES:
                m = rx.match(path)
                if m:
                    allowed.append(method)
                    if method == self.command:
                        found = (fn, req, js, m.groupdict())
                        break
            if not found:
                if allowed:
                    raise ApiError(405, "BAD_REQUEST", f"method {self.command} not allowed",
                                   headers={"Allow": ", ".join(sorted(set(allowed)))})
                raise ApiError(404, "RESOURCE_UNKNOWN", "no such resource")
            fn, req, js, params = found
            h = self._headers()
            if not _accept_ok(h):
                raise ApiError(406, "FORMAT_ERROR", "only application/json in UTF-8 is produced")
            required = set(req)
            if self.command in ("POST", "PUT"):
                required.add("digest")
            for name in req + (("digest",) if "digest" in required and "digest" not in req else ()):
                if name not in h or h[name] == "":
                    raise ApiError(400, "HTTP_HEADER_REQUIRED", f"header {name} is required")
            security.check_header_formats(h)
            if req in NEEDS_AMOUNT_FIX and "amount-as-string" not in security.fixes(h):
                raise ApiError(400, "FORMAT_ERROR", "x-accept-fix must include amount-as-string")
            ident = security.verify_request(self.trust, self.command, self.path, h, raw)
            if not remember_request_id(ident["tpp"], h["x-request-id"]):
                raise ApiError(409, "CONFLICT", "X-Request-ID was already used")
            if path.startswith(SANDBOX_PREFIX) and "psu-id" in h and not security.UUID_OK(h["psu-id"]):
                raise ApiError(400, "FORMAT_ERROR", "PSU-ID must be a UUID")
            body = None
            if raw:
                if js is False and self.command in ("GET", "DELETE"):
                    if not (fn is sandbox.get_engagement and raw in (b"{}",)):
                        raise ApiError(400, "FORMAT_ERROR", f"{self.command} takes no request body")
                ct = h.get("content-type", "")
                if ct.split(";")[0].strip().lower() != "application/json":
                    raise ApiError(415, "FORMAT_ERROR", "Content-Type must be application/json")
                if "charset" in ct.lower() and not re.search(r"charset=\"?utf-8\"?", ct, re.I):
                    raise ApiError(415, "FORMAT_ERROR", "charset must be utf-8")
                if js is not None:
                    body = parse_body(raw)
            elif js is True:
                raise ApiError(400, "FORMAT_ERROR", "request body is required")
            ctx = Ctx()
            ctx.headers, ctx.query, ctx.body, ctx.raw_body = h, query, body, raw
            ctx.world, ctx.ident, ctx.fixes = world(ident["tpp"]), ident, security.fixes(h)
            ctx.endpoint = fn.__name__
            with LOCK:
                payments.scheduled_batches(ctx.world)
            status, out, extra = fn(ctx, **params)
            self._send(status, out, extra)
        except ApiError as e:
            self._error(e)
        except Exception:
            traceback.print_exc()
            self._error(ApiError(500, "SYSTEM_ERROR"))

    def _sca(self, path, query, raw):
        m = re.fullmatch(r"/sca/([0-9a-f-]{36})", path)
        if not m:
            raise ApiError(404, "RESOURCE_UNKNOWN", "no such resource")
        if self.command == "GET":
            st, ct, body, hd = sca.page_get(m.group(1), query)
        elif self.command == "POST":
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/x-www-form-urlencoded":
                raise ApiError(415, "FORMAT_ERROR", "form must be application/x-www-form-urlencoded")
            try:
                form = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode("utf-8"), keep_blank_values=True).items()}
            except UnicodeDecodeError:
                raise ApiError(400, "FORMAT_ERROR", "form is not UTF-8")
            st, ct, body, hd = sca.page_post(m.group(1), form)
        else:
            raise ApiError(405, "BAD_REQUEST", "method not allowed", headers={"Allow": "GET, POST"})
        hd = dict(hd)
        hd["Content-Security-Policy"] = "default-src 'none'; form-action 'self'"
        hd["X-Frame-Options"] = "DENY"
        self._send(st, body, hd, ctype="text/html; charset=utf-8")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _dispatch


def main():
    ap = argparse.ArgumentParser(description="Independent-2 Bank PSD2 gateway")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--trust", action="append", required=True, help="PEM file of a trusted TPP CA (repeatable)")
    ap.add_argument("--public-url", help="base URL used in scaRedirect links (default http://localhost:PORT)")
    a = ap.parse_args()
    Handler.trust = security.Trust(a.trust)
    sca.PUBLIC_URL["base"] = (a.public_url or f"http://localhost:{a.port}").rstrip("/")
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    print(f"Independent-2 Bank listening on {a.host}:{a.port}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
