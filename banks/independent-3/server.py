"""Fjordbank PSD2 sandbox: WSGI application on a threaded wsgiref server.

python server.py --port 8080 --trust ca.pem [--trust ca2.pem] [--host 127.0.0.1] [--no-seed]
"""
import argparse
import gzip
import hashlib
import json
import re
import socketserver
import sys
import threading
import time
import traceback
import urllib.parse
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import ais
import payments as pay
import sandbox as sb
import sca
from common import ApiError, is_ip, is_uuid
from security import Trust, tpp_identity, verify_digest, verify_signature
from store import Store

BASE = ["x-request-id", "tpp-signature-certificate", "signature"]
TPP_FLOW = ["x-accept-fix", "x-request-id", "tpp-session-id", "tpp-redirect-uri", "tpp-signature-certificate",
            "signature"]
H_E1 = TPP_FLOW + ["psu-id", "psu-ip-address"]
H_PAY = TPP_FLOW + ["psu-ip-address"]               # PSU-ID or X-PSU-IDENTITY checked by the handler
H_PERIODIC = ["x-request-id", "tpp-redirect-uri", "tpp-signature-certificate", "signature"]
H_CONSENT = BASE + ["tpp-redirect-uri"]

PS = r"(?P<service>payments|periodic-payments)"
ROUTES = [
    # payments (E16, E17, E18) and the named status/cancel/authorisation operations
    ("POST", "/v1/payments/{product}", pay.create_payment, H_PAY, True),
    ("POST", "/v1/periodic-payments/{product}", pay.create_periodic, H_PERIODIC, True),
    ("GET", f"/v1/{PS}/{{product}}/{{paymentId}}", pay.get_payment, BASE, False),
    ("DELETE", f"/v1/{PS}/{{product}}/{{paymentId}}", pay.cancel_payment, BASE, False),
    ("GET", f"/v1/{PS}/{{product}}/{{paymentId}}/status", pay.get_status, BASE, False),
    ("POST", f"/v1/{PS}/{{product}}/{{paymentId}}/authorisations", pay.start_authorisation, BASE, False),
    ("GET", f"/v1/{PS}/{{product}}/{{paymentId}}/authorisations", pay.list_authorisations, BASE, False),
    ("GET", f"/v1/{PS}/{{product}}/{{paymentId}}/authorisations/{{authorisationId}}", pay.get_authorisation, BASE,
     False),
    # signing baskets (E1, E2)
    ("POST", "/v1/signing-baskets", pay.create_basket, H_E1, True),
    ("GET", "/v1/signing-baskets/{basketId}", pay.get_basket, BASE, False),
    ("DELETE", "/v1/signing-baskets/{basketId}", pay.delete_basket, BASE, False),
    ("GET", "/v1/signing-baskets/{basketId}/status", pay.get_basket_status, BASE, False),
    ("POST", "/v1/signing-baskets/{basketId}/authorisations", pay.start_basket_authorisation, BASE, False),
    ("GET", "/v1/signing-baskets/{basketId}/authorisations", pay.list_basket_authorisations, BASE, False),
    ("GET", "/v1/signing-baskets/{basketId}/authorisations/{authorisationId}", pay.get_basket_authorisation, BASE,
     False),
    # account information (house consent model) and E8
    ("POST", "/v1/consents", ais.create_consent, H_CONSENT, True),
    ("GET", "/v1/consents/{consentId}", ais.get_consent, BASE, False),
    ("DELETE", "/v1/consents/{consentId}", ais.delete_consent, BASE, False),
    ("GET", "/v1/consents/{consentId}/status", ais.get_consent_status, BASE, False),
    ("POST", "/v1/consents/{consentId}/authorisations", ais.start_consent_authorisation, BASE, False),
    ("GET", "/v1/consents/{consentId}/authorisations/{authorisationId}", ais.get_consent_authorisation, BASE, False),
    ("GET", "/v1/accounts", ais.list_accounts, BASE, False),
    ("GET", "/v1/accounts/{accountId}", ais.get_account, BASE, False),
    ("GET", "/v1/accounts/{accountId}/balances", ais.get_balances, BASE, False),
    ("GET", "/v1/accounts/{accountId}/transactions", ais.list_transactions, BASE, False),
    ("GET", "/v1/accounts/{accountId}/transactions/{transactionId}", ais.transaction_details, TPP_FLOW, False),
    # sandbox
    ("POST", "/v1/sandbox/customers", sb.create_customer, BASE, True),
    ("GET", "/v1/sandbox/customers", sb.list_customers, BASE, False),
    ("GET", "/v1/sandbox/customers/{mockCustomerId}", sb.get_customer, BASE, False),
    ("POST", "/v1/sandbox/accounts", sb.create_account, BASE, True),
    ("GET", "/v1/sandbox/accounts/{mockAccountId}", sb.get_account, BASE, False),
    ("DELETE", "/v1/sandbox/accounts/{mockAccountId}", sb.delete_account, BASE, False),
    ("PUT", "/v1/sandbox/accounts/{mockAccountId}/balances", sb.change_balance, BASE, False),
    ("POST", "/v1/sandbox/accounts/{mockAccountId}/balances", sb.change_balance, BASE, False),
    ("GET", "/v1/sandbox/accounts/{mockAccountId}/transactions", sb.list_transactions, BASE, False),
    ("POST", "/v1/sandbox/accounts/{mockAccountId}/transactions", sb.create_transactions, BASE, False),
    ("GET", "/v1/sandbox/accounts/{mockAccountId}/transactions/{mockTransactionId}", sb.get_transaction, BASE, False),
    ("POST", "/v1/sandbox/card-accounts", sb.create_card_account, BASE, True),
    ("GET", "/v1/sandbox/card-accounts/{mockCardAccountId}", sb.get_card_account, BASE, False),
    ("GET", "/v1/sandbox/card-accounts/{mockCardAccountId}/transactions", sb.list_card_transactions, BASE, False),
    ("POST", "/v1/sandbox/card-accounts/{mockCardAccountId}/transactions", sb.create_card_transactions, BASE, False),
    ("POST", "/v1/sandbox/agreements", sb.create_agreement, BASE, True),
    ("GET", "/v1/sandbox/agreements/{mockAgreementId}", sb.get_agreement, BASE, False),
    ("POST", "/v1/sandbox/agreements/{mockAgreementId}/engagements", sb.create_engagement, BASE, False),
    ("GET", "/v1/sandbox/agreements/{mockAgreementId}/engagements/{mockEngagementId}", sb.get_engagement, BASE, False),
    ("POST", "/v1/sandbox/batch-runs", pay.batch_run, BASE, False),
]


def _compile(tpl):
    return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", tpl) + "/?$")


COMPILED = [(m, _compile(t), h, req, idem) for m, t, h, req, idem in ROUTES]


class Ctx:
    def __init__(self, store, environ, params, headers, raw, query, trust):
        self.store, self.params, self.headers, self.raw, self.query = store, params, headers, raw, query
        self.method = environ["REQUEST_METHOD"].upper()
        host = headers.get("host") or f"{environ.get('SERVER_NAME')}:{environ.get('SERVER_PORT')}"
        self.base_url = f"http://{host}"
        self.fixes = {v.strip().lower() for v in (headers.get("x-accept-fix") or "").split(",") if v.strip()}
        self.tpp, self.cert, self._body = None, None, None

    @property
    def body(self):
        if self._body is None:
            if not self.raw.strip():
                raise ApiError(400, "FORMAT_ERROR", "a JSON request body is required")
            try:
                self._body = json.loads(self.raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise ApiError(400, "FORMAT_ERROR", f"request body is not valid JSON: {e}")
        return self._body

    def json_object(self, allow_empty=False):
        if allow_empty and not self.raw.strip():
            return {}
        b = self.body
        if not isinstance(b, dict):
            raise ApiError(400, "FORMAT_ERROR", "request body must be a JSON object")
        return b


def check_headers(h, required):
    missing = [x for x in required if not h.get(x)]
    if missing:
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "missing required header(s): " + ", ".join(missing),
                       path=missing[0])
    checks = [("psu-id", is_uuid, "PSU-ID must be a UUID"),
              ("psu-ip-address", is_ip, "PSU-IP-Address must be an IPv4 or IPv6 address"),
              ("x-psu-identity", lambda v: re.fullmatch(r"\d{11}", v), "X-PSU-IDENTITY must be 11 digits"),
              ("psu-device-id", is_uuid, "PSU-Device-ID must be a UUID"),
              ("psu-ip-port", lambda v: v.isdigit() and int(v) < 65536, "PSU-IP-Port must be a port number"),
              ("psu-http-method", lambda v: v in ("GET", "POST", "PUT", "PATCH", "DELETE"),
               "PSU-HTTP-Method must be GET, POST, PUT, PATCH or DELETE"),
              ("tpp-redirect-preferred", lambda v: v.lower() in ("true", "false"),
               "TPP-Redirect-Preferred must be true or false"),
              ("tpp-redirect-uri", lambda v: urllib.parse.urlsplit(v).scheme in ("http", "https")
               and urllib.parse.urlsplit(v).netloc, "TPP-Redirect-URI must be an absolute http(s) URI")]
    for name, ok, msg in checks:
        if h.get(name) is not None and not ok(h[name].strip()):
            raise ApiError(400, "FORMAT_ERROR", msg, path=name)


class App:
    def __init__(self, trust, store):
        self.trust, self.store = trust, store

    def __call__(self, environ, start_response):
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = environ["CONTENT_TYPE"]
        if environ.get("CONTENT_LENGTH"):
            headers["content-length"] = environ["CONTENT_LENGTH"]
        try:
            n = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            n = 0
        raw = environ["wsgi.input"].read(n) if n > 0 else b""
        path = environ.get("PATH_INFO", "")
        # wsgiref decodes PATH_INFO as latin-1; restore UTF-8 for signature computation
        try:
            path = path.encode("latin-1").decode("utf-8")
        except UnicodeError:
            pass
        qs = environ.get("QUERY_STRING", "")
        method = environ["REQUEST_METHOD"].upper()
        extra = {}
        try:
            if path.startswith("/sca/"):
                aid = path[5:].strip("/")
                if method == "GET":
                    st, ct, body, extra = sca.page(self.store, aid)
                else:
                    st, ct, body, extra = sca.submit(self.store, aid, headers.get("content-type"), raw,
                                                     headers.get("accept"))
                return self._send(start_response, st, body.encode(), ct, extra, headers)
            status, body, extra = self.dispatch(environ, method, path, qs, headers, raw)
        except ApiError as e:
            status, body, extra = e.status, e.body(), e.headers
        except Exception:
            traceback.print_exc()
            status, body = 500, ApiError(500, "SYSTEM_ERROR").body()
            body.pop("message", None)
        data = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        return self._send(start_response, status, data, "application/json; charset=utf-8", extra, headers)

    def _send(self, start_response, status, data, ctype, extra, headers):
        from http import HTTPStatus
        hdrs = [("Content-Language", "en")]
        if data:
            hdrs.append(("Content-Type", ctype))
            if "gzip" in (headers.get("accept-encoding") or "").lower() and len(data) > 512:
                data = gzip.compress(data)
                hdrs.append(("Content-Encoding", "gzip"))
        if headers.get("x-request-id"):
            hdrs.append(("X-Request-ID", headers["x-request-id"]))
        hdrs += [(k, v) for k, v in (extra or {}).items()]
        hdrs.append(("Content-Length", str(len(data))))
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "Status"
        start_response(f"{status} {phrase}", hdrs)
        return [data]

    def dispatch(self, environ, method, path, qs, headers, raw):
        allowed, match = [], None
        for m, rx, handler, required, idem in COMPILED:
            mm = rx.match(path)
            if mm:
                allowed.append(m)
                if m == method:
                    match = (mm.groupdict(), handler, required, idem)
                    break
        if not allowed:
            raise ApiError(404, "RESOURCE_UNKNOWN", f"no operation at {path}")
        if not match:
            raise ApiError(405, "METHOD_NOT_ALLOWED", f"{method} is not allowed on {path}",
                           headers={"Allow": ", ".join(sorted(set(allowed)))})
        params, handler, required, idem = match
        accept = headers.get("accept")
        if accept and not any(t in accept.lower() for t in ("application/json", "*/*", "application/*", "+json")):
            raise ApiError(406, "NOT_ACCEPTABLE", "only application/json responses are offered")
        req = list(required)
        if raw.strip() and "digest" not in req:
            req.append("digest")  # every request that carries a body includes Digest (part 5.4)
        check_headers(headers, req)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(qs, keep_blank_values=True).items()}
        ctx = Ctx(self.store, environ, params, headers, raw, query, self.trust)
        ctx.cert = self.trust.load_tpp_cert(headers["tpp-signature-certificate"])
        verify_signature(headers, method, path, qs, ctx.cert)
        verify_digest(headers, raw)
        ctx.tpp = tpp_identity(ctx.cert)
        if idem:
            key = (ctx.tpp, headers["x-request-id"], method, path)
            h = hashlib.sha256(raw).hexdigest()
            with self.store.lock:
                prev = self.store.idempotency.get(key)
            if prev:
                if prev[0] != h:
                    raise ApiError(409, "CONFLICT", "X-Request-ID was already used for a different request")
                return prev[1], prev[2], dict(prev[3], **{"X-Idempotent-Replay": "true"})
        res = handler(ctx)
        status, body = res[0], res[1]
        extra = res[2] if len(res) > 2 else {}
        if idem and status < 300:
            with self.store.lock:
                self.store.idempotency[key] = (h, status, body, extra)
        return status, body, extra


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))


BATCH_HOURS_UTC = (2, 6, 10, 14, 18)  # five simulated batch runs a day


def batch_scheduler(store):
    done = set()
    while True:
        t = time.gmtime()
        key = (t.tm_yday, t.tm_hour)
        if t.tm_hour in BATCH_HOURS_UTC and key not in done:
            done.add(key)
            pay.run_batch(store)
        time.sleep(30)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fjordbank PSD2 sandbox")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--trust", action="append", required=True, help="PEM file of a trusted TPP CA (repeatable)")
    ap.add_argument("--no-seed", action="store_true", help="start without the demo customers and accounts")
    a = ap.parse_args(argv)
    store = Store()
    if not a.no_seed:
        sb.seed(store)
    threading.Thread(target=batch_scheduler, args=(store,), daemon=True).start()
    httpd = make_server(a.host, a.port, App(Trust(a.trust), store), server_class=ThreadingWSGIServer,
                        handler_class=QuietHandler)
    print(f"Fjordbank sandbox listening on http://{a.host}:{a.port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
