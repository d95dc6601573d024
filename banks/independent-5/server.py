#!/usr/bin/env python3
"""Independent bank #5: PSD2-style payment initiation, signing basket and sandbox API.

Standard library http.server + own routing layer, `cryptography` for certificates.
State lives in memory. See README.md and CHOICES.md.
"""
import argparse
import base64
import datetime as dt
import hashlib
import html
import ipaddress
import json
import re
import threading
import urllib.parse
import uuid
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from zoneinfo import ZoneInfo

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

OSLO = ZoneInfo("Europe/Oslo")
SYSTEM = "NORDBANK-PSD2-GW"
LOCK = threading.RLock()
TRUST = []  # list of x509.Certificate
SCA_OTP = "123456"
SCA_TTL_SECONDS = 900

NDCT = "norwegian-domestic-credit-transfers"
NCBCT = "norwegian-cross-border-credit-transfers"
CURRENCIES = set("""AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYR BZD
CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GGP GHS GIP GMD GNF GTQ GYD
HKD HNL HRK HTG HUF IDR ILS IMP INR IQD IRR ISK JEP JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD
MAD MDL MGA MKD MMK MNT MOP MRO MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR
RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLL SOS SPL SRD STD SVC SYP SZL THB TJS TMT TND TOP TRY TTD TVD TWD TZS
UAH UGX USD UYU UZS VEF VND VUV WST XAF XCD XDR XOF XPF YER ZAR ZMW ZWD""".split())
COUNTRIES = set("""AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP
KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW
SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW""".split())
ZERO_DEC = set("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF".split())
THREE_DEC = set("BHD IQD JOD KWD LYD OMR TND".split())
PURPOSE = set("INVS SALA IDCP CASH CORT INTC PENS SSBE SUPP TAXS TREA VATX LOAN OTHR".split())
FREQ = set("Daily Weekly EveryTwoWeeks Monthly EveryTwoMonths Quarterly SemiAnnual Annual MonthlyVariable".split())
REGCODES = set("14 26 29 31 35 38 41 43 45 51 52 53 71 79 81 82".split())
ROLES = set("OWNER DISPOSAL VIEW REGISTER APPROVE INTERNAL_TRANSFER SALARY".split())
CASH_TYPES = set("CACC CASH CHAR CISH COMM CPAC LLSV LOAN MGLD MOMA NREX ODFT ONDP OTHR SACC SLRY SVGS TAXE TRAN TRAS".split())
ACCEPT_FIX = {"amount-as-string", "cash-account-type-iso", "longer-name",
              "cardaccount-switch-originalamount-and-transactionamount"}
BIC_RE = re.compile(r"^[A-Z]{6,6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3,3}){0,1}$")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# ---------------------------------------------------------------- state
DB = {
    "payments": {}, "baskets": {}, "scas": {}, "consents": {}, "customers": {}, "accounts": {},
    "card_accounts": {}, "agreements": {}, "request_ids": set(), "e8_calls": {},
}


class ApiError(Exception):
    def __init__(self, status, code, message=None, extra=None):
        super().__init__(message or code)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def today_oslo():
    return dt.datetime.now(OSLO).date()


def now_iso():
    return dt.datetime.now(OSLO).isoformat(timespec="seconds")


def new_id():
    return str(uuid.uuid4())


def link(href, *verbs):
    return {"href": href, "verbs": list(verbs)}


# ---------------------------------------------------------------- validation helpers
def req_obj(body, name, path):
    v = body.get(name)
    if not isinstance(v, dict):
        raise ApiError(400, "FORMAT_ERROR", f"{path}{name} is required and must be an object")
    return v


def opt_str(body, name, path, maxlen=None, minlen=0, required=False):
    v = body.get(name)
    if v is None:
        if required:
            raise ApiError(400, "FORMAT_ERROR", f"{path}{name} is required")
        return None
    if not isinstance(v, str):
        raise ApiError(400, "FORMAT_ERROR", f"{path}{name} must be a string")
    if len(v) < minlen or (maxlen is not None and len(v) > maxlen):
        raise ApiError(400, "FORMAT_ERROR", f"{path}{name} length must be {minlen}..{maxlen}")
    return v


def check_currency(v, path):
    if not isinstance(v, str) or v not in CURRENCIES:
        raise ApiError(400, "FORMAT_ERROR", f"{path} is not a supported ISO 4217 currency")
    return v


def check_country(v, path):
    if not isinstance(v, str) or v not in COUNTRIES:
        raise ApiError(400, "FORMAT_ERROR", f"{path} is not a supported ISO 3166 country")
    return v


def minor_units(ccy):
    return 0 if ccy in ZERO_DEC else 3 if ccy in THREE_DEC else 2


def check_amount(obj, path):
    if not isinstance(obj, dict):
        raise ApiError(400, "FORMAT_ERROR", f"{path} is required")
    ccy = check_currency(obj.get("currency"), path + ".currency")
    amt = obj.get("amount")
    if not isinstance(amt, str):
        raise ApiError(400, "FORMAT_ERROR", f"{path}.amount must be a string")
    n = minor_units(ccy)
    pat = r"^\d{1,13}$" if n == 0 else r"^\d{1,13}\.\d{%d}$" % n
    if not re.match(pat, amt):
        raise ApiError(400, "FORMAT_ERROR", f"{path}.amount must have exactly {n} fraction digits for {ccy}")
    d = Decimal(amt)
    if d <= 0:
        raise ApiError(400, "FORMAT_ERROR", f"{path}.amount must be positive")
    return d, ccy


def parse_date(v, path, required=False):
    if v is None:
        if required:
            raise ApiError(400, "FORMAT_ERROR", f"{path} is required")
        return None
    if not isinstance(v, str) or not DATE_RE.match(v):
        raise ApiError(400, "FORMAT_ERROR", f"{path} must be an ISO 8601 date (YYYY-MM-DD)")
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise ApiError(400, "FORMAT_ERROR", f"{path} is not a valid calendar date")


def check_int32(v, path):
    if not isinstance(v, int) or isinstance(v, bool) or not (-2**31 <= v < 2**31):
        raise ApiError(400, "FORMAT_ERROR", f"{path} must be an int32")
    return v


def check_known(body, allowed, path):
    for k in body:
        if k not in allowed:
            raise ApiError(400, "FORMAT_ERROR", f"{path}{k} is not a known field")


def check_remittance_item(it, path):
    if not isinstance(it, dict):
        raise ApiError(400, "FORMAT_ERROR", f"{path} must be an object")
    opt_str(it, "reference", path + ".", 35, 1, required=True)
    opt_str(it, "referenceType", path + ".", 35, 1)
    opt_str(it, "referenceIssuer", path + ".", 35, 1)
    ref = it["reference"]
    rtype = (it.get("referenceType") or "").upper()
    if rtype in ("KID", "OCR"):
        if not ref.isdigit() or not (2 <= len(ref) <= 25) or not kid_valid(ref):
            raise ApiError(400, "KID_INVALID", f"{path}.reference is not a valid KID")


def kid_valid(ref):
    digits = [int(c) for c in ref]
    body, check = digits[:-1], ref[-1]
    # MOD10 (Luhn)
    s = 0
    for i, dgt in enumerate(reversed(body)):
        x = dgt * (2 if i % 2 == 0 else 1)
        s += x - 9 if x > 9 else x
    if str((10 - s % 10) % 10) == check:
        return True
    # MOD11
    w = [2, 3, 4, 5, 6, 7]
    s = sum(dgt * w[i % 6] for i, dgt in enumerate(reversed(body)))
    r = 11 - s % 11
    c = "0" if r == 11 else "-" if r == 10 else str(r)
    return c == check


def check_account_ref(obj, path, allow_other=False, allow_iban=True, need_one=True, exactly_one=False):
    if not isinstance(obj, dict):
        raise ApiError(400, "FORMAT_ERROR", f"{path} is required")
    allowed = {"bban", "currency"} | ({"iban"} if allow_iban else set()) | ({"other"} if allow_other else set())
    check_known(obj, allowed, path + ".")
    opt_str(obj, "bban", path + ".", 30, 1)
    if allow_iban:
        opt_str(obj, "iban", path + ".", 34, 1)
    check_currency(obj.get("currency"), path + ".currency")
    present = [k for k in ("bban", "iban", "other") if obj.get(k) is not None]
    if allow_other and obj.get("other") is not None:
        o = obj["other"]
        if not isinstance(o, dict):
            raise ApiError(400, "FORMAT_ERROR", f"{path}.other must be an object")
        opt_str(o, "identification", path + ".other.", None, 1, required=True)
        if o.get("schemeNameProprietary") != "creditCardAccount":
            raise ApiError(400, "FORMAT_ERROR", f"{path}.other.schemeNameProprietary must be creditCardAccount")
    if need_one and not present:
        raise ApiError(400, "FORMAT_ERROR", f"{path} needs an account identifier")
    if exactly_one and len(present) != 1:
        raise ApiError(400, "FORMAT_ERROR", f"{path} needs exactly one of bban or other")


def check_address(obj, path, required):
    if obj is None:
        if required:
            raise ApiError(400, "FORMAT_ERROR", f"{path} is required")
        return
    if not isinstance(obj, dict):
        raise ApiError(400, "FORMAT_ERROR", f"{path} must be an object")
    check_known(obj, {"street", "buildingNumber", "postalCode", "city", "country"}, path + ".")
    opt_str(obj, "street", path + ".", 70)
    for f in ("buildingNumber", "postalCode", "city"):
        opt_str(obj, f, path + ".")
    check_country(obj.get("country"), path + ".country")


def check_exec_date(v, path):
    d = parse_date(v, path)
    if d is None:
        return None
    t = today_oslo()
    if d < t or d > t + dt.timedelta(days=365):
        raise ApiError(400, "EXECUTION_DATE_INVALID", f"{path} must be between today (Europe/Oslo) and one year ahead")
    return d


COMMON_PAY = {"instructedAmount", "creditorName", "creditorAgent", "creditorAccount", "creditorAddress",
              "debtorAccount", "ultimateDebtor", "remittanceInformationUnstructured", "purposeCode",
              "endToEndIdentification"}


def validate_payment(kind, b):
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be a JSON object")
    if kind == "ndct":
        allowed = COMMON_PAY | {"remittanceInformationStructured", "remittanceInformationStructuredArray",
                                "requestedExecutionDate"}
    elif kind == "ncbct":
        allowed = COMMON_PAY | {"requestedExecutionDate", "regulatoryReportingCode", "regulatoryReportingInformation"}
        allowed -= {"ultimateDebtor"}
    else:
        allowed = COMMON_PAY | {"startDate", "endDate", "executionRule", "frequency", "monthsOfExecution",
                                "dayOfExecution"}
        allowed -= {"creditorAgent"}
    check_known(b, allowed, "")
    amount, ccy = check_amount(b.get("instructedAmount"), "instructedAmount")
    opt_str(b, "creditorName", "", 70, 1, required=True)
    opt_str(b, "ultimateDebtor", "", 70)
    opt_str(b, "endToEndIdentification", "", 35, 1)
    if b.get("creditorAgent") is not None:
        if not isinstance(b["creditorAgent"], str) or not BIC_RE.match(b["creditorAgent"]):
            raise ApiError(400, "FORMAT_ERROR", "creditorAgent is not a valid BIC")
    opt_str(b, "remittanceInformationUnstructured", "", 140, 1)
    if b.get("purposeCode") is not None and b["purposeCode"] not in PURPOSE:
        raise ApiError(400, "FORMAT_ERROR", "purposeCode is not supported")
    if kind == "ndct":
        check_account_ref(b.get("creditorAccount"), "creditorAccount", allow_iban=False)
        if not b["creditorAccount"].get("bban"):
            raise ApiError(400, "FORMAT_ERROR", "creditorAccount.bban is required")
        check_address(b.get("creditorAddress"), "creditorAddress", True)
        check_account_ref(b.get("debtorAccount"), "debtorAccount", allow_other=True, allow_iban=False,
                          exactly_one=True)
        if b.get("remittanceInformationUnstructured") is not None and b.get("remittanceInformationStructuredArray") is not None:
            raise ApiError(400, "FORMAT_ERROR", "remittanceInformationUnstructured and remittanceInformationStructuredArray are mutually exclusive")
        if b.get("remittanceInformationStructured") is not None:
            check_remittance_item(b["remittanceInformationStructured"], "remittanceInformationStructured")
        arr = b.get("remittanceInformationStructuredArray")
        if arr is not None:
            if not isinstance(arr, list) or not arr:
                raise ApiError(400, "FORMAT_ERROR", "remittanceInformationStructuredArray must be a non-empty array")
            for i, it in enumerate(arr):
                check_remittance_item(it, f"remittanceInformationStructuredArray[{i}]")
        check_exec_date(b.get("requestedExecutionDate"), "requestedExecutionDate")
    elif kind == "ncbct":
        check_account_ref(b.get("creditorAccount"), "creditorAccount")
        if b["creditorAccount"].get("bban") and not b.get("creditorAgent"):
            raise ApiError(400, "FORMAT_ERROR", "creditorAgent is required when creditorAccount is a BBAN")
        check_address(b.get("creditorAddress"), "creditorAddress", False)
        check_account_ref(b.get("debtorAccount"), "debtorAccount")
        check_exec_date(b.get("requestedExecutionDate"), "requestedExecutionDate")
        code = b.get("regulatoryReportingCode")
        if code is not None and code not in REGCODES:
            raise ApiError(400, "FORMAT_ERROR", "regulatoryReportingCode is not a supported code")
        opt_str(b, "regulatoryReportingInformation", "", 140, 1)
        if ccy != "NOK" or amount >= 100000:
            if code is None or b.get("regulatoryReportingInformation") is None:
                raise ApiError(400, "FORMAT_ERROR", "regulatoryReportingCode and regulatoryReportingInformation are required for NOK 100 000 or more")
    else:
        check_account_ref(b.get("creditorAccount"), "creditorAccount")
        check_address(b.get("creditorAddress"), "creditorAddress", False)
        check_account_ref(b.get("debtorAccount"), "debtorAccount")
        t = today_oslo()
        start = parse_date(b.get("startDate"), "startDate", required=True)
        if start < t:
            raise ApiError(400, "EXECUTION_DATE_INVALID", "startDate is in the past (Europe/Oslo)")
        end = parse_date(b.get("endDate"), "endDate")
        if end is not None and end < start:
            raise ApiError(400, "EXECUTION_DATE_INVALID", "endDate is before startDate")
        if b.get("executionRule") is not None and b["executionRule"] not in ("following", "preceeding"):
            raise ApiError(400, "FORMAT_ERROR", "executionRule must be following or preceeding")
        freq = b.get("frequency")
        if freq not in FREQ:
            raise ApiError(400, "FORMAT_ERROR", "frequency is required and must be a supported value")
        doe = b.get("dayOfExecution")
        if doe is not None:
            if not isinstance(doe, str) or not re.match(r"^\d{1,2}$", doe) or not 1 <= int(doe) <= 31:
                raise ApiError(400, "FORMAT_ERROR", "dayOfExecution must be a day of month 1..31")
        months = b.get("monthsOfExecution")
        if freq == "MonthlyVariable":
            if not isinstance(months, list) or not 1 <= len(months) <= 11:
                raise ApiError(400, "FORMAT_ERROR", "monthsOfExecution must list 1 to 11 months for MonthlyVariable")
            for m in months:
                if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m <= 12:
                    raise ApiError(400, "FORMAT_ERROR", "monthsOfExecution items must be 1..12")
            if len(set(months)) != len(months):
                raise ApiError(400, "FORMAT_ERROR", "monthsOfExecution contains a month more than once")
        elif months is not None:
            raise ApiError(400, "FORMAT_ERROR", "monthsOfExecution is only allowed with frequency MonthlyVariable")
    return amount, ccy


# ---------------------------------------------------------------- signature checks
def b64d(s, what):
    try:
        return base64.b64decode(s, validate=True)
    except Exception:
        raise ApiError(400, "FORMAT_ERROR", f"{what} is not valid base64")


def load_tpp_cert(value):
    raw = b64d("".join(value.split()), "TPP-Signature-Certificate")
    try:
        if raw.lstrip().startswith(b"-----BEGIN"):
            return x509.load_pem_x509_certificate(raw)
        return x509.load_der_x509_certificate(raw)
    except Exception:
        raise ApiError(400, "FORMAT_ERROR", "TPP-Signature-Certificate is not a certificate")


def decode_rfc2047(v):
    m = re.match(r"^=\?([^?]+)\?([BbQq])\?(.*)\?=$", v.strip(), re.S)
    if not m:
        return v
    cs, enc, data = m.groups()
    try:
        if enc.upper() == "B":
            return base64.b64decode(data).decode(cs)
        import quopri
        return quopri.decodestring(data.replace("_", " ").encode()).decode(cs)
    except Exception:
        raise ApiError(400, "FORMAT_ERROR", "Signature header has an invalid RFC 2047 encoding")


def norm_dn(s):
    return ",".join(p.strip().replace(" ", "").lower() for p in re.split(r"(?<!\\),", s))


def verify_request(h, method, target, body):
    cert = load_tpp_cert(h["tpp-signature-certificate"])
    now = dt.datetime.now(dt.timezone.utc)
    if not (cert.not_valid_before_utc <= now <= cert.not_valid_after_utc):
        raise ApiError(403, "FORBIDDEN", "TPP certificate is not within its validity period")
    trusted = False
    for ca in TRUST:
        try:
            cert.verify_directly_issued_by(ca)
            trusted = True
            break
        except Exception:
            continue
    if not trusted:
        raise ApiError(403, "FORBIDDEN", "TPP certificate is not issued by a trusted CA")
    sig = decode_rfc2047(h["signature"])
    params = dict(re.findall(r'(\w+)="([^"]*)"', sig))
    for p in ("keyId", "algorithm", "headers", "signature"):
        if p not in params:
            raise ApiError(400, "FORMAT_ERROR", f"Signature header lacks {p}")
    m = re.match(r"^SN=([0-9A-Fa-f]+),CA=(.+)$", params["keyId"])
    if not m:
        raise ApiError(400, "FORMAT_ERROR", "keyId must be SN=<serial hex>,CA=<CA DN>")
    if int(m.group(1), 16) != cert.serial_number:
        raise ApiError(403, "FORBIDDEN", "keyId serial does not match the certificate")
    if norm_dn(m.group(2)) != norm_dn(cert.issuer.rfc4514_string()) and \
            set(norm_dn(m.group(2)).split(",")) != set(norm_dn(cert.issuer.rfc4514_string()).split(",")):
        raise ApiError(403, "FORBIDDEN", "keyId CA does not match the certificate issuer")
    if params["algorithm"].lower() != "rsa-sha256" or not isinstance(cert.public_key(), rsa.RSAPublicKey):
        raise ApiError(403, "FORBIDDEN", "algorithm must be rsa-sha256 with an RSA certificate")
    signed = params["headers"].lower().split()
    for must in ("date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"):
        if must in h and must not in signed:
            raise ApiError(403, "FORBIDDEN", f"header {must} is present but not signed")
    lines = []
    for name in signed:
        if name == "(request-target)":
            lines.append(f"(request-target): {method.lower()} {target}")
        elif name in h:
            lines.append(f"{name}: {h[name]}")
        else:
            raise ApiError(403, "FORBIDDEN", f"signed header {name} is missing from the request")
    try:
        cert.public_key().verify(b64d(params["signature"], "signature"), "\n".join(lines).encode(),
                                 padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        raise ApiError(403, "FORBIDDEN", "signature does not verify")
    if "digest" in h:
        ok = False
        for part in h["digest"].split(","):
            alg, _, val = part.strip().partition("=")
            alg = alg.upper()
            if alg == "SHA-256":
                ok = base64.b64encode(hashlib.sha256(body).digest()).decode() == val
            elif alg == "SHA-512":
                ok = base64.b64encode(hashlib.sha512(body).digest()).decode() == val
            else:
                continue
            break
        if not ok:
            raise ApiError(400, "FORMAT_ERROR", "Digest does not match the body (SHA-256 or SHA-512 expected)")
    return cert


def tpp_key(cert):
    return cert.fingerprint(hashes.SHA256()).hex()


# ---------------------------------------------------------------- routing
ROUTES = []


def route(method, pattern, required=("x-request-id", "tpp-signature-certificate", "signature")):
    rx = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "$")

    def deco(fn):
        ROUTES.append((method, rx, fn, tuple(required)))
        return fn
    return deco


BASE = ("x-request-id", "tpp-signature-certificate", "signature")
WITH_DIGEST = BASE + ("digest",)
E1_SET = ("x-accept-fix", "x-request-id", "tpp-session-id", "tpp-redirect-uri", "tpp-signature-certificate",
          "signature", "psu-id", "psu-ip-address")
E8_SET = ("x-accept-fix", "x-request-id", "tpp-session-id", "tpp-redirect-uri", "tpp-signature-certificate",
          "signature")
PAY_SET = tuple(x for x in E1_SET if x != "psu-id") + ("digest",)  # PSU-ID or X-PSU-IDENTITY, checked later


class Ctx:
    def __init__(self, handler, h, params, query, body, cert, base):
        self.handler, self.h, self.params, self.query, self.body, self.cert = handler, h, params, query, body, cert
        self.tpp = tpp_key(cert) if cert else None
        self.base = base

    def json(self):
        if not self.body:
            raise ApiError(400, "FORMAT_ERROR", "a JSON body is required")
        try:
            return json.loads(self.body.decode("utf-8"))
        except Exception:
            raise ApiError(400, "FORMAT_ERROR", "body is not valid JSON")

    def q(self, name):
        v = self.query.get(name)
        return v[-1] if v else None


def q_bool(ctx, name, default):
    v = ctx.q(name)
    if v is None:
        return default
    if v not in ("true", "false"):
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be true or false")
    return v == "true"


def q_int(ctx, name, minimum, default):
    v = ctx.q(name)
    if v is None:
        return default
    if not re.match(r"^-?\d{1,10}$", v) or int(v) < minimum or int(v) >= 2**31:
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be an int32 >= {minimum}")
    return int(v)


def check_psu_headers(h):
    if "psu-id" in h and not UUID_RE.match(h["psu-id"]):
        raise ApiError(400, "FORMAT_ERROR", "PSU-ID must be a UUID")
    if "x-psu-identity" in h and not re.match(r"^\d{11}$", h["x-psu-identity"]):
        raise ApiError(400, "FORMAT_ERROR", "X-PSU-IDENTITY must be an 11 digit national identity or D-number")
    if "psu-ip-address" in h:
        try:
            ipaddress.ip_address(h["psu-ip-address"])
        except ValueError:
            raise ApiError(400, "FORMAT_ERROR", "PSU-IP-Address is not an IP address")
    if "psu-ip-port" in h and (not h["psu-ip-port"].isdigit() or not 0 < int(h["psu-ip-port"]) < 65536):
        raise ApiError(400, "FORMAT_ERROR", "PSU-IP-Port is not a port")
    if "psu-context" in h and h["psu-context"] not in ("PRIVATE", "CORPORATE"):
        raise ApiError(400, "FORMAT_ERROR", "PSU-Context must be PRIVATE or CORPORATE")
    if "psu-http-method" in h and h["psu-http-method"] not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        raise ApiError(400, "FORMAT_ERROR", "PSU-HTTP-Method is not a supported method")
    if "psu-device-id" in h and not UUID_RE.match(h["psu-device-id"]):
        raise ApiError(400, "FORMAT_ERROR", "PSU-Device-ID must be a UUID")
    if "tpp-redirect-preferred" in h and h["tpp-redirect-preferred"] not in ("true", "false"):
        raise ApiError(400, "FORMAT_ERROR", "TPP-Redirect-Preferred must be true or false")
    if "x-accept-fix" in h:
        vals = [v.strip() for v in h["x-accept-fix"].split(",")]
        if any(v not in ACCEPT_FIX for v in vals):
            raise ApiError(400, "FORMAT_ERROR", "x-accept-fix carries an unknown value")
    if "tpp-redirect-uri" in h:
        u = urllib.parse.urlparse(h["tpp-redirect-uri"])
        if u.scheme not in ("https", "http") or not u.netloc:
            raise ApiError(400, "FORMAT_ERROR", "TPP-Redirect-URI must be an absolute URI")
    # Corporate user without PSU-Corporate-ID (spec 7 rule 3)
    corporate = h.get("psu-context") == "CORPORATE"
    if "psu-id" in h:
        with LOCK:
            for c in DB["customers"].values():
                if c["customerId"].lower() == h["psu-id"].lower() and c["customerType"] == "CORPORATE":
                    corporate = True
    if corporate and "psu-corporate-id" not in h:
        raise ApiError(400, "FORMAT_ERROR", "PSU-Corporate-ID is required for a corporate user")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "NordbankGW/1.22.0"

    def log_message(self, fmt, *args):
        pass

    def _send(self, status, obj=None, extra_headers=None, raw=None, ctype="application/json"):
        data = b""
        if raw is not None:
            data = raw
        elif obj is not None:
            data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        if data or status not in (204, 302):
            self.send_header("Content-Type", ctype + "; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Language", "en")
        rid = self.headers.get("X-Request-ID")
        if rid:
            self.send_header("X-Request-ID", rid)
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    def _dispatch(self):
        method = self.command
        target = self.path
        parsed = urllib.parse.urlsplit(target)
        path = parsed.path.rstrip("/") or "/"
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        host = self.headers.get("Host") or f"localhost:{self.server.server_address[1]}"
        base = f"http://{host}"
        try:
            query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True, strict_parsing=False)
        except ValueError:
            query = {}
        try:
            if path.startswith("/sca/"):
                return self._sca(method, path, body, base)
            matched_path = False
            for m, rx, fn, required in ROUTES:
                mm = rx.match(path)
                if not mm:
                    continue
                matched_path = True
                if m != method:
                    continue
                h = {k.lower(): v for k, v in self.headers.items()}
                if body and "digest" not in required:
                    required = required + ("digest",)
                for r in required:
                    if not h.get(r, "").strip():
                        raise ApiError(400, "HTTP_HEADER_REQUIRED", f"header {r} is required")
                if "x-request-id" in h and not UUID_RE.match(h["x-request-id"]):
                    raise ApiError(400, "FORMAT_ERROR", "X-Request-ID must be a UUID")
                cert = verify_request(h, method, target, body)
                check_psu_headers(h)
                with LOCK:
                    key = (tpp_key(cert), h["x-request-id"].lower())
                    if key in DB["request_ids"]:
                        raise ApiError(409, "CONFLICT", "X-Request-ID was already used by this TPP")
                    DB["request_ids"].add(key)
                ctx = Ctx(self, h, {k: urllib.parse.unquote(v) for k, v in mm.groupdict().items()},
                          query, body, cert, base)
                res = fn(ctx)
                status, obj = res[0], res[1]
                hdrs = res[2] if len(res) > 2 else None
                return self._send(status, obj, hdrs)
            if matched_path:
                raise ApiError(405, "BAD_REQUEST", f"method {method} is not allowed on this resource")
            raise ApiError(404, "NOT_FOUND", "no such resource")
        except ApiError as e:
            err = {"id": new_id(), "system": SYSTEM, "status": e.status, "code": e.code}
            if e.message:
                err["message"] = e.message
            if path.startswith("/v1/payments") or path.startswith("/v1/periodic-payments"):
                err["tppMessages"] = [{"category": "ERROR", "code": e.code, "text": (e.message or e.code)[:512]}]
            if e.extra:
                err.update(e.extra)
            hdrs = {"Allow": ", ".join(sorted({m for m, rx, _, _ in ROUTES if rx.match(path)}))} if e.status == 405 else None
            return self._send(e.status, err, hdrs)
        except Exception as e:  # pragma: no cover
            import traceback
            traceback.print_exc()
            return self._send(500, {"id": new_id(), "system": SYSTEM, "status": 500, "code": "SYSTEM_ERROR"})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _dispatch

    # ------------------------------------------------------------ SCA redirect pages (PSU facing)
    def _sca(self, method, path, body, base):
        m = re.match(r"^/sca/([0-9a-f-]{36})$", path)
        with LOCK:
            sca = DB["scas"].get(m.group(1)) if m else None
        if not sca:
            return self._send(404, raw=b"<html><body>Unknown or expired authentication</body></html>",
                              ctype="text/html")
        if method == "GET":
            page = f"""<html><head><title>Nordbank BankID</title></head><body>
<h1>Confirm {html.escape(sca['kind'])}</h1>
<form method="post" action="/sca/{sca['id']}">
<label>Customer number <input name="customerNumber"></label>
<label>One-time code <input name="otp"></label>
<button name="action" value="approve">Approve</button>
<button name="action" value="deny">Deny</button>
</form></body></html>"""
            return self._send(200, raw=page.encode(), ctype="text/html")
        if method != "POST":
            return self._send(405, raw=b"method not allowed", ctype="text/plain", extra_headers={"Allow": "GET, POST"})
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        f = {k: v[-1] for k, v in form.items()}
        with LOCK:
            if sca["scaStatus"] not in ("STARTED", "RECEIVED", "PSU_IDENTIFIED"):
                return self._send(409, raw=f"authentication already {sca['scaStatus']}".encode(), ctype="text/plain")
            age = (dt.datetime.now(dt.timezone.utc) - sca["created"]).total_seconds()
            outcome = None
            if age > SCA_TTL_SECONDS:
                outcome = "FAILED"
            elif f.get("action") == "deny":
                outcome = "FAILED"
            else:
                cust = next((c for c in DB["customers"].values()
                             if c["customerNumber"] == f.get("customerNumber")), None)
                if cust is None:
                    return self._send(400, raw=b"PSU_CREDENTIALS_INVALID: unknown customer number",
                                      ctype="text/plain")
                if sca.get("psuId") and sca["psuId"].lower() != cust["customerId"].lower() and \
                        sca["psuId"].lower() != cust["customerNumber"].lower():
                    return self._send(400, raw=b"PSU_CREDENTIALS_INVALID: customer does not match PSU-ID",
                                      ctype="text/plain")
                if f.get("otp") != SCA_OTP:
                    outcome = "FAILED"
                else:
                    outcome = "FINALISED"
                    sca["customerNumber"] = cust["customerNumber"]
            sca["scaStatus"] = outcome
            finish_sca(sca)
            redirect = sca.get("redirect") or "about:blank"
        sep = "&" if "?" in redirect else "?"
        loc = f"{redirect}{sep}scaStatus={outcome}&authorisationId={sca['id']}"
        return self._send(302, extra_headers={"Location": loc})


# ---------------------------------------------------------------- SCA / state machines
PAY_TRANSITIONS = {
    "RCVD": {"ACTC", "PDNG", "RJCT", "CANC"},
    "PDNG": {"ACTC", "RJCT"},
    "ACTC": {"ACSP", "RJCT", "CANC"},
    "ACSP": {"ACSC", "RJCT"},
    "ACSC": set(), "RJCT": set(), "CANC": set(),
}


def move(p, new):
    if new not in PAY_TRANSITIONS.get(p["transactionStatus"], set()):
        raise ApiError(409, "CONFLICT", f"payment cannot move from {p['transactionStatus']} to {new}")
    p["transactionStatus"] = new
    p["statusHistory"].append((now_iso(), new))


def new_sca(kind, ref, ctx):
    sca = {"id": new_id(), "kind": kind, "ref": ref, "scaStatus": "STARTED",
           "created": dt.datetime.now(dt.timezone.utc), "tpp": ctx.tpp,
           "redirect": ctx.h.get("tpp-redirect-uri"), "psuId": ctx.h.get("psu-id"),
           "biometric": ctx.h.get("tpp-redirect-preferred") == "false"}
    DB["scas"][sca["id"]] = sca
    return sca


def finish_sca(sca):
    ok = sca["scaStatus"] == "FINALISED"
    if sca["kind"] in ("payment", "basket"):
        pids = [sca["ref"]] if sca["kind"] == "payment" else DB["baskets"][sca["ref"]]["paymentIds"]
        for pid in pids:
            p = DB["payments"][pid]
            if p["transactionStatus"] != "RCVD":
                continue
            if not ok:
                move(p, "RJCT")
            elif p.get("executionDate") and p["executionDate"] > today_oslo().isoformat():
                move(p, "PDNG")
            else:
                move(p, "ACTC")
        if sca["kind"] == "basket":
            DB["baskets"][sca["ref"]]["scaDone"] = True
    elif sca["kind"] == "consent":
        c = DB["consents"][sca["ref"]]
        if ok:
            c["status"] = "valid"
            c["customerNumber"] = sca["customerNumber"]
            c["scaAt"] = dt.datetime.now(dt.timezone.utc)
        else:
            c["status"] = "rejected"


def batch_run():
    """Simulated batch processing: one step forward for every non-periodic payment."""
    moved = 0
    t = today_oslo().isoformat()
    for p in DB["payments"].values():
        if p["kind"] == "periodic":
            continue
        s = p["transactionStatus"]
        if s == "PDNG" and p.get("executionDate", t) <= t:
            move(p, "ACTC"); moved += 1
        elif s == "ACTC":
            move(p, "ACSP"); moved += 1
        elif s == "ACSP":
            move(p, "ACSC"); moved += 1
            book_payment(p)
    return moved


def book_payment(p):
    b = p["body"]
    deb = b.get("debtorAccount", {})
    acc = next((a for a in DB["accounts"].values()
                if (deb.get("bban") and a["bban"] == deb.get("bban")) or (deb.get("iban") and a["iban"] == deb.get("iban"))), None)
    if not acc:
        return
    amt = Decimal(b["instructedAmount"]["amount"])
    d = today_oslo().isoformat()
    tx = {"id": new_id(), "amount": -int(amt), "currency": b["instructedAmount"]["currency"], "valueDate": d,
          "bookingDate": d, "remittanceInformationUnstructured": b.get("remittanceInformationUnstructured", ""),
          "creditorName": b["creditorName"],
          "creditorAccount": {"iban": b["creditorAccount"].get("iban", ""), "bban": b["creditorAccount"].get("bban", "")},
          "debtorName": acc["accountName"], "debtorAccount": {"iban": acc["iban"], "bban": acc["bban"]},
          "bankTransactionCode": "PMNT-ICDT-DMCT", "ultimateDebtor": b.get("ultimateDebtor", ""),
          "ultimateCreditor": "", "purposeCode": b.get("purposeCode", "OTHR"), "creditorId": "",
          "paymentId": p["paymentId"]}
    acc["transactions"].append(tx)


# ---------------------------------------------------------------- payments
def create_payment(ctx, kind, product):
    if "psu-id" not in ctx.h and "x-psu-identity" not in ctx.h:
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "PSU-ID or X-PSU-IDENTITY is required")
    b = ctx.json()
    amount, ccy = validate_payment(kind, b)
    allow_dup = q_bool(ctx, "allowLogicalDuplicate", False) if kind != "periodic" else True
    with LOCK:
        if not allow_dup:
            sig = (ctx.tpp, product, json.dumps(b.get("debtorAccount"), sort_keys=True),
                   json.dumps(b.get("creditorAccount"), sort_keys=True), str(amount), ccy,
                   b.get("requestedExecutionDate") or today_oslo().isoformat())
            for p in DB["payments"].values():
                if p.get("dupKey") == sig and p["transactionStatus"] not in ("RJCT", "CANC"):
                    raise ApiError(409, "CONFLICT", "logical duplicate of payment " + p["paymentId"]
                                   + "; set allowLogicalDuplicate=true to accept it")
        else:
            sig = None
        pid = new_id()
        root = "periodic-payments" if kind == "periodic" else "payments"
        p = {"paymentId": pid, "product": product, "kind": kind, "root": root, "body": b,
             "transactionStatus": "RCVD", "tpp": ctx.tpp, "psuId": ctx.h.get("psu-id") or ctx.h.get("x-psu-identity"),
             "created": now_iso(), "statusHistory": [(now_iso(), "RCVD")], "dupKey": sig, "basketId": None,
             "executionDate": b.get("requestedExecutionDate") or b.get("startDate"), "scaId": None}
        DB["payments"][pid] = p
        self_href = f"{ctx.base}/v1/{root}/{product}/{pid}"
        links = {"self": link(self_href, "GET", "DELETE"), "status": link(self_href + "/status", "GET")}
        res = {"paymentId": pid, "transactionStatus": "RCVD"}
        if kind == "ncbct":
            res["transactionFees"] = {"amount": "50.00", "currency": "NOK"}
            res["transactionFeeIndicator"] = True
        else:
            res["transactionFeeIndicator"] = False
        if "psu-context" in ctx.h:
            # single-SCA initiation: the SCA starts right here
            sca = new_sca("payment", pid, ctx)
            p["scaId"] = sca["id"]
            links["scaRedirect"] = link(f"{ctx.base}/sca/{sca['id']}", "GET")
            links["scaStatus"] = link(f"{self_href}/authorisations/{sca['id']}", "GET")
            res["psuMessage"] = "Please confirm the payment with BankID in Nordbank."
        else:
            res["psuMessage"] = "Payment registered; it will be authorised in a signing basket."
        if kind == "ncbct" and ccy == "NOK" and amount < 100000:
            res["tppMessages"] = [{"category": "WARNING", "code": "PRODUCT_INVALID", "path": "instructedAmount",
                                   "text": "NCBCT is meant for cross-border transfers of NOK 100 000 or more"}]
        res["_links"] = links
        return 201, res, {"Location": self_href}


@route("POST", "/v1/payments/{product}", PAY_SET)
def e16_e18(ctx):
    prod = ctx.params["product"]
    if prod == NDCT:
        return create_payment(ctx, "ndct", prod)
    if prod == NCBCT:
        return create_payment(ctx, "ncbct", prod)
    raise ApiError(404, "PRODUCT_UNKNOWN", f"payment product {prod} is not offered")


@route("POST", "/v1/periodic-payments/{product}", PAY_SET)
def e17(ctx):
    prod = ctx.params["product"]
    if prod != NDCT:
        raise ApiError(403, "PRODUCT_INVALID", f"payment product {prod} is not offered as periodic payment")
    return create_payment(ctx, "periodic", prod)


def get_payment(ctx, root):
    with LOCK:
        p = DB["payments"].get(ctx.params["pid"])
        if not p or p["root"] != root or p["product"] != ctx.params["product"] or p["tpp"] != ctx.tpp:
            raise ApiError(404, "RESOURCE_UNKNOWN", "payment not found")
        return p


for _root in ("payments", "periodic-payments"):
    def _mk(root):
        @route("GET", f"/v1/{root}/{{product}}/{{pid}}/status")
        def status(ctx):
            p = get_payment(ctx, root)
            res = {"transactionStatus": p["transactionStatus"]}
            if p["transactionStatus"] in ("ACTC", "ACSP", "ACSC", "PDNG"):
                res["fundsAvailable"] = True
            return 200, res

        @route("GET", f"/v1/{root}/{{product}}/{{pid}}")
        def detail(ctx):
            p = get_payment(ctx, root)
            res = dict(p["body"])
            res["transactionStatus"] = p["transactionStatus"]
            res["_links"] = {"self": link(f"{ctx.base}/v1/{root}/{p['product']}/{p['paymentId']}", "GET", "DELETE"),
                             "status": link(f"{ctx.base}/v1/{root}/{p['product']}/{p['paymentId']}/status", "GET")}
            return 200, res

        @route("DELETE", f"/v1/{root}/{{product}}/{{pid}}")
        def cancel(ctx):
            with LOCK:
                p = get_payment(ctx, root)
                if p["transactionStatus"] == "PDNG":
                    raise ApiError(400, "BAD_REQUEST", "a payment in status PDNG cannot be deleted")
                if p["transactionStatus"] not in ("RCVD", "ACTC"):
                    raise ApiError(409, "CONFLICT", f"a payment in status {p['transactionStatus']} cannot be deleted")
                if p["basketId"] and not DB["baskets"][p["basketId"]].get("scaDone"):
                    raise ApiError(409, "CONFLICT", "payment is part of a signing basket awaiting authorisation")
                move(p, "CANC")
                return 204, None

        @route("GET", f"/v1/{root}/{{product}}/{{pid}}/authorisations/{{aid}}")
        def auth_status(ctx):
            p = get_payment(ctx, root)
            with LOCK:
                sca = DB["scas"].get(ctx.params["aid"])
                if not sca or sca["kind"] != "payment" or sca["ref"] != p["paymentId"]:
                    raise ApiError(404, "RESOURCE_UNKNOWN", "authorisation not found")
                return 200, {"scaStatus": sca["scaStatus"]}
    _mk(_root)


# ---------------------------------------------------------------- signing baskets
def basket_status(bk):
    sts = [DB["payments"][pid]["transactionStatus"] for pid in bk["paymentIds"]]
    if any(s in ("RJCT", "CANC") for s in sts):
        return "RJCT"
    done = [s != "RCVD" for s in sts]
    if all(done):
        return "ACTC"
    if any(done):
        return "PATC"
    return "RCVD"


@route("POST", "/v1/signing-baskets", E1_SET + ("digest",))
def e1(ctx):
    b = ctx.json()
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be an object")
    check_known(b, {"paymentIds"}, "")
    ids = b.get("paymentIds")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise ApiError(400, "FORMAT_ERROR", "paymentIds must be a non-empty array of strings")
    if len(ids) > 10:
        raise ApiError(400, "FORMAT_ERROR", "a signing basket holds at most 10 payments")
    if len(set(ids)) != len(ids):
        raise ApiError(400, "FORMAT_ERROR", "paymentIds contains a payment more than once")
    with LOCK:
        for i in ids:
            p = DB["payments"].get(i)
            if not p or p["tpp"] != ctx.tpp:
                raise ApiError(400, "RESOURCE_UNKNOWN", f"payment {i} is unknown")
        for i in ids:
            if DB["payments"][i]["kind"] == "periodic":
                raise ApiError(400, "REFERENCE_MIX_INVALID", "periodic and bulk payments cannot be added to a signing basket")
        for i in ids:
            p = DB["payments"][i]
            if p["basketId"] or p["scaId"] or p["transactionStatus"] != "RCVD":
                raise ApiError(400, "RESOURCE_BLOCKED", f"payment {i} is already under authorisation")
        bid = new_id()
        bk = {"basketId": bid, "paymentIds": list(ids), "tpp": ctx.tpp, "scaId": None, "scaDone": False}
        DB["baskets"][bid] = bk
        for i in ids:
            DB["payments"][i]["basketId"] = bid
        href = f"{ctx.base}/v1/signing-baskets/{bid}"
        return 201, {"basketId": bid, "transactionStatus": basket_status(bk),
                     "_links": {"self": link(href, "GET"), "status": link(href + "/status", "GET"),
                                "startAuthorisation": link(href + "/authorisations", "POST")}}, {"Location": href}


def get_basket(ctx):
    bk = DB["baskets"].get(ctx.params["bid"])
    if not bk or bk["tpp"] != ctx.tpp:
        raise ApiError(404, "RESOURCE_UNKNOWN", "signing basket not found")
    return bk


@route("GET", "/v1/signing-baskets/{bid}")
def basket_get(ctx):
    with LOCK:
        bk = get_basket(ctx)
        href = f"{ctx.base}/v1/signing-baskets/{bk['basketId']}"
        return 200, {"basketId": bk["basketId"], "payments": bk["paymentIds"],
                     "transactionStatus": basket_status(bk),
                     "_links": {"self": link(href, "GET"), "status": link(href + "/status", "GET")}}


@route("GET", "/v1/signing-baskets/{bid}/status")
def basket_stat(ctx):
    with LOCK:
        return 200, {"transactionStatus": basket_status(get_basket(ctx))}


@route("POST", "/v1/signing-baskets/{bid}/authorisations", E1_SET)
def e2(ctx):
    with LOCK:
        bk = get_basket(ctx)
        if bk["scaId"]:
            raise ApiError(400, "RESOURCE_BLOCKED", "an authorisation was already started for this basket")
        if any(DB["payments"][i]["transactionStatus"] != "RCVD" for i in bk["paymentIds"]):
            raise ApiError(400, "RESOURCE_BLOCKED", "the basket holds payments that can no longer be authorised")
        sca = new_sca("basket", bk["basketId"], ctx)
        bk["scaId"] = sca["id"]
        href = f"{ctx.base}/v1/signing-baskets/{bk['basketId']}/authorisations/{sca['id']}"
        return 201, {"scaStatus": "STARTED", "authorisationId": sca["id"],
                     "_links": {"self": link(href, "GET"),
                                "scaRedirect": link(f"{ctx.base}/sca/{sca['id']}", "GET")}}, {"Location": href}


@route("GET", "/v1/signing-baskets/{bid}/authorisations/{aid}")
def basket_auth(ctx):
    with LOCK:
        bk = get_basket(ctx)
        sca = DB["scas"].get(ctx.params["aid"])
        if not sca or sca["ref"] != bk["basketId"]:
            raise ApiError(404, "RESOURCE_UNKNOWN", "authorisation not found")
        return 200, {"scaStatus": sca["scaStatus"],
                     "_links": {"self": link(f"{ctx.base}/v1/signing-baskets/{bk['basketId']}/authorisations/{sca['id']}", "GET")}}


# ---------------------------------------------------------------- account information (consent on first access)
def consent_for(ctx, create=False):
    psu = ctx.h.get("psu-id")
    key = (ctx.tpp, (psu or "").lower())
    c = DB["consents"].get(key)
    if c and c["status"] == "valid":
        age = dt.datetime.now(dt.timezone.utc) - c["scaAt"]
        if age > dt.timedelta(days=180):
            c["status"] = "expired"
    return key, c


def consent_accounts(c):
    cn = c["customerNumber"]
    accs = [a for a in DB["accounts"].values() if a["customerNumber"] == cn]
    cust = next((x for x in DB["customers"].values() if x["customerNumber"] == cn), None)
    if cust:
        for ag in DB["agreements"].values():
            for e in ag["engagements"]:
                if e["customer"] in (cust["customerNumber"], cust["customerId"]) and {"VIEW", "REGISTER"} <= set(e["roles"]):
                    a = next((x for x in DB["accounts"].values() if x["iban"] == e["account"]["iban"]), None)
                    if a and a not in accs:
                        accs.append(a)
    return accs


@route("GET", "/v1/accounts", E8_SET)
def accounts_list(ctx):
    with LOCK:
        key, c = consent_for(ctx)
        if not c or c["status"] != "valid":
            code = "CONSENT_UNKNOWN" if not c else "CONSENT_EXPIRED" if c["status"] == "expired" else "CONSENT_INVALID"
            cid = new_id()
            c = {"consentId": cid, "status": "received", "tpp": ctx.tpp, "customerNumber": None, "scaAt": None}
            DB["consents"][key] = c
            sca = new_sca("consent", key, ctx)
            sca["ref"] = key
            raise ApiError(401, code,
                           "account access needs the PSU's consent by SCA",
                           {"_links": {"scaRedirect": link(f"{ctx.base}/sca/{sca['id']}", "GET")}})
        accs = []
        for a in consent_accounts(c):
            href = f"{ctx.base}/v1/accounts/{a['id']}"
            name = a["accountName"] if "longer-name" in ctx.h.get("x-accept-fix", "") else a["accountName"][:35]
            accs.append({"resourceId": a["id"], "bban": a["bban"], "iban": a["iban"], "currency": a["currency"],
                         "name": name, "product": a["product"], "cashAccountType": a["cashAccountType"],
                         "_links": {"transactions": link(href + "/transactions", "GET")}})
        return 200, {"accounts": accs}


def account_in_consent(ctx, aid):
    key, c = consent_for(ctx)
    if not c:
        # E8 without PSU-ID: any valid consent of this TPP covering the account
        for k, cc in DB["consents"].items():
            if k[0] == ctx.tpp and cc["status"] == "valid" and any(a["id"] == aid for a in consent_accounts(cc)):
                c = cc
                break
    if not c or c["status"] not in ("valid",):
        if c and c["status"] == "expired":
            raise ApiError(401, "CONSENT_EXPIRED", "consent needs renewal by SCA")
        raise ApiError(401, "CONSENT_UNKNOWN", "no valid consent for this account")
    acc = next((a for a in consent_accounts(c) if a["id"] == aid), None)
    if not acc:
        raise ApiError(404, "RESOURCE_UNKNOWN", "account not covered by consent")
    return c, acc


def amount_str(v, ccy):
    n = minor_units(ccy)
    return f"{Decimal(v):.{n}f}"


@route("GET", "/v1/accounts/{aid}/transactions", E8_SET)
def tx_list(ctx):
    with LOCK:
        c, acc = account_in_consent(ctx, ctx.params["aid"])
        frm = parse_date(ctx.q("dateFrom"), "dateFrom")
        to = parse_date(ctx.q("dateTo"), "dateTo")
        status = ctx.q("bookingStatus") or "booked"
        if status not in ("booked", "pending", "both", "all"):
            raise ApiError(400, "FORMAT_ERROR", "bookingStatus must be booked, pending, both or all")
        t = today_oslo()
        if frm and frm < t - dt.timedelta(days=90) and \
                (dt.datetime.now(dt.timezone.utc) - c["scaAt"]) > dt.timedelta(minutes=60):
            raise ApiError(401, "CONSENT_EXPIRED", "history older than 90 days needs a fresh SCA")
        page = q_int(ctx, "page", 0, 0)
        size = q_int(ctx, "pageSize", 1, 200)
        txs = [x for x in acc["transactions"] if (not frm or x["bookingDate"] >= frm.isoformat())
               and (not to or x["bookingDate"] <= to.isoformat())]
        txs.sort(key=lambda x: x["bookingDate"], reverse=True)
        chunk = txs[page * size:(page + 1) * size] if status != "pending" else []
        booked = [{"transactionId": x["id"], "bookingDate": x["bookingDate"], "valueDate": x["valueDate"],
                   "transactionAmount": {"amount": amount_str(x["amount"], x["currency"]), "currency": x["currency"]},
                   "creditorName": x["creditorName"], "debtorName": x["debtorName"],
                   "remittanceInformationUnstructured": x["remittanceInformationUnstructured"],
                   "_links": {"transactionDetails": link(f"{ctx.base}/v1/accounts/{acc['id']}/transactions/{x['id']}", "GET")}}
                  for x in chunk]
        base = f"{ctx.base}/v1/accounts/{acc['id']}/transactions?bookingStatus={status}"
        if frm:
            base += f"&dateFrom={frm}"
        if to:
            base += f"&dateTo={to}"
        last = max(0, (len(txs) - 1) // size)
        links = {"account": link(f"{ctx.base}/v1/accounts/{acc['id']}", "GET"),
                 "first": link(f"{base}&page=0&pageSize={size}", "GET"),
                 "last": link(f"{base}&page={last}&pageSize={size}", "GET")}
        if page < last:
            links["next"] = link(f"{base}&page={page + 1}&pageSize={size}", "GET")
        if page > 0:
            links["previous"] = link(f"{base}&page={page - 1}&pageSize={size}", "GET")
        return 200, {"account": {"bban": acc["bban"], "currency": acc["currency"]},
                     "transactions": {"booked": booked, "pending": [], "_links": links}}


@route("GET", "/v1/accounts/{aid}/transactions/{tid}", E8_SET)
def e8(ctx):
    with LOCK:
        c, acc = account_in_consent(ctx, ctx.params["aid"])
        if (dt.datetime.now(dt.timezone.utc) - c["scaAt"]) > dt.timedelta(days=90):
            raise ApiError(401, "CONSENT_EXPIRED", "transaction details need a consent at most 90 days old")
        if "psu-ip-address" not in ctx.h:
            k = (ctx.tpp, c["consentId"], today_oslo().isoformat())
            n = DB["e8_calls"].get(k, 0)
            if n >= 4:
                raise ApiError(429, "ACCESS_EXCEEDED", "at most 4 transaction details calls per day without PSU-IP-Address")
            DB["e8_calls"][k] = n + 1
        x = next((t for t in acc["transactions"] if t["id"] == ctx.params["tid"]), None)
        if not x:
            raise ApiError(404, "RESOURCE_UNKNOWN", "transaction not found")
        d = {"transactionId": x["id"], "bookingDate": x["bookingDate"], "valueDate": x["valueDate"],
             "transactionAmount": {"amount": amount_str(x["amount"], x["currency"]), "currency": x["currency"]},
             "creditorName": x["creditorName"][:70], "debtorName": x["debtorName"][:70],
             "creditorAccount": {k: v for k, v in x["creditorAccount"].items() if v},
             "debtorAccount": {k: v for k, v in x["debtorAccount"].items() if v},
             "remittanceInformationUnstructured": x["remittanceInformationUnstructured"][:140],
             "bankTransactionCode": x["bankTransactionCode"], "proprietaryBankTransactionCode": x["bankTransactionCode"][:35]}
        if x.get("purposeCode"):
            d["purposeCode"] = x["purposeCode"][:4]
        if x.get("paymentId"):
            d["endToEndId"] = x["paymentId"].replace("-", "")[:35]
        if ctx.h.get("psu-context") == "CORPORATE":
            d["_links"] = {"self": link(f"{ctx.base}/v1/accounts/{acc['id']}/transactions/{x['id']}", "GET")}
        return 200, {"transactionsDetails": d}


# ---------------------------------------------------------------- sandbox
def sb_customer_view(c, with_acc, with_agr, base):
    return {"customerId": c["customerId"], "customerNumber": c["customerNumber"], "customerType": c["customerType"],
            "customerName": c["customerName"],
            "agreements": [{"id": a["id"], "name": a["name"], "engagements": [e["id"] for e in a["engagements"]],
                            "_links": {"self": link(f"{base}/v1/sandbox/agreements/{a['id']}", "GET"),
                                       "engagements": link(f"{base}/v1/sandbox/agreements/{a['id']}/engagements", "POST")}}
                           for a in DB["agreements"].values()
                           if a.get("owner") == c["customerNumber"] or any(e["customer"] == c["customerNumber"] for e in a["engagements"])]
            if with_agr else [],
            "accounts": [a["id"] for a in DB["accounts"].values() if a["customerNumber"] == c["customerNumber"]] if with_acc else [],
            "cardAccounts": [a["resourceId"] for a in DB["card_accounts"].values() if a["customerNumber"] == c["customerNumber"]] if with_acc else [],
            "_links": {"self": link(f"{base}/v1/sandbox/customers/{c['customerId']}", "GET")}}


@route("POST", "/v1/sandbox/customers", WITH_DIGEST)
def sb_customers_create(ctx):
    b = ctx.json()
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be an object")
    if b.get("customerType") not in ("PRIVATE", "CORPORATE"):
        raise ApiError(400, "FORMAT_ERROR", "customerType must be PRIVATE or CORPORATE")
    opt_str(b, "customerName", "", 70, 1, required=True)
    cid = b.get("customerId") or new_id()
    if not isinstance(cid, str) or not UUID_RE.match(cid):
        raise ApiError(400, "FORMAT_ERROR", "customerId must be a UUID")
    with LOCK:
        num = b.get("customerNumber") or str(10000000 + len(DB["customers"]) * 7 + 1)
        if not isinstance(num, str) or not re.match(r"^\d{1,11}$", num):
            raise ApiError(400, "FORMAT_ERROR", "customerNumber must be 1 to 11 digits")
        if any(c["customerNumber"] == num or c["customerId"] == cid for c in DB["customers"].values()):
            raise ApiError(409, "CONFLICT", "customer already exists")
        c = {"customerId": cid, "customerNumber": num, "customerType": b["customerType"], "customerName": b["customerName"]}
        DB["customers"][cid] = c
        return 201, sb_customer_view(c, True, True, ctx.base)


@route("GET", "/v1/sandbox/customers")
def e9(ctx):
    wa = q_bool(ctx, "withAccounts", False)
    wg = q_bool(ctx, "withAgreements", False)
    with LOCK:
        return 200, [sb_customer_view(c, wa, wg, ctx.base) for c in DB["customers"].values()]


def find_customer(num):
    c = next((c for c in DB["customers"].values() if num in (c["customerNumber"], c["customerId"])), None)
    if not c:
        raise ApiError(400, "RESOURCE_UNKNOWN", f"customer {num} is unknown")
    return c


def check_balances(arr, path):
    if not isinstance(arr, list):
        raise ApiError(400, "FORMAT_ERROR", f"{path} must be an array")
    for i, bl in enumerate(arr):
        if not isinstance(bl, dict) or not isinstance(bl.get("balanceAmount"), dict):
            raise ApiError(400, "FORMAT_ERROR", f"{path}[{i}].balanceAmount is required")
        check_currency(bl["balanceAmount"].get("currency"), f"{path}[{i}].balanceAmount.currency")
        check_int32(bl["balanceAmount"].get("amount"), f"{path}[{i}].balanceAmount.amount")
        if bl.get("balanceType") not in ("closingBooked", "expected"):
            raise ApiError(400, "FORMAT_ERROR", f"{path}[{i}].balanceType must be closingBooked or expected")
    return [{"balanceAmount": {"currency": x["balanceAmount"]["currency"], "amount": x["balanceAmount"]["amount"]},
             "balanceType": x["balanceType"]} for x in arr]


def account_view(a, base):
    href = f"{base}/v1/sandbox/accounts/{a['id']}"
    return {k: a[k] for k in ("id", "customerNumber", "accountName", "bban", "iban", "currency", "product",
                              "cashAccountType", "creditLine", "balances")} | \
        {"_links": {"self": link(href, "GET"), "transactions": link(href + "/transactions", "GET", "POST")}}


@route("POST", "/v1/sandbox/accounts", WITH_DIGEST)
def sb_accounts_create(ctx):
    b = ctx.json()
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be an object")
    for f in ("customerNumber", "accountName", "bban", "iban", "product"):
        opt_str(b, f, "", {"bban": 30, "iban": 34, "accountName": 70}.get(f), 1, required=True)
    check_currency(b.get("currency"), "currency")
    cat = b.get("cashAccountType", "CACC")
    if cat not in CASH_TYPES:
        raise ApiError(400, "FORMAT_ERROR", "cashAccountType is not supported")
    cl = check_int32(b.get("creditLine", 0), "creditLine")
    bals = check_balances(b.get("balances", []), "balances")
    with LOCK:
        cust = find_customer(b["customerNumber"])
        if any(a["bban"] == b["bban"] or a["iban"] == b["iban"] for a in DB["accounts"].values()):
            raise ApiError(409, "CONFLICT", "an account with this bban or iban exists")
        aid = new_id()
        a = {"id": aid, "customerNumber": cust["customerNumber"], "accountName": b["accountName"], "bban": b["bban"],
             "iban": b["iban"], "currency": b["currency"], "product": b["product"], "cashAccountType": cat,
             "creditLine": cl, "balances": bals, "transactions": []}
        DB["accounts"][aid] = a
        return 201, account_view(a, ctx.base)


def get_account(aid):
    a = DB["accounts"].get(aid)
    if not a:
        raise ApiError(404, "RESOURCE_UNKNOWN", "sandbox account not found")
    return a


@route("GET", "/v1/sandbox/accounts/{aid}")
def e12(ctx):
    with LOCK:
        return 200, [account_view(get_account(ctx.params["aid"]), ctx.base)]


@route("PUT", "/v1/sandbox/accounts/{aid}/balances", WITH_DIGEST)
def e15(ctx):
    b = ctx.json()
    bals = check_balances(b, "")
    if not bals:
        raise ApiError(400, "FORMAT_ERROR", "at least one balance is required")
    with LOCK:
        a = get_account(ctx.params["aid"])
        for nb in bals:
            if nb["balanceAmount"]["currency"] != a["currency"]:
                raise ApiError(400, "FORMAT_ERROR", "balance currency differs from the account currency")
        a["balances"] = [x for x in a["balances"] if x["balanceType"] not in {n["balanceType"] for n in bals}] + bals
        return 204, None


def check_sandbox_dates(booking, value, path):
    bd = parse_date(booking, path + "bookingDate", required=True)
    vd = parse_date(value, path + "valueDate" if "transactionDate" not in path else path, required=True)
    t = today_oslo()
    if bd > t or vd > t:
        raise ApiError(400, "FORMAT_ERROR", f"{path} booking and value dates must be before now (Europe/Oslo)")
    if bd > vd:
        raise ApiError(400, "FORMAT_ERROR", f"{path} bookingDate must not be after the value date")


def tx_view(a, x, base):
    v = {k: x[k] for k in ("id", "amount", "currency", "valueDate", "bookingDate", "remittanceInformationUnstructured",
                           "creditorName", "creditorAccount", "debtorName", "debtorAccount", "bankTransactionCode",
                           "ultimateDebtor", "ultimateCreditor", "purposeCode")}
    v["_links"] = {"self": link(f"{base}/v1/sandbox/accounts/{a['id']}/transactions/{x['id']}", "GET")}
    return v


@route("POST", "/v1/sandbox/accounts/{aid}/transactions", WITH_DIGEST)
def e7(ctx):
    b = ctx.json()
    if not isinstance(b, list) or not b:
        raise ApiError(400, "FORMAT_ERROR", "body must be a non-empty array")
    with LOCK:
        a = get_account(ctx.params["aid"])
        new = []
        for i, it in enumerate(b):
            p = f"[{i}]."
            if not isinstance(it, dict):
                raise ApiError(400, "FORMAT_ERROR", f"{p} must be an object")
            for f in ("currency", "valueDate", "bookingDate", "remittanceInformationUnstructured", "creditorName",
                      "debtorName", "bankTransactionCode", "ultimateDebtor", "ultimateCreditor", "purposeCode", "creditorId"):
                if not isinstance(it.get(f), str):
                    raise ApiError(400, "FORMAT_ERROR", f"{p}{f} is required")
            check_int32(it.get("amount"), p + "amount")
            check_currency(it["currency"], p + "currency")
            if not 4 <= len(it["bankTransactionCode"]) <= 14:
                raise ApiError(400, "FORMAT_ERROR", f"{p}bankTransactionCode must be 4 to 14 characters")
            for acc in ("creditorAccount", "debtorAccount"):
                o = it.get(acc)
                if not isinstance(o, dict) or not isinstance(o.get("iban"), str) or not isinstance(o.get("bban"), str):
                    raise ApiError(400, "FORMAT_ERROR", f"{p}{acc} needs iban and bban")
            check_sandbox_dates(it["bookingDate"], it["valueDate"], p)
            d = it["debtorAccount"]
            if d["iban"] != a["iban"] or d["bban"] != a["bban"]:
                raise ApiError(400, "FORMAT_ERROR", f"{p}debtorAccount is another account than {a['bban']}")
            x = {k: it[k] for k in it if k != "_links"}
            x["id"] = new_id()
            new.append(x)
        a["transactions"].extend(new)
        return 201, [tx_view(a, x, ctx.base) for x in new]


@route("GET", "/v1/sandbox/accounts/{aid}/transactions")
def e3(ctx):
    frm = parse_date(ctx.q("fromDate"), "fromDate")
    to = parse_date(ctx.q("toDate"), "toDate")
    off = q_int(ctx, "offset", 0, 0)
    lim = q_int(ctx, "limit", 1, 200)
    with LOCK:
        a = get_account(ctx.params["aid"])
        xs = [x for x in a["transactions"] if (not frm or x["bookingDate"] >= frm.isoformat())
              and (not to or x["bookingDate"] <= to.isoformat())]
        return 200, [tx_view(a, x, ctx.base) for x in xs[off:off + lim]]


@route("GET", "/v1/sandbox/accounts/{aid}/transactions/{tid}")
def e11(ctx):
    with LOCK:
        a = get_account(ctx.params["aid"])
        x = next((t for t in a["transactions"] if t["id"] == ctx.params["tid"]), None)
        if not x:
            raise ApiError(404, "RESOURCE_UNKNOWN", "transaction not found")
        return 200, tx_view(a, x, ctx.base)


def card_view(c, base):
    href = f"{base}/v1/sandbox/card-accounts/{c['resourceId']}"
    v = {k: c[k] for k in ("resourceId", "maskedPan", "currency", "creditLimit", "balances", "cardId", "cardIdVNo",
                           "accountNumber", "expiry", "name", "product", "status")}
    v["_links"] = {"self": link(href, "GET"), "transactions": link(href + "/transactions", "GET", "POST")}
    return {"cardAccount": v}


@route("POST", "/v1/sandbox/card-accounts", WITH_DIGEST)
def sb_card_create(ctx):
    b = ctx.json()
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be an object")
    for f in ("customerNumber", "maskedPan", "cardId", "cardIdVNo", "accountNumber", "expiry", "name", "product"):
        opt_str(b, f, "", 70, 1, required=True)
    check_currency(b.get("currency"), "currency")
    cl = b.get("creditLimit")
    if not isinstance(cl, dict):
        raise ApiError(400, "FORMAT_ERROR", "creditLimit is required")
    check_currency(cl.get("currency"), "creditLimit.currency")
    check_int32(cl.get("amount"), "creditLimit.amount")
    st = b.get("status", "enabled")
    if st not in ("enabled", "deleted", "blocked"):
        raise ApiError(400, "FORMAT_ERROR", "status must be enabled, deleted or blocked")
    bals = check_balances(b.get("balances", []), "balances")
    with LOCK:
        cust = find_customer(b["customerNumber"])
        rid = new_id()
        c = {k: b[k] for k in ("maskedPan", "cardId", "cardIdVNo", "accountNumber", "expiry", "name", "product", "currency")}
        c.update(resourceId=rid, creditLimit={"currency": cl["currency"], "amount": cl["amount"]}, status=st,
                 balances=bals, customerNumber=cust["customerNumber"], transactions=[])
        DB["card_accounts"][rid] = c
        return 201, card_view(c, ctx.base)


def get_card(cid):
    c = DB["card_accounts"].get(cid)
    if not c:
        raise ApiError(404, "RESOURCE_UNKNOWN", "card account not found")
    return c


@route("GET", "/v1/sandbox/card-accounts/{cid}")
def e10(ctx):
    with LOCK:
        return 200, card_view(get_card(ctx.params["cid"]), ctx.base)


def card_tx_out(c, xs, status):
    booked = [{k: x[k] for k in ("cardTransactionId", "bookingDate", "transactionDate", "transactionAmount",
                                  "originalAmount", "merchantCategoryCode")} for x in xs] if status in ("booked", "both") else []
    return {"cardAccount": {"maskedPan": c["maskedPan"]}, "cardTransactions": {"booked": booked, "pending": []}}


def money_int(o, path):
    if not isinstance(o, dict):
        raise ApiError(400, "FORMAT_ERROR", f"{path} is required")
    check_currency(o.get("currency"), path + ".currency")
    amt = o.get("amount")
    if isinstance(amt, str) and re.match(r"^-?\d{1,10}$", amt):
        amt = int(amt)
    check_int32(amt, path + ".amount")
    return {"currency": o["currency"], "amount": amt}


@route("POST", "/v1/sandbox/card-accounts/{cid}/transactions", WITH_DIGEST)
def e5(ctx):
    b = ctx.json()
    if not isinstance(b, list) or not b:
        raise ApiError(400, "FORMAT_ERROR", "body must be a non-empty array")
    with LOCK:
        c = get_card(ctx.params["cid"])
        new = []
        for i, it in enumerate(b):
            p = f"[{i}]."
            if not isinstance(it, dict):
                raise ApiError(400, "FORMAT_ERROR", f"{p} must be an object")
            for f in ("cardTransactionId", "terminalId", "bookingDate", "transactionDate", "merchantCategoryCode",
                      "cardAcceptorId", "maskedPan", "transactionDetails", "proprietaryBankTransactionCode",
                      "markupFeePercentage"):
                if not isinstance(it.get(f), str):
                    raise ApiError(400, "FORMAT_ERROR", f"{p}{f} is required")
            if it.get("invoiced") not in ("true", "false"):
                raise ApiError(400, "FORMAT_ERROR", f"{p}invoiced must be the string true or false")
            ta = money_int(it.get("transactionAmount"), p + "transactionAmount")
            oa = money_int(it.get("originalAmount"), p + "originalAmount")
            money_int(it.get("markupFee"), p + "markupFee")
            check_address(it.get("cardAcceptorAddress"), p + "cardAcceptorAddress", True)
            ce = it.get("currencyExchange")
            if ce is not None:
                if not isinstance(ce, dict):
                    raise ApiError(400, "FORMAT_ERROR", f"{p}currencyExchange must be an object")
                for f in ("sourceCurrency", "targetCurrency", "unitCurrency"):
                    check_currency(ce.get(f), f"{p}currencyExchange.{f}")
                opt_str(ce, "exchangeRate", p + "currencyExchange.", None, 1, required=True)
                parse_date(ce.get("quotationDate"), p + "currencyExchange.quotationDate", required=True)
            check_sandbox_dates(it["bookingDate"], it["transactionDate"], p + "transactionDate")
            if it["maskedPan"] != c["maskedPan"]:
                raise ApiError(400, "FORMAT_ERROR", f"{p}maskedPan belongs to another card")
            x = dict(it)
            x["transactionAmount"], x["originalAmount"] = ta, oa
            new.append(x)
        c["transactions"].extend(new)
        return 201, card_tx_out(c, new, "booked")


@route("GET", "/v1/sandbox/card-accounts/{cid}/transactions")
def e4(ctx):
    st = ctx.q("bookingStatus")
    if st is None:
        raise ApiError(400, "QUERY_PARAMETER_REQUIRED", "bookingStatus is required")
    if st not in ("booked", "pending", "both"):
        raise ApiError(400, "FORMAT_ERROR", "bookingStatus must be booked, pending or both")
    frm = parse_date(ctx.q("fromDate"), "fromDate")
    to = parse_date(ctx.q("toDate"), "toDate")
    off = q_int(ctx, "offset", 0, 0)
    lim = q_int(ctx, "limit", 1, 200)
    with LOCK:
        c = get_card(ctx.params["cid"])
        xs = [x for x in c["transactions"] if (not frm or x["bookingDate"] >= frm.isoformat())
              and (not to or x["bookingDate"] <= to.isoformat())][off:off + lim]
        return 200, card_tx_out(c, xs, st)


def agreement_view(ag, base):
    href = f"{base}/v1/sandbox/agreements/{ag['id']}"
    v = {"id": ag["id"], "name": ag["name"], "engagements": ag["engagements"],
         "_links": {"self": link(href, "GET"), "engagements": link(href + "/engagements", "POST")}}
    if ag.get("owner"):
        v["owner"] = ag["owner"]
    return v


@route("POST", "/v1/sandbox/agreements", WITH_DIGEST)
def sb_agreement_create(ctx):
    b = ctx.json()
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be an object")
    opt_str(b, "name", "", 70, 1, required=True)
    opt_str(b, "owner", "", 11, 1)
    with LOCK:
        if b.get("owner"):
            find_customer(b["owner"])
        agid = new_id()
        ag = {"id": agid, "name": b["name"], "owner": find_customer(b["owner"])["customerNumber"] if b.get("owner") else None,
              "engagements": []}
        DB["agreements"][agid] = ag
        return 201, agreement_view(ag, ctx.base)


def get_agreement(agid):
    ag = DB["agreements"].get(agid)
    if not ag:
        raise ApiError(404, "RESOURCE_UNKNOWN", "agreement not found")
    return ag


@route("GET", "/v1/sandbox/agreements/{agid}")
def e14(ctx):
    with LOCK:
        return 200, agreement_view(get_agreement(ctx.params["agid"]), ctx.base)


def engagement_out(e):
    return {"customer": e["customer"], "account": {"iban": e["account"]["iban"]}, "roles": e["roles"],
            "registerLimit": e["registerLimit"], "approvalLimit": e["approvalLimit"]}


@route("POST", "/v1/sandbox/agreements/{agid}/engagements", WITH_DIGEST)
def e6(ctx):
    b = ctx.json()
    if not isinstance(b, dict):
        raise ApiError(400, "FORMAT_ERROR", "body must be an object")
    opt_str(b, "customer", "", None, 1, required=True)
    acc = b.get("account")
    if not isinstance(acc, dict) or not isinstance(acc.get("iban"), str):
        raise ApiError(400, "FORMAT_ERROR", "account.iban is required")
    roles = b.get("roles")
    if not isinstance(roles, list) or not roles or any(r not in ROLES for r in roles) or len(set(roles)) != len(roles):
        raise ApiError(400, "FORMAT_ERROR", "roles must be a non-empty list of distinct known roles")
    check_int32(b.get("registerLimit"), "registerLimit")
    check_int32(b.get("approvalLimit"), "approvalLimit")
    with LOCK:
        ag = get_agreement(ctx.params["agid"])
        cust = find_customer(b["customer"])
        a = next((x for x in DB["accounts"].values() if x["iban"] == acc["iban"]), None)
        if not a:
            raise ApiError(400, "RESOURCE_UNKNOWN", "account is unknown")
        if not ag.get("owner") or a["customerNumber"] != ag["owner"]:
            raise ApiError(400, "FORBIDDEN", "the account must be owned by the agreement owner")
        e = {"id": new_id(), "customer": cust["customerNumber"], "account": {"bban": a["bban"], "iban": a["iban"]},
             "roles": list(roles), "accessRights": "VIEW" in roles,
             "paymentRights": "REGISTER" in roles or "APPROVE" in roles,
             "transferRights": "INTERNAL_TRANSFER" in roles,
             "registerLimit": b["registerLimit"], "approvalLimit": b["approvalLimit"]}
        ag["engagements"].append(e)
        return 201, engagement_out(e), {"Location": f"{ctx.base}/v1/sandbox/agreements/{ag['id']}/engagements/{e['id']}",
                                        "X-Engagement-ID": e["id"]}


@route("GET", "/v1/sandbox/agreements/{agid}/engagements/{eid}", WITH_DIGEST)
def e13(ctx):
    with LOCK:
        ag = get_agreement(ctx.params["agid"])
        e = next((x for x in ag["engagements"] if x["id"] == ctx.params["eid"]), None)
        if not e:
            raise ApiError(404, "RESOURCE_UNKNOWN", "engagement not found")
        return 200, engagement_out(e)


@route("POST", "/v1/sandbox/batch-runs", BASE)
def sb_batch(ctx):
    with LOCK:
        return 200, {"movedPayments": batch_run()}


def batch_scheduler():
    import time
    done = set()
    while True:
        n = dt.datetime.now(OSLO)
        slot = (n.date().isoformat(), n.hour)
        if n.hour in (6, 9, 12, 15, 18) and slot not in done:
            done.add(slot)
            with LOCK:
                batch_run()
        time.sleep(30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--trust", action="append", required=True)
    a = ap.parse_args()
    for path in a.trust:
        with open(path, "rb") as f:
            data = f.read()
        for blk in re.findall(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", data, re.S):
            TRUST.append(x509.load_pem_x509_certificate(blk))
    threading.Thread(target=batch_scheduler, daemon=True).start()
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    print(f"listening on {a.host}:{a.port}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
