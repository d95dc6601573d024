"""independent-4: lean in-memory PSD2-style bank (asyncio streams, own HTTP/1.1 parser)."""
import argparse, asyncio, base64, binascii, datetime as dt, hashlib, json, re, uuid
from urllib.parse import urlsplit, parse_qs, quote
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa, ec

SYSTEM = "independent-4"
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
ROLES = {"OWNER", "DISPOSAL", "VIEW", "REGISTER", "APPROVE", "INTERNAL_TRANSFER", "SALARY"}
REG_CODES = set("14 26 29 31 35 38 41 43 45 51 52 53 71 79 81 82".split())
FREQ = set("Daily Weekly EveryTwoWeeks Monthly EveryTwoMonths Quarterly SemiAnnual Annual MonthlyVariable".split())
CASH_TYPES = set("CACC CASH CHAR CISH COMM CPAC LLSV LOAN MGLD MOMA NREX ODFT ONDP OTHR SACC SLRY SVGS TAXE TRAN TRAS".split())
BIC_RE = re.compile(r"[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?")
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
STATUS_TEXT = {200: "OK", 201: "Created", 204: "No Content", 302: "Found", 400: "Bad Request", 401: "Unauthorized",
               403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 411: "Length Required",
               413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error"}
SIGNED_IF_PRESENT = ["date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"]


class ApiError(Exception):
    def __init__(self, status, code, message=None):
        self.status, self.code, self.message = status, code, message


def bad(msg, code="FORMAT_ERROR"):
    return ApiError(400, code, msg)


def notfound(msg="resource not found"):
    return ApiError(404, "RESOURCE_UNKNOWN", msg)


def unauth(msg, code="SIGNATURE_INVALID"):
    return ApiError(401, code, msg)


# ---------------------------------------------------------------- state
class State:
    def __init__(self):
        self.payments, self.baskets, self.auths, self.consents = {}, {}, {}, {}
        self.customers, self.accounts, self.cards, self.agreements = {}, {}, {}, {}
        self.e8_calls = {}  # (consentId, date) -> count
        self.seq = 10000000


S = State()
TRUST = []


def nid():
    return str(uuid.uuid4())


def link(href, *verbs):
    return {"href": href, "verbs": list(verbs or ["GET"])}


def today():
    return dt.datetime.now(dt.timezone.utc).date()


# ---------------------------------------------------------------- validation helpers
def req_obj(d, key, path=""):
    v = d.get(key)
    if not isinstance(v, dict):
        raise bad(f"{path}{key} is required and must be an object")
    return v


def opt_str(d, key, maxlen=None, minlen=0, path="", required=False):
    if key not in d or d[key] is None:
        if required:
            raise bad(f"{path}{key} is required")
        return None
    v = d[key]
    if not isinstance(v, str):
        raise bad(f"{path}{key} must be a string")
    if len(v) < minlen or (maxlen is not None and len(v) > maxlen):
        raise bad(f"{path}{key} has an invalid length")
    return v


def req_str(d, key, maxlen=None, minlen=1, path=""):
    return opt_str(d, key, maxlen, minlen, path, True)


def check_currency(v, path):
    if not isinstance(v, str) or v not in CURRENCIES:
        raise bad(f"{path} is not a supported currency")
    return v


def check_date(v, path, required=False):
    if v is None:
        if required:
            raise bad(f"{path} is required")
        return None
    if not isinstance(v, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        raise bad(f"{path} must be an ISO 8601 date")
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise bad(f"{path} must be an ISO 8601 date")


def check_int32(v, path):
    if isinstance(v, bool) or not isinstance(v, int) or not (-2**31 <= v < 2**31):
        raise bad(f"{path} must be an int32")
    return v


def minor_units(cur):
    return 0 if cur in ZERO_DEC else 3 if cur in THREE_DEC else 2


def check_amount(obj, path):
    amt = obj.get("amount")
    cur = check_currency(obj.get("currency"), path + ".currency")
    if not isinstance(amt, str):
        raise bad(f"{path}.amount must be a string")
    m = minor_units(cur)
    pat = r"\d{1,13}" + (r"\.\d{%d}" % m if m else "")
    if not re.fullmatch(pat, amt):
        raise bad(f"{path}.amount must have {m} fraction digits")
    if float(amt) <= 0:
        raise bad(f"{path}.amount must be positive")
    return float(amt), cur


def fmt_amount(value, cur):
    m = minor_units(cur)
    return f"{value:.{m}f}"


def kid_valid(s):
    if not re.fullmatch(r"\d{2,25}", s):
        return False
    digits = [int(c) for c in s]
    # MOD10 (Luhn)
    tot = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            d = d - 9 if d > 9 else d
        tot += d
    if tot % 10 == 0:
        return True
    # MOD11
    body, check = s[:-1], s[-1]
    w, tot = 2, 0
    for c in reversed(body):
        tot += int(c) * w
        w = 2 if w == 7 else w + 1
    r = 11 - tot % 11
    exp = "0" if r == 11 else "-" if r == 10 else str(r)
    return exp == check


def check_structured(item, path):
    if not isinstance(item, dict):
        raise bad(f"{path} must be an object")
    ref = req_str(item, "reference", 35, 1, path + ".")
    rt = opt_str(item, "referenceType", 35, 1, path + ".")
    opt_str(item, "referenceIssuer", 35, 1, path + ".")
    if rt is not None and rt.upper() in ("KID", "OCR", "SCOR") and not kid_valid(ref):
        raise ApiError(400, "KID_INVALID", f"{path}.reference is not a valid KID")


def check_acct_ref(a, path, allow_iban=True, allow_other=False, exactly_one=False):
    if not isinstance(a, dict):
        raise bad(f"{path} is required and must be an object")
    check_currency(a.get("currency"), path + ".currency")
    bban = opt_str(a, "bban", 30, 1, path + ".")
    iban = opt_str(a, "iban", 34, 1, path + ".") if allow_iban else None
    if not allow_iban and "iban" in a:
        raise bad(f"{path}.iban is not allowed")
    other = None
    if allow_other and "other" in a:
        other = a["other"]
        if not isinstance(other, dict):
            raise bad(f"{path}.other must be an object")
        req_str(other, "identification", None, 1, path + ".other.")
        if other.get("schemeNameProprietary") != "creditCardAccount":
            raise bad(f"{path}.other.schemeNameProprietary must be creditCardAccount")
    n = sum(x is not None for x in (bban, iban, other))
    if exactly_one and n != 1:
        raise bad(f"{path} needs exactly one account identifier")
    if n == 0:
        raise bad(f"{path} needs an account identifier")
    return bban, iban


def check_address(a, path, required):
    if a is None:
        if required:
            raise bad(f"{path} is required")
        return
    if not isinstance(a, dict):
        raise bad(f"{path} must be an object")
    opt_str(a, "street", 70, 0, path + ".")
    for k in ("buildingNumber", "postalCode", "city"):
        opt_str(a, k, None, 0, path + ".")
    if a.get("country") not in COUNTRIES:
        raise bad(f"{path}.country is required and must be a supported country code")


def check_common_payment(b):
    if not isinstance(b, dict):
        raise bad("body must be a JSON object")
    amount, cur = check_amount(req_obj(b, "instructedAmount"), "instructedAmount")
    req_str(b, "creditorName", 70)
    opt_str(b, "ultimateDebtor", 70)
    opt_str(b, "remittanceInformationUnstructured", 140, 1)
    if "purposeCode" in b and b["purposeCode"] not in PURPOSE:
        raise bad("purposeCode is not supported")
    return amount, cur


def validate_ndct(b):
    amount, cur = check_common_payment(b)
    if "creditorAgent" in b and (not isinstance(b["creditorAgent"], str) or not BIC_RE.fullmatch(b["creditorAgent"])):
        raise bad("creditorAgent is not a valid BIC")
    check_acct_ref(b.get("creditorAccount"), "creditorAccount", allow_iban=False)
    if not isinstance(b["creditorAccount"].get("bban"), str):
        raise bad("creditorAccount.bban is required")
    if b["creditorAccount"]["currency"] != "NOK" and "creditorAgent" not in b:
        raise bad("creditorAgent is required for payments to currency accounts")
    check_address(b.get("creditorAddress"), "creditorAddress", True)
    check_acct_ref(b.get("debtorAccount"), "debtorAccount", allow_iban=False, allow_other=True, exactly_one=True)
    if "remittanceInformationStructured" in b:
        check_structured(b["remittanceInformationStructured"], "remittanceInformationStructured")
    if "remittanceInformationStructuredArray" in b:
        arr = b["remittanceInformationStructuredArray"]
        if not isinstance(arr, list) or not arr:
            raise bad("remittanceInformationStructuredArray must be a non-empty array")
        for i, it in enumerate(arr):
            check_structured(it, f"remittanceInformationStructuredArray[{i}]")
        if "remittanceInformationUnstructured" in b:
            raise bad("remittanceInformationUnstructured and remittanceInformationStructuredArray are mutually exclusive")
    check_exec_date(b)
    return amount, cur


def check_exec_date(b):
    d = check_date(b.get("requestedExecutionDate"), "requestedExecutionDate")
    if d is not None and d < today():
        raise bad("requestedExecutionDate is in the past", "EXECUTION_DATE_INVALID")


def validate_periodic(b):
    amount, cur = check_common_payment(b)
    check_acct_ref(b.get("creditorAccount"), "creditorAccount")
    check_address(b.get("creditorAddress"), "creditorAddress", False)
    check_acct_ref(b.get("debtorAccount"), "debtorAccount")
    start = check_date(b.get("startDate"), "startDate", True)
    end = check_date(b.get("endDate"), "endDate")
    if end is not None and end < start:
        raise bad("endDate is before startDate")
    if "executionRule" in b and b["executionRule"] not in ("following", "preceeding"):
        raise bad("executionRule must be following or preceeding")
    if b.get("frequency") not in FREQ:
        raise bad("frequency is required and must be a supported value")
    if "dayOfExecution" in b:
        d = b["dayOfExecution"]
        if not isinstance(d, str) or not re.fullmatch(r"\d{1,2}", d) or not 1 <= int(d) <= 31:
            raise bad("dayOfExecution must be a day of month")
    months = b.get("monthsOfExecution")
    if b["frequency"] == "MonthlyVariable" and months is None:
        raise bad("monthsOfExecution is required for MonthlyVariable")
    if months is not None:
        if not isinstance(months, list) or not 1 <= len(months) <= 11:
            raise bad("monthsOfExecution must list 1 to 11 months")
        for m in months:
            if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 12:
                raise bad("monthsOfExecution items must be months 1-12")
        if len(set(months)) != len(months):
            raise bad("monthsOfExecution lists a month more than once")
    return amount, cur


def validate_ncbct(b):
    amount, cur = check_common_payment(b)
    bban, iban = check_acct_ref(b.get("creditorAccount"), "creditorAccount")
    agent = b.get("creditorAgent")
    if agent is not None and (not isinstance(agent, str) or not BIC_RE.fullmatch(agent)):
        raise bad("creditorAgent is not a valid BIC")
    if bban is not None and agent is None:
        raise bad("creditorAgent is required when creditorAccount is a BBAN")
    check_address(b.get("creditorAddress"), "creditorAddress", False)
    check_acct_ref(b.get("debtorAccount"), "debtorAccount")
    check_exec_date(b)
    code = b.get("regulatoryReportingCode")
    info = opt_str(b, "regulatoryReportingInformation", 140, 1)
    if code is not None and code not in REG_CODES:
        raise bad("regulatoryReportingCode is not supported")
    if cur == "NOK" and amount >= 100000 and (code is None or info is None):
        raise bad("regulatory reporting is required for transfers of NOK 100 000 or more")
    return amount, cur


# ---------------------------------------------------------------- authentication
def b64d(s):
    return base64.b64decode(s.strip(), validate=False)


def load_cert(val):
    val = val.strip()
    if "BEGIN CERTIFICATE" in val:
        return x509.load_pem_x509_certificate(val.encode())
    raw = base64.b64decode(val, validate=True)
    if b"BEGIN CERTIFICATE" in raw:
        return x509.load_pem_x509_certificate(raw)
    return x509.load_der_x509_certificate(raw)


def rfc2047(v):
    m = re.fullmatch(r"=\?([^?]+)\?([BbQq])\?(.*)\?=", v.strip(), re.S)
    if not m:
        return v
    cs, enc, data = m.groups()
    if enc in "Bb":
        raw = base64.b64decode(data)
    else:
        raw = re.sub(r"=([0-9A-Fa-f]{2})", lambda x: chr(int(x.group(1), 16)), data.replace("_", " ")).encode("latin-1")
    return raw.decode(cs)


def parse_signature(h):
    h = rfc2047(h)
    params = {}
    for m in re.finditer(r'\s*([A-Za-z]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)', h):
        params[m.group(1)] = rfc2047(m.group(2))
    return params


DN_KEYS = {"COMMONNAME": "CN", "ORGANIZATIONNAME": "O", "COUNTRYNAME": "C", "LOCALITYNAME": "L",
           "STATEORPROVINCENAME": "ST", "S": "ST", "ORGANIZATIONALUNITNAME": "OU", "EMAILADDRESS": "E",
           "1.2.840.113549.1.9.1": "E", "2.5.4.97": "ORGANIZATIONIDENTIFIER", "2.5.4.5": "SERIALNUMBER",
           "STREETADDRESS": "STREET", "DOMAINCOMPONENT": "DC"}


def dn_parts(s):
    parts = re.split(r"\s*[,/]\s*(?=[A-Za-z.0-9]+=)", s.strip())
    out = set()
    for p in parts:
        if "=" in p:
            k, v = p.split("=", 1)
            k = k.strip().upper()
            k = DN_KEYS.get(k, k)
            out.add((k, re.sub(r"\\(.)", r"\1", v.strip())))
    return out


def issuer_trusted(cert):
    now = dt.datetime.now(dt.timezone.utc)
    if not (cert.not_valid_before_utc <= now <= cert.not_valid_after_utc):
        return False
    for ca in TRUST:
        if ca.subject != cert.issuer:
            continue
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except Exception:
            continue
    return False


def authenticate(req):
    hdr = req["headers"]
    certv, sigv = hdr.get("tpp-signature-certificate"), hdr.get("signature")
    if not certv:
        raise unauth("TPP-Signature-Certificate is missing", "SIGNATURE_INVALID")
    if not sigv:
        raise unauth("Signature is missing")
    try:
        cert = load_cert(certv)
    except Exception:
        raise unauth("TPP-Signature-Certificate cannot be read")
    if not issuer_trusted(cert):
        raise unauth("TPP certificate is not issued by a trusted CA or not valid now")
    try:
        p = parse_signature(sigv)
    except Exception:
        raise unauth("Signature header cannot be parsed")
    for k in ("keyId", "signature"):
        if k not in p:
            raise unauth(f"Signature has no {k}")
    m = re.fullmatch(r"SN=(?:0x)?([0-9A-Fa-f:]+),\s*CA=(.+)", p["keyId"].strip(), re.S)
    if not m:
        raise unauth("keyId must be SN=<serial_hex>,CA=<issuer DN>")
    if int(m.group(1).replace(":", ""), 16) != cert.serial_number:
        raise unauth("keyId serial number does not match the certificate")
    want = dn_parts(cert.issuer.rfc4514_string())
    if dn_parts(m.group(2)) != want:
        raise unauth("keyId CA does not match the certificate issuer")
    if p.get("algorithm", "rsa-sha256").lower() != "rsa-sha256" or not isinstance(cert.public_key(), rsa.RSAPublicKey):
        raise unauth("algorithm must be rsa-sha256 with an RSA certificate")
    names = p.get("headers", "date").lower().split()
    for need in SIGNED_IF_PRESENT:
        if need in hdr and need not in names:
            raise unauth(f"header {need} must be signed")
    lines = []
    for n in names:
        if n == "(request-target)":
            lines.append(f"(request-target): {req['method'].lower()} {req['target']}")
        elif n in hdr:
            lines.append(f"{n}: {hdr[n]}")
        else:
            raise unauth(f"signed header {n} is not in the request")
    try:
        sig = base64.b64decode(p["signature"], validate=True)
        cert.public_key().verify(sig, "\n".join(lines).encode(), padding.PKCS1v15(), hashes.SHA256())
    except Exception:
        raise unauth("signature does not verify")
    # Digest
    body = req["body"]
    dg = hdr.get("digest")
    if body and not dg:
        raise unauth("Digest is required for a request with a body")
    if dg:
        ok = False
        for part in dg.split(","):
            if "=" not in part:
                continue
            alg, val = part.split("=", 1)
            alg = alg.strip().upper()
            fn = {"SHA-256": hashlib.sha256, "SHA-512": hashlib.sha512}.get(alg)
            if fn and base64.b64encode(fn(body).digest()).decode() == val.strip():
                ok = True
        if not ok:
            raise unauth("Digest does not match the body")
    return cert


def need_headers(req, names):
    for n in names:
        if not req["headers"].get(n.lower(), "").strip():
            raise bad(f"header {n} is required")


def check_psu(req, payment=False):
    h = req["headers"]
    psu = h.get("psu-id")
    if psu is not None and not UUID_RE.fullmatch(psu.strip()):
        raise bad("PSU-ID must be a UUID")
    if payment:
        if not psu and not h.get("x-psu-identity"):
            raise bad("header PSU-ID (or X-PSU-IDENTITY) is required")
        if h.get("x-psu-identity") and not re.fullmatch(r"\d{11}", h["x-psu-identity"].strip()):
            raise bad("X-PSU-IDENTITY must be an 11-digit national identity or D-number")
    ctx = h.get("psu-context")
    if ctx is not None and ctx not in ("PRIVATE", "CORPORATE"):
        raise bad("PSU-Context must be PRIVATE or CORPORATE")
    if ctx == "CORPORATE" and not h.get("psu-corporate-id"):
        raise bad("PSU-Corporate-ID is required for a corporate user")


def parse_json(req):
    if not req["body"]:
        raise bad("a JSON body is required")
    try:
        return json.loads(req["body"].decode("utf-8"))
    except Exception:
        raise bad("body is not valid JSON")


def q_bool(req, name):
    v = req["query"].get(name)
    if v is None:
        return None
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise bad(f"query parameter {name} must be true or false")


def q_int(req, name, minimum=None):
    v = req["query"].get(name)
    if v is None:
        return None
    if not re.fullmatch(r"-?\d{1,10}", v) or not -2**31 <= int(v) < 2**31:
        raise bad(f"query parameter {name} must be an int32")
    if minimum is not None and int(v) < minimum:
        raise bad(f"query parameter {name} must be at least {minimum}")
    return int(v)


# ---------------------------------------------------------------- payments, baskets, SCA
PAY_HEADERS = ["x-accept-fix", "X-Request-ID", "TPP-Session-ID", "TPP-Redirect-URI", "PSU-IP-Address"]


def new_auth(kind, target, req):
    aid = nid()
    S.auths[aid] = {"id": aid, "kind": kind, "target": target, "scaStatus": "STARTED",
                    "redirect": req["headers"].get("tpp-redirect-uri")}
    return aid


def sca_link(req, aid):
    return link(f"{req['base']}/sca/{aid}", "GET")


def create_payment(req, service, product):
    need_headers(req, PAY_HEADERS)
    check_psu(req, payment=True)
    body = parse_json(req)
    if service == "periodic-payments":
        if product != NDCT:
            raise ApiError(403, "PRODUCT_INVALID", "periodic payments exist only for " + NDCT)
        amount, cur = validate_periodic(body)
    elif product == NDCT:
        amount, cur = validate_ndct(body)
    elif product == NCBCT:
        amount, cur = validate_ncbct(body)
    else:
        raise ApiError(403, "PRODUCT_INVALID", "unknown payment product")
    allow_dup = q_bool(req, "allowLogicalDuplicate")
    psu = req["headers"].get("psu-id") or req["headers"].get("x-psu-identity")
    key = json.dumps([service, product, psu, body], sort_keys=True)
    if allow_dup is False and any(p["key"] == key for p in S.payments.values()):
        raise ApiError(409, "CONFLICT", "a logical duplicate of this payment exists")
    pid = nid()
    S.payments[pid] = {"id": pid, "service": service, "product": product, "body": body, "key": key,
                       "status": "RCVD", "periodic": service == "periodic-payments", "amount": amount, "cur": cur,
                       "psu": psu}
    aid = new_auth("payment", pid, req)
    S.payments[pid]["auth"] = aid
    base = f"{req['base']}/v1/{service}/{product}/{pid}"
    return 201, {"paymentId": pid, "transactionStatus": "RCVD",
                 "_links": {"scaRedirect": sca_link(req, aid), "self": link(base), "status": link(base + "/status"),
                            "startAuthorisation": link(base + "/authorisations", "POST")}}


def get_payment(service, product, pid):
    p = S.payments.get(pid)
    if not p or p["service"] != service or p["product"] != product:
        raise notfound("payment not found")
    return p


def payment_status(req, service, product, pid):
    p = get_payment(service, product, pid)
    return 200, {"transactionStatus": p["status"]}


def start_payment_auth(req, service, product, pid):
    need_headers(req, ["X-Request-ID"])
    check_psu(req)
    p = get_payment(service, product, pid)
    if p["status"] != "RCVD":
        raise bad("payment is not awaiting authorisation", "RESOURCE_BLOCKED")
    aid = new_auth("payment", pid, req)
    base = f"{req['base']}/v1/{service}/{product}/{pid}/authorisations/{aid}"
    return 201, {"scaStatus": "STARTED", "_links": {"self": link(base), "scaRedirect": sca_link(req, aid)}}


def get_auth(kind, target, aid):
    a = S.auths.get(aid)
    if not a or a["kind"] != kind or a["target"] != target:
        raise notfound("authorisation not found")
    return 200, {"scaStatus": a["scaStatus"]}


RANK = {"RJCT": 0, "CANC": 0, "RCVD": 1, "PDNG": 1, "PART": 2}


def basket_status(b):
    sts = [S.payments[p]["status"] for p in b["paymentIds"]]
    if any(s in ("RJCT", "CANC") for s in sts):
        return "RJCT"
    done = [s not in ("RCVD", "PDNG", "PART") for s in sts]
    if all(done):
        return "ACTC"
    if any(done):
        return "PATC"
    return "RCVD"


def create_basket(req):
    need_headers(req, PAY_HEADERS)
    if not req["headers"].get("psu-id"):
        raise bad("header PSU-ID is required")
    check_psu(req)
    body = parse_json(req)
    ids = body.get("paymentIds") if isinstance(body, dict) else None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise bad("paymentIds is required and must be a non-empty array of strings")
    if len(ids) > 10:
        raise bad("a signing basket holds at most 10 payments")
    if len(set(ids)) != len(ids):
        raise bad("paymentIds lists a payment more than once")
    for i in ids:
        if i not in S.payments:
            raise bad(f"payment {i} not found", "RESOURCE_UNKNOWN")
    if any(S.payments[i]["periodic"] for i in ids):
        raise bad("periodic or bulk payments cannot be added to a signing basket", "REFERENCE_MIX_INVALID")
    for i in ids:
        if S.payments[i]["status"] != "RCVD" or S.payments[i].get("basket"):
            raise bad(f"payment {i} is not awaiting authorisation", "RESOURCE_BLOCKED")
    bid = nid()
    S.baskets[bid] = {"id": bid, "paymentIds": ids, "auth": None}
    for i in ids:
        S.payments[i]["basket"] = bid
    base = f"{req['base']}/v1/signing-baskets/{bid}"
    return 201, {"basketId": bid, "transactionStatus": "RCVD",
                 "_links": {"self": link(base), "startAuthorisation": link(base + "/authorisations", "POST")}}


def start_basket_auth(req, bid):
    need_headers(req, ["X-Request-ID"])
    check_psu(req)
    b = S.baskets.get(bid)
    if not b:
        raise notfound("signing basket not found")
    if basket_status(b) != "RCVD" or (b["auth"] and S.auths[b["auth"]]["scaStatus"] == "FINALISED"):
        raise bad("signing basket is not awaiting authorisation", "RESOURCE_BLOCKED")
    aid = new_auth("basket", bid, req)
    b["auth"] = aid
    base = f"{req['base']}/v1/signing-baskets/{bid}/authorisations/{aid}"
    return 201, {"scaStatus": "STARTED", "_links": {"self": link(base), "scaRedirect": sca_link(req, aid)}}


def book_payment(p):
    """An authorised payment shows up as a transaction of the matching sandbox debtor account."""
    p["status"] = "ACTC"
    if p["periodic"]:
        return
    b = p["body"]
    da, ca = b.get("debtorAccount", {}), b.get("creditorAccount", {})
    for acc in S.accounts.values():
        if (da.get("bban") and da.get("bban") == acc["bban"]) or (da.get("iban") and da.get("iban") == acc["iban"]):
            d = today().isoformat()
            tid = nid()
            acc["transactions"][tid] = {
                "id": tid, "amount": -int(p["amount"]), "currency": p["cur"], "valueDate": d, "bookingDate": d,
                "remittanceInformationUnstructured": b.get("remittanceInformationUnstructured", ""),
                "creditorName": b.get("creditorName", ""),
                "creditorAccount": {"iban": ca.get("iban", ""), "bban": ca.get("bban", "")},
                "debtorName": acc["accountName"], "debtorAccount": {"iban": acc["iban"], "bban": acc["bban"]},
                "bankTransactionCode": "PMNT-ICDT-DMCT", "ultimateDebtor": b.get("ultimateDebtor", ""),
                "ultimateCreditor": "", "purposeCode": b.get("purposeCode", "OTHR"), "creditorId": ""}


def finish_sca(aid, customer_number, approve):
    a = S.auths.get(aid)
    if not a:
        raise notfound("authorisation not found")
    if a["scaStatus"] != "STARTED":
        raise bad("authorisation is already finished", "RESOURCE_BLOCKED")
    cust = next((c for c in S.customers.values() if c["customerNumber"] == customer_number), None)
    if approve and a["kind"] == "consent" and cust is None:
        raise bad("unknown customer number", "PSU_CREDENTIALS_INVALID")
    if approve and not customer_number:
        raise bad("customer number is required", "PSU_CREDENTIALS_INVALID")
    a["scaStatus"] = "FINALISED" if approve else "FAILED"
    if a["kind"] == "payment":
        p = S.payments[a["target"]]
        if p["status"] == "RCVD":
            book_payment(p) if approve else p.__setitem__("status", "RJCT")
    elif a["kind"] == "basket":
        for pid in S.baskets[a["target"]]["paymentIds"]:
            p = S.payments[pid]
            if p["status"] == "RCVD":
                book_payment(p) if approve else p.__setitem__("status", "RJCT")
    elif a["kind"] == "consent":
        c = S.consents[a["target"]]
        if approve:
            c["status"] = "valid"
            c["customer"] = cust["customerId"]
            c["validatedAt"] = dt.datetime.now(dt.timezone.utc)
            c["accounts"] = consent_accounts(cust)
        else:
            c["status"] = "rejected"
    return a


def consent_accounts(cust):
    ids = [a["id"] for a in S.accounts.values() if a["customerId"] == cust["customerId"]]
    for ag in S.agreements.values():
        for e in ag["engagements"]:
            if e["customerId"] == cust["customerId"] and {"REGISTER", "VIEW"} <= set(e["roles"]):
                acc = find_account_by_iban(e["account"]["iban"])
                if acc and acc["id"] not in ids:
                    ids.append(acc["id"])
    return ids


# ---------------------------------------------------------------- consents + accounts (for E8)
def create_consent(req):
    need_headers(req, ["X-Request-ID", "TPP-Redirect-URI"])
    check_psu(req)
    if req["body"]:
        parse_json(req)
    cid = nid()
    S.consents[cid] = {"id": cid, "status": "received", "customer": None, "accounts": [], "validatedAt": None}
    aid = new_auth("consent", cid, req)
    base = f"{req['base']}/v1/consents/{cid}"
    return 201, {"consentId": cid, "consentStatus": "received",
                 "_links": {"scaRedirect": sca_link(req, aid), "self": link(base), "status": link(base + "/status")}}


def consent_status(req, cid):
    c = S.consents.get(cid)
    if not c:
        raise notfound("consent not found")
    return 200, {"consentStatus": c["status"]}


def valid_consent(req):
    cid = req["headers"].get("consent-id")
    if not cid or cid not in S.consents:
        raise ApiError(401, "CONSENT_UNKNOWN", "Consent-ID is missing or unknown")
    c = S.consents[cid]
    if c["status"] != "valid":
        raise ApiError(401, "CONSENT_INVALID", "consent is not authorised")
    if dt.datetime.now(dt.timezone.utc) - c["validatedAt"] > dt.timedelta(days=90):
        raise ApiError(401, "CONSENT_EXPIRED", "consent is older than 90 days")
    return c


def prod_account(req, acc):
    return {"resourceId": acc["id"], "bban": acc["bban"], "iban": acc["iban"], "currency": acc["currency"],
            "name": acc["accountName"][:70 if "longer-name" in req["headers"].get("x-accept-fix", "") else 35],
            "_links": {"transactions": link(f"{req['base']}/v1/accounts/{acc['id']}/transactions")}}


def list_accounts(req):
    need_headers(req, ["X-Request-ID"])
    c = valid_consent(req)
    return 200, {"accounts": [prod_account(req, S.accounts[i]) for i in c["accounts"] if i in S.accounts]}


def consent_account(req, c, aid):
    if aid not in c["accounts"] or aid not in S.accounts:
        raise notfound("account not found for this consent")
    return S.accounts[aid]


def money(v, cur):
    return {"amount": fmt_amount(v, cur), "currency": cur}


def prod_tx_summary(req, acc, t):
    return {"transactionId": t["id"], "bookingDate": t["bookingDate"], "valueDate": t["valueDate"],
            "transactionAmount": money(t["amount"], t["currency"]), "creditorName": t["creditorName"],
            "debtorName": t["debtorName"], "remittanceInformationUnstructured": t["remittanceInformationUnstructured"],
            "_links": {"transactionDetails": link(f"{req['base']}/v1/accounts/{acc['id']}/transactions/{t['id']}")}}


def list_transactions(req, aid):
    need_headers(req, ["X-Request-ID"])
    c = valid_consent(req)
    acc = consent_account(req, c, aid)
    bs = req["query"].get("bookingStatus", "booked")
    if bs not in ("booked", "pending", "both", "all"):
        raise bad("bookingStatus must be booked, pending, both or all")
    frm = check_date(req["query"].get("dateFrom"), "dateFrom")
    to = check_date(req["query"].get("dateTo"), "dateTo")
    txs = [t for t in acc["transactions"].values()
           if (frm is None or t["bookingDate"] >= frm.isoformat()) and (to is None or t["bookingDate"] <= to.isoformat())]
    txs = txs[:200] if bs != "pending" else []
    return 200, {"account": {"bban": acc["bban"], "iban": acc["iban"], "currency": acc["currency"]},
                 "transactions": {"booked": [prod_tx_summary(req, acc, t) for t in txs], "pending": [],
                                  "_links": {"account": link(f"{req['base']}/v1/accounts/{acc['id']}")}}}


def transaction_details(req, aid, tid):
    need_headers(req, ["x-accept-fix", "X-Request-ID", "TPP-Session-ID", "TPP-Redirect-URI"])
    check_psu(req)
    c = valid_consent(req)
    acc = consent_account(req, c, aid)
    t = acc["transactions"].get(tid)
    if not t:
        raise notfound("transaction not found")
    if not req["headers"].get("psu-ip-address"):
        k = (c["id"], today().isoformat())
        if S.e8_calls.get(k, 0) >= 4:
            raise ApiError(429, "ACCESS_EXCEEDED", "at most 4 transaction details calls per day without PSU-IP-Address")
        S.e8_calls[k] = S.e8_calls.get(k, 0) + 1
    d = {"transactionId": t["id"], "bookingDate": t["bookingDate"], "valueDate": t["valueDate"],
         "transactionAmount": money(t["amount"], t["currency"]),
         "creditorName": t["creditorName"][:70], "debtorName": t["debtorName"][:70]}
    ca = {k: v for k, v in t["creditorAccount"].items() if v}
    da = {k: v for k, v in t["debtorAccount"].items() if v}
    if ca:
        d["creditorAccount"] = ca
    if da:
        d["debtorAccount"] = da
    if t["remittanceInformationUnstructured"]:
        d["remittanceInformationUnstructured"] = t["remittanceInformationUnstructured"][:140]
    if 4 <= len(t["bankTransactionCode"]) <= 14:
        d["bankTransactionCode"] = t["bankTransactionCode"]
    if t["purposeCode"] and len(t["purposeCode"]) <= 4:
        d["purposeCode"] = t["purposeCode"]
    return 200, {"transactionsDetails": d}


# ---------------------------------------------------------------- sandbox
def sb_headers(req):
    need_headers(req, ["X-Request-ID"])
    check_psu(req)


def find_customer(ref):
    for c in S.customers.values():
        if ref in (c["customerId"], c["customerNumber"]):
            return c
    return None


def find_account_by_iban(iban):
    return next((a for a in S.accounts.values() if a["iban"] == iban), None)


def customer_view(req, c, with_accounts=True, with_agreements=True):
    ags = [a for a in S.agreements.values() if a["ownerId"] == c["customerId"]
           or any(e["customerId"] == c["customerId"] for e in a["engagements"])] if with_agreements else []
    return {"customerId": c["customerId"], "customerNumber": c["customerNumber"], "customerType": c["customerType"],
            "customerName": c["customerName"],
            "agreements": [{"id": a["id"], "name": a["name"], "engagements": [e["id"] for e in a["engagements"]],
                            "_links": {"self": link(f"{req['base']}/v1/sandbox/agreements/{a['id']}"),
                                       "engagements": link(f"{req['base']}/v1/sandbox/agreements/{a['id']}")}}
                           for a in ags],
            "accounts": [a["id"] for a in S.accounts.values() if a["customerId"] == c["customerId"]] if with_accounts else [],
            "cardAccounts": [k["resourceId"] for k in S.cards.values() if k["customerId"] == c["customerId"]] if with_accounts else [],
            "_links": {"self": link(f"{req['base']}/v1/sandbox/customers/{c['customerId']}")}}


def sb_create_customer(req):
    sb_headers(req)
    b = parse_json(req)
    if not isinstance(b, dict):
        raise bad("body must be a JSON object")
    if b.get("customerType") not in ("PRIVATE", "CORPORATE"):
        raise bad("customerType must be PRIVATE or CORPORATE")
    name = req_str(b, "customerName", 70)
    num = opt_str(b, "customerNumber", 35, 1)
    if num is None:
        S.seq += 1
        num = str(S.seq)
    if find_customer(num):
        raise ApiError(409, "CONFLICT", "customerNumber already exists")
    cid = nid()
    S.customers[cid] = {"customerId": cid, "customerNumber": num, "customerType": b["customerType"], "customerName": name}
    return 201, customer_view(req, S.customers[cid])


def sb_get_customers(req):
    sb_headers(req)
    wa, wg = q_bool(req, "withAccounts"), q_bool(req, "withAgreements")
    return 200, [customer_view(req, c, bool(wa), bool(wg)) for c in S.customers.values()]


def check_balances(arr, path="balances"):
    if not isinstance(arr, list):
        raise bad(f"{path} must be an array")
    out = []
    for i, bl in enumerate(arr):
        if not isinstance(bl, dict) or not isinstance(bl.get("balanceAmount"), dict):
            raise bad(f"{path}[{i}].balanceAmount is required")
        ba = bl["balanceAmount"]
        check_currency(ba.get("currency"), f"{path}[{i}].balanceAmount.currency")
        check_int32(ba.get("amount"), f"{path}[{i}].balanceAmount.amount")
        if bl.get("balanceType") not in ("closingBooked", "expected"):
            raise bad(f"{path}[{i}].balanceType must be closingBooked or expected")
        out.append({"balanceAmount": {"currency": ba["currency"], "amount": ba["amount"]}, "balanceType": bl["balanceType"]})
    return out


def mod11_bban():
    while True:
        S.seq += 1
        base = f"1234{S.seq % 10**6:06d}"
        w = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
        r = 11 - sum(int(c) * x for c, x in zip(base, w)) % 11
        if r == 10:
            continue
        return base + ("0" if r == 11 else str(r))


def iban_of(bban):
    n = int("".join(str(int(c, 36)) for c in bban + "NO00"))
    return f"NO{98 - n % 97:02d}{bban}"


def account_view(req, a):
    base = f"{req['base']}/v1/sandbox/accounts/{a['id']}"
    return {"id": a["id"], "customerNumber": a["customerNumber"], "accountName": a["accountName"], "bban": a["bban"],
            "iban": a["iban"], "currency": a["currency"], "product": a["product"],
            "cashAccountType": a["cashAccountType"], "creditLine": a["creditLine"], "balances": a["balances"],
            "_links": {"self": link(base), "transactions": link(base + "/transactions")}}


def sb_create_account(req):
    sb_headers(req)
    b = parse_json(req)
    if not isinstance(b, dict):
        raise bad("body must be a JSON object")
    cust = find_customer(req_str(b, "customerNumber"))
    if not cust:
        raise bad("customerNumber is not a sandbox customer")
    cur = check_currency(b.get("currency", "NOK"), "currency")
    bban = opt_str(b, "bban", 30, 1) or mod11_bban()
    iban = opt_str(b, "iban", 34, 1) or iban_of(bban)
    if any(a["bban"] == bban or a["iban"] == iban for a in S.accounts.values()):
        raise ApiError(409, "CONFLICT", "an account with this bban or iban exists")
    cat = b.get("cashAccountType", "CACC")
    if cat not in CASH_TYPES:
        raise bad("cashAccountType is not supported")
    aid = nid()
    S.accounts[aid] = {"id": aid, "customerId": cust["customerId"], "customerNumber": cust["customerNumber"],
                       "accountName": opt_str(b, "accountName", 70, 1) or "Brukskonto", "bban": bban, "iban": iban,
                       "currency": cur, "product": opt_str(b, "product", 70, 1) or "STANDARD",
                       "cashAccountType": cat, "creditLine": check_int32(b.get("creditLine", 0), "creditLine"),
                       "balances": check_balances(b.get("balances", [])), "transactions": {}}
    return 201, account_view(req, S.accounts[aid])


def sb_account(aid):
    a = S.accounts.get(aid)
    if not a:
        raise notfound("account not found")
    return a


def sb_get_account(req, aid):
    sb_headers(req)
    return 200, [account_view(req, sb_account(aid))]


def sb_put_balances(req, aid):
    sb_headers(req)
    a = sb_account(aid)
    a["balances"] = check_balances(parse_json(req), "body")
    return 204, None


def tx_view(req, a, t):
    v = {k: t[k] for k in ("id", "amount", "currency", "valueDate", "bookingDate", "remittanceInformationUnstructured",
                           "creditorName", "creditorAccount", "debtorName", "debtorAccount", "bankTransactionCode",
                           "ultimateDebtor", "ultimateCreditor", "purposeCode")}
    v["_links"] = {"self": link(f"{req['base']}/v1/sandbox/accounts/{a['id']}/transactions/{t['id']}")}
    return v


def check_past_dates(booking, value, path):
    b = check_date(booking, path + ".bookingDate", True)
    v = check_date(value, path + ".valueDate", True)
    if b > today() or v > today():
        raise bad(f"{path}: dates must be before now")
    if b > v:
        raise bad(f"{path}: bookingDate must not be after valueDate")


def sb_create_transactions(req, aid):
    sb_headers(req)
    a = sb_account(aid)
    arr = parse_json(req)
    if not isinstance(arr, list) or not arr:
        raise bad("body must be a non-empty array")
    new = []
    for i, t in enumerate(arr):
        p = f"[{i}]"
        if not isinstance(t, dict):
            raise bad(f"{p} must be an object")
        check_int32(t.get("amount"), p + ".amount")
        check_currency(t.get("currency"), p + ".currency")
        check_past_dates(t.get("bookingDate"), t.get("valueDate"), p)
        for k in ("remittanceInformationUnstructured", "creditorName", "debtorName", "ultimateDebtor",
                  "ultimateCreditor", "purposeCode", "creditorId"):
            req_str(t, k, None, 0, p + ".")
        bt = req_str(t, "bankTransactionCode", 14, 4, p + ".")
        accs = {}
        for k in ("creditorAccount", "debtorAccount"):
            o = req_obj(t, k, p + ".")
            accs[k] = {"iban": req_str(o, "iban", 34, 0, f"{p}.{k}."), "bban": req_str(o, "bban", 30, 0, f"{p}.{k}.")}
        da = accs["debtorAccount"]
        if not ((da["iban"] and da["iban"] == a["iban"]) or (da["bban"] and da["bban"] == a["bban"])):
            raise bad(f"{p}.debtorAccount is another account than {aid}")
        tid = nid()
        new.append(dict(t, id=tid, bankTransactionCode=bt, **accs))
    for t in new:
        a["transactions"][t["id"]] = t
    return 201, None


def sb_get_transactions(req, aid):
    sb_headers(req)
    a = sb_account(aid)
    frm = check_date(req["query"].get("fromDate"), "fromDate")
    to = check_date(req["query"].get("toDate"), "toDate")
    off = q_int(req, "offset", 0) or 0
    lim = q_int(req, "limit", 1)
    txs = [t for t in a["transactions"].values() if (frm is None or t["bookingDate"] >= frm.isoformat())
           and (to is None or t["bookingDate"] <= to.isoformat())]
    txs = txs[off:] if lim is None else txs[off:off + lim]
    return 200, [tx_view(req, a, t) for t in txs]


def sb_get_transaction(req, aid, tid):
    sb_headers(req)
    a = sb_account(aid)
    t = a["transactions"].get(tid)
    if not t:
        raise notfound("transaction not found")
    return 200, tx_view(req, a, t)


def card_view(req, k):
    base = f"{req['base']}/v1/sandbox/card-accounts/{k['resourceId']}"
    v = {x: k[x] for x in ("resourceId", "maskedPan", "currency", "creditLimit", "balances", "cardId", "cardIdVNo",
                           "accountNumber", "expiry", "name", "product", "status")}
    v["_links"] = {"self": link(base), "transactions": link(base + "/transactions")}
    return {"cardAccount": v}


def sb_create_card(req):
    sb_headers(req)
    b = parse_json(req)
    if not isinstance(b, dict):
        raise bad("body must be a JSON object")
    cust = find_customer(req_str(b, "customerNumber"))
    if not cust:
        raise bad("customerNumber is not a sandbox customer")
    cur = check_currency(b.get("currency", "NOK"), "currency")
    cl = b.get("creditLimit", {"currency": cur, "amount": 0})
    if not isinstance(cl, dict):
        raise bad("creditLimit must be an object")
    check_currency(cl.get("currency"), "creditLimit.currency")
    check_int32(cl.get("amount"), "creditLimit.amount")
    status = b.get("status", "enabled")
    if status not in ("enabled", "deleted", "blocked"):
        raise bad("status must be enabled, deleted or blocked")
    S.seq += 1
    rid = nid()
    pan = opt_str(b, "maskedPan", 19, 1) or f"5555 55** **** {S.seq % 10000:04d}"
    S.cards[rid] = {"resourceId": rid, "customerId": cust["customerId"], "maskedPan": pan, "currency": cur,
                    "creditLimit": {"currency": cl["currency"], "amount": cl["amount"]},
                    "balances": check_balances(b.get("balances", [])),
                    "cardId": opt_str(b, "cardId", 35, 1) or str(S.seq), "cardIdVNo": opt_str(b, "cardIdVNo", 35, 1) or "1",
                    "accountNumber": opt_str(b, "accountNumber", 30, 1) or mod11_bban(),
                    "expiry": opt_str(b, "expiry", 10, 1) or "12/29", "name": opt_str(b, "name", 70, 1) or cust["customerName"],
                    "product": opt_str(b, "product", 70, 1) or "CREDIT", "status": status, "transactions": []}
    return 201, card_view(req, S.cards[rid])


def sb_card(cid):
    k = S.cards.get(cid)
    if not k:
        raise notfound("card account not found")
    return k


def sb_get_card(req, cid):
    sb_headers(req)
    return 200, card_view(req, sb_card(cid))


def card_tx_view(t):
    return {x: t[x] for x in ("cardTransactionId", "bookingDate", "transactionDate", "transactionAmount",
                              "originalAmount", "merchantCategoryCode")}


def check_money_obj(o, path, int_amount):
    if not isinstance(o, dict):
        raise bad(f"{path} is required")
    check_currency(o.get("currency"), path + ".currency")
    if int_amount:
        check_int32(o.get("amount"), path + ".amount")
    elif isinstance(o.get("amount"), bool) or not isinstance(o.get("amount"), (str, int)):
        raise bad(f"{path}.amount is required")
    return {"currency": o["currency"], "amount": int(o["amount"]) if re.fullmatch(r"-?\d+", str(o["amount"])) else o["amount"]}


def sb_create_card_tx(req, cid):
    sb_headers(req)
    k = sb_card(cid)
    arr = parse_json(req)
    if not isinstance(arr, list) or not arr:
        raise bad("body must be a non-empty array")
    new = []
    for i, t in enumerate(arr):
        p = f"[{i}]"
        if not isinstance(t, dict):
            raise bad(f"{p} must be an object")
        for f in ("cardTransactionId", "terminalId", "merchantCategoryCode", "cardAcceptorId", "maskedPan",
                  "transactionDetails", "proprietaryBankTransactionCode", "markupFeePercentage"):
            req_str(t, f, None, 1, p + ".")
        b = check_date(t.get("bookingDate"), p + ".bookingDate", True)
        td = check_date(t.get("transactionDate"), p + ".transactionDate", True)
        if b > today() or td > today():
            raise bad(f"{p}: dates must be before now")
        if t.get("invoiced") not in ("true", "false"):
            raise bad(f"{p}.invoiced must be the string true or false")
        ta = check_money_obj(t.get("transactionAmount"), p + ".transactionAmount", False)
        oa = check_money_obj(t.get("originalAmount"), p + ".originalAmount", False)
        check_money_obj(t.get("markupFee"), p + ".markupFee", True)
        check_address(t.get("cardAcceptorAddress"), p + ".cardAcceptorAddress", True)
        ce = t.get("currencyExchange")
        if ce is not None:
            if not isinstance(ce, dict):
                raise bad(f"{p}.currencyExchange must be an object")
            for f in ("sourceCurrency", "targetCurrency", "unitCurrency"):
                check_currency(ce.get(f), f"{p}.currencyExchange.{f}")
            req_str(ce, "exchangeRate", None, 1, p + ".currencyExchange.")
            check_date(ce.get("quotationDate"), p + ".currencyExchange.quotationDate", True)
        new.append(dict(t, transactionAmount=ta, originalAmount=oa))
    k["transactions"].extend(new)
    return 201, {"cardAccount": {"maskedPan": k["maskedPan"]},
                 "cardTransactions": {"booked": [card_tx_view(t) for t in new], "pending": []}}


def sb_get_card_tx(req, cid):
    sb_headers(req)
    k = sb_card(cid)
    bs = req["query"].get("bookingStatus")
    if bs not in ("booked", "pending", "both"):
        raise ApiError(400, "FORMAT_ERROR", "query parameter bookingStatus (booked, pending or both) is required")
    frm = check_date(req["query"].get("fromDate"), "fromDate")
    to = check_date(req["query"].get("toDate"), "toDate")
    off = q_int(req, "offset", 0) or 0
    lim = q_int(req, "limit", 1)
    txs = [t for t in k["transactions"] if (frm is None or t["bookingDate"] >= frm.isoformat())
           and (to is None or t["bookingDate"] <= to.isoformat())]
    txs = txs[off:] if lim is None else txs[off:off + lim]
    booked = [card_tx_view(t) for t in txs] if bs in ("booked", "both") else []
    return 200, {"cardAccount": {"maskedPan": k["maskedPan"]}, "cardTransactions": {"booked": booked, "pending": []}}


def agreement_view(req, a):
    v = {"id": a["id"], "name": a["name"]}
    if a["owner"] is not None:
        v["owner"] = a["owner"]
    v["engagements"] = [{x: e[x] for x in ("id", "customer", "account", "roles", "accessRights", "paymentRights",
                                           "transferRights", "registerLimit", "approvalLimit")} for e in a["engagements"]]
    v["_links"] = {"self": link(f"{req['base']}/v1/sandbox/agreements/{a['id']}")}
    return v


def sb_create_agreement(req):
    sb_headers(req)
    b = parse_json(req)
    if not isinstance(b, dict):
        raise bad("body must be a JSON object")
    name = req_str(b, "name", 70)
    owner = opt_str(b, "owner", None, 1)
    ownc = None
    if owner is not None:
        ownc = find_customer(owner)
        if not ownc:
            raise bad("owner is not a sandbox customer")
    aid = nid()
    S.agreements[aid] = {"id": aid, "name": name, "owner": owner, "ownerId": ownc["customerId"] if ownc else None,
                         "engagements": []}
    return 201, agreement_view(req, S.agreements[aid])


def sb_agreement(aid):
    a = S.agreements.get(aid)
    if not a:
        raise notfound("agreement not found")
    return a


def sb_get_agreement(req, aid):
    sb_headers(req)
    return 200, agreement_view(req, sb_agreement(aid))


def engagement_view(e):
    return {"customer": e["customer"], "account": {"iban": e["account"]["iban"]}, "roles": e["roles"],
            "registerLimit": e["registerLimit"], "approvalLimit": e["approvalLimit"]}


def sb_create_engagement(req, agid):
    sb_headers(req)
    ag = sb_agreement(agid)
    b = parse_json(req)
    if not isinstance(b, dict):
        raise bad("body must be a JSON object")
    cust = find_customer(req_str(b, "customer"))
    if not cust:
        raise bad("customer is not a sandbox customer")
    acc_ref = req_obj(b, "account")
    acc = find_account_by_iban(req_str(acc_ref, "iban", 34, 1, "account."))
    if not acc:
        raise bad("account.iban is not a sandbox account")
    roles = b.get("roles")
    if not isinstance(roles, list) or not roles or not all(r in ROLES for r in roles) or len(set(roles)) != len(roles):
        raise bad("roles must be a non-empty list of OWNER, DISPOSAL, VIEW, REGISTER, APPROVE, INTERNAL_TRANSFER, SALARY")
    rl = check_int32(b.get("registerLimit"), "registerLimit")
    al = check_int32(b.get("approvalLimit"), "approvalLimit")
    if ag["ownerId"] is not None and acc["customerId"] != ag["ownerId"]:
        raise bad("the account is not owned by the agreement owner")
    eid = nid()
    e = {"id": eid, "customer": b["customer"], "customerId": cust["customerId"],
         "account": {"bban": acc["bban"], "iban": acc["iban"]}, "roles": roles,
         "accessRights": "VIEW" in roles, "paymentRights": "REGISTER" in roles or "APPROVE" in roles,
         "transferRights": "INTERNAL_TRANSFER" in roles, "registerLimit": rl, "approvalLimit": al}
    ag["engagements"].append(e)
    return 201, engagement_view(e)


def sb_get_engagement(req, agid, eid):
    sb_headers(req)
    ag = sb_agreement(agid)
    e = next((e for e in ag["engagements"] if e["id"] == eid), None)
    if not e:
        raise notfound("engagement not found")
    return 200, engagement_view(e)


# ---------------------------------------------------------------- SCA pages (PSU side, unsigned)
SCA_PAGE = """<!doctype html><html><body><h1>independent-4 bank: confirm</h1>
<p>Authorisation {aid} ({kind}) status {st}</p>
<form method="post" action="/sca/{aid}">
<label>Customer number <input name="customerNumber"></label>
<button name="decision" value="approve">Approve</button>
<button name="decision" value="deny">Deny</button></form></body></html>"""


def sca_page(req, aid):
    a = S.auths.get(aid)
    if not a:
        raise notfound("authorisation not found")
    return 200, ("text/html", SCA_PAGE.format(aid=aid, kind=a["kind"], st=a["scaStatus"]))


def sca_submit(req, aid):
    ctype = req["headers"].get("content-type", "")
    try:
        if "json" in ctype:
            form = json.loads(req["body"] or b"{}")
        else:
            form = {k: v[0] for k, v in parse_qs(req["body"].decode()).items()}
    except Exception:
        raise bad("form cannot be read")
    decision = form.get("decision", "approve")
    if decision not in ("approve", "deny"):
        raise bad("decision must be approve or deny")
    a = finish_sca(aid, str(form.get("customerNumber", "")).strip(), decision == "approve")
    if a["redirect"]:
        sep = "&" if "?" in a["redirect"] else "?"
        return 302, ("location", a["redirect"] + sep + f"authorisationId={aid}&scaStatus={a['scaStatus']}")
    return 200, {"scaStatus": a["scaStatus"]}


# ---------------------------------------------------------------- routing
ROUTES = [
    ("POST", r"/v1/payments/([^/]+)", lambda r, p: create_payment(r, "payments", p)),
    ("POST", r"/v1/periodic-payments/([^/]+)", lambda r, p: create_payment(r, "periodic-payments", p)),
    ("GET", r"/v1/(payments|periodic-payments)/([^/]+)/([^/]+)/status", lambda r, s, p, i: payment_status(r, s, p, i)),
    ("POST", r"/v1/(payments|periodic-payments)/([^/]+)/([^/]+)/authorisations", lambda r, s, p, i: start_payment_auth(r, s, p, i)),
    ("GET", r"/v1/(payments|periodic-payments)/([^/]+)/([^/]+)/authorisations/([^/]+)",
     lambda r, s, p, i, a: (get_payment(s, p, i), get_auth("payment", i, a))[1]),
    ("POST", r"/v1/signing-baskets", create_basket),
    ("POST", r"/v1/signing-baskets/([^/]+)/authorisations", start_basket_auth),
    ("GET", r"/v1/signing-baskets/([^/]+)/authorisations/([^/]+)", lambda r, b, a: get_auth("basket", b, a)),
    ("POST", r"/v1/consents", create_consent),
    ("GET", r"/v1/consents/([^/]+)/status", consent_status),
    ("GET", r"/v1/accounts", list_accounts),
    ("GET", r"/v1/accounts/([^/]+)/transactions", list_transactions),
    ("GET", r"/v1/accounts/([^/]+)/transactions/([^/]+)", transaction_details),
    ("POST", r"/v1/sandbox/customers", sb_create_customer),
    ("GET", r"/v1/sandbox/customers", sb_get_customers),
    ("POST", r"/v1/sandbox/accounts", sb_create_account),
    ("GET", r"/v1/sandbox/accounts/([^/]+)", sb_get_account),
    ("PUT", r"/v1/sandbox/accounts/([^/]+)/balances", sb_put_balances),
    ("POST", r"/v1/sandbox/accounts/([^/]+)/transactions", sb_create_transactions),
    ("GET", r"/v1/sandbox/accounts/([^/]+)/transactions", sb_get_transactions),
    ("GET", r"/v1/sandbox/accounts/([^/]+)/transactions/([^/]+)", sb_get_transaction),
    ("POST", r"/v1/sandbox/card-accounts", sb_create_card),
    ("GET", r"/v1/sandbox/card-accounts/([^/]+)", sb_get_card),
    ("POST", r"/v1/sandbox/card-accounts/([^/]+)/transactions", sb_create_card_tx),
    ("GET", r"/v1/sandbox/card-accounts/([^/]+)/transactions", sb_get_card_tx),
    ("POST", r"/v1/sandbox/agreements", sb_create_agreement),
    ("GET", r"/v1/sandbox/agreements/([^/]+)", sb_get_agreement),
    ("POST", r"/v1/sandbox/agreements/([^/]+)/engagements", sb_create_engagement),
    ("GET", r"/v1/sandbox/agreements/([^/]+)/engagements/([^/]+)", sb_get_engagement),
]
PUBLIC = [("GET", r"/sca/([^/]+)", sca_page), ("POST", r"/sca/([^/]+)", sca_submit)]


def dispatch(req):
    path = req["path"]
    for table, signed in ((PUBLIC, False), (ROUTES, True)):
        methods = []
        for meth, pat, fn in table:
            m = re.fullmatch(pat, path)
            if m:
                methods.append(meth)
                if meth == req["method"]:
                    if signed:
                        authenticate(req)
                    return fn(req, *m.groups())
    raise notfound("no such operation")


def error_body(e):
    d = {"id": nid(), "system": SYSTEM, "status": e.status, "code": e.code}
    if e.message:
        d["message"] = e.message
    return d


async def handle(reader, writer):
    try:
        while True:
            try:
                line = await reader.readline()
            except (ConnectionError, asyncio.LimitOverrunError, ValueError):
                break
            if not line:
                break
            if line in (b"\r\n", b"\n"):
                continue
            parts = line.decode("latin-1").strip().split(" ")
            headers, raw_headers = {}, []
            while True:
                h = await reader.readline()
                if not h or h in (b"\r\n", b"\n"):
                    break
                if b":" in h:
                    k, v = h.decode("latin-1").split(":", 1)
                    k = k.strip().lower()
                    headers[k] = (headers[k] + ", " + v.strip()) if k in headers else v.strip()
            keep = headers.get("connection", "").lower() != "close" and (len(parts) == 3 and parts[2] == "HTTP/1.1"
                                                                          or headers.get("connection", "").lower() == "keep-alive")
            if len(parts) != 3:
                await send(writer, 400, error_body(bad("malformed request line")), False)
                break
            if "chunked" in headers.get("transfer-encoding", "").lower():
                await send(writer, 411, error_body(ApiError(411, "FORMAT_ERROR", "send a Content-Length body")), False)
                break
            try:
                n = int(headers.get("content-length", "0") or 0)
                if n < 0 or n > 5_000_000:
                    raise ValueError
            except ValueError:
                await send(writer, 400, error_body(bad("bad Content-Length")), False)
                break
            body = await reader.readexactly(n) if n else b""
            method, target = parts[0].upper(), parts[1]
            u = urlsplit(target)
            q = {k: v[0] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
            host = headers.get("host") or "localhost"
            req = {"method": method, "target": target, "path": u.path.rstrip("/") or "/", "query": q,
                   "headers": headers, "body": body, "base": f"http://{host}"}
            extra = {}
            try:
                status, payload = dispatch(req)
                if status == 302:
                    extra["Location"] = payload[1]
                    payload = None
            except ApiError as e:
                status, payload = e.status, error_body(e)
            except Exception as e:  # noqa
                status, payload = 500, {"id": nid(), "system": SYSTEM, "status": 500, "code": "SYSTEM_ERROR"}
            xr = headers.get("x-request-id")
            if xr:
                extra["X-Request-ID"] = xr
            await send(writer, status, payload, keep, extra, head=method == "HEAD")
            if not keep:
                break
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def send(writer, status, payload, keep, extra=None, head=False):
    if payload is None:
        data, ctype = b"", None
    elif isinstance(payload, tuple):
        ctype, data = payload[0] + "; charset=utf-8", payload[1].encode()
    else:
        data, ctype = json.dumps(payload).encode(), "application/json"
    lines = [f"HTTP/1.1 {status} {STATUS_TEXT.get(status, 'Status')}", f"Content-Length: {len(data)}",
             f"Connection: {'keep-alive' if keep else 'close'}",
             "Date: " + dt.datetime.now(dt.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")]
    if ctype:
        lines.append(f"Content-Type: {ctype}")
    for k, v in (extra or {}).items():
        lines.append(f"{k}: {v}")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head else data))
    await writer.drain()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--trust", action="append", required=True)
    a = ap.parse_args()
    for f in a.trust:
        data = open(f, "rb").read()
        TRUST.extend(x509.load_pem_x509_certificates(data))

    async def run():
        srv = await asyncio.start_server(handle, a.host, a.port, limit=1 << 20)
        print(f"independent-4 listening on {a.host}:{a.port}", flush=True)
        async with srv:
            await srv.serve_forever()
    asyncio.run(run())


if __name__ == "__main__":
    main()
