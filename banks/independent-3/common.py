"""Shared helpers: errors, validation primitives, reference data."""
import datetime as dt
import ipaddress
import re
import uuid
from decimal import Decimal, InvalidOperation

SYSTEM = "fjordbank-psd2-sandbox"

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

# ISO 4217 minor units; every listed code not named here has 2.
MINOR_UNITS = {c: 0 for c in "BIF BYR CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF XDR".split()}
MINOR_UNITS.update({c: 3 for c in "BHD IQD JOD KWD LYD OMR TND".split()})

PURPOSE_CODES = set("INVS SALA IDCP CASH CORT INTC PENS SSBE SUPP TAXS TREA VATX LOAN OTHR".split())
BIC_RE = re.compile(r"^[A-Z]{6,6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3,3}){0,1}$")


class ApiError(Exception):
    def __init__(self, status, code, message=None, links=None, headers=None, path=None):
        super().__init__(message or code)
        self.status, self.code, self.message = status, code, message
        self.links, self.headers, self.path = links, headers or {}, path

    def body(self):
        b = {"id": str(uuid.uuid4()), "system": SYSTEM, "status": self.status, "code": self.code}
        if self.message is not None:
            b["message"] = self.message[:512]
        if self.path:
            b["path"] = self.path
        b.update(getattr(self, "extra", None) or {})
        if self.links:
            b["_links"] = self.links
        return b


def fmt(path, msg):
    return ApiError(400, "FORMAT_ERROR", f"{path}: {msg}", path=path)


def minor_units(cur):
    return MINOR_UNITS.get(cur, 2)


def now():
    return dt.datetime.now(dt.timezone.utc)


def today():
    return now().date()


def iso(ts):
    return ts.astimezone(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_id():
    return str(uuid.uuid4())


def link(href, *verbs):
    return {"href": href, "verbs": list(verbs or ("GET",))}


def amount_str(value, cur):
    """int (sandbox whole units) or Decimal -> string with the currency's minor units."""
    q = Decimal(1).scaleb(-minor_units(cur))
    return str(Decimal(value).quantize(q))


# ---------- typed field checks (raise FORMAT_ERROR with a JSON path) ----------

def obj(body, key, path, required=True):
    v = body.get(key) if isinstance(body, dict) else None
    if v is None:
        if required:
            raise fmt(f"{path}.{key}", "is required")
        return None
    if not isinstance(v, dict):
        raise fmt(f"{path}.{key}", "must be an object")
    return v


def string(body, key, path, required=True, maxlen=None, minlen=None, allowed=None, pattern=None):
    v = body.get(key) if isinstance(body, dict) else None
    p = f"{path}.{key}"
    if v is None:
        if required:
            raise fmt(p, "is required")
        return None
    if not isinstance(v, str):
        raise fmt(p, "must be a string")
    if minlen is not None and len(v) < minlen:
        raise fmt(p, f"must have at least {minlen} characters")
    if maxlen is not None and len(v) > maxlen:
        raise fmt(p, f"must have at most {maxlen} characters")
    if allowed is not None and v not in allowed:
        raise fmt(p, "is not an allowed value")
    if pattern is not None and not re.fullmatch(pattern, v):
        raise fmt(p, f"must match {pattern}")
    return v


def currency(body, key, path, required=True):
    return string(body, key, path, required, allowed=CURRENCIES)


def country(body, key, path, required=True):
    return string(body, key, path, required, allowed=COUNTRIES)


def date_field(body, key, path, required=False):
    v = string(body, key, path, required)
    if v is None:
        return None
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise fmt(f"{path}.{key}", "must be an ISO 8601 date (YYYY-MM-DD)")


def int32(body, key, path, required=True, minimum=None):
    v = body.get(key) if isinstance(body, dict) else None
    p = f"{path}.{key}"
    if v is None:
        if required:
            raise fmt(p, "is required")
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not -2**31 <= v < 2**31:
        raise fmt(p, "must be an int32")
    if minimum is not None and v < minimum:
        raise fmt(p, f"must be at least {minimum}")
    return v


def boolean(body, key, path, required=False):
    v = body.get(key) if isinstance(body, dict) else None
    if v is None:
        if required:
            raise fmt(f"{path}.{key}", "is required")
        return None
    if not isinstance(v, bool):
        raise fmt(f"{path}.{key}", "must be a boolean")
    return v


def money(body, key, path):
    """instructedAmount-like object {amount string, currency}; returns (Decimal, cur)."""
    o = obj(body, key, path)
    p = f"{path}.{key}"
    cur = currency(o, "currency", p)
    a = o.get("amount")
    if a is None:
        raise fmt(p + ".amount", "is required")
    if not isinstance(a, str):
        raise fmt(p + ".amount", "must be a string (amounts are serialised as strings)")
    m = re.fullmatch(r"(\d{1,13})(?:\.(\d{1,5}))?", a)
    if not m:
        raise fmt(p + ".amount", "must be a non-negative decimal string, precision 18, scale 5")
    frac = len(m.group(2) or "")
    if frac != minor_units(cur):
        raise fmt(p + ".amount", f"must have exactly {minor_units(cur)} fraction digits for {cur}")
    try:
        d = Decimal(a)
    except InvalidOperation:
        raise fmt(p + ".amount", "is not a number")
    if d <= 0:
        raise fmt(p + ".amount", "must be greater than zero")
    return d, cur


def parse_query_date(q, name):
    v = q.get(name)
    if v is None or v == "":
        return None
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be an ISO 8601 date", path=name)


def parse_query_int(q, name, minimum=None):
    v = q.get(name)
    if v is None or v == "":
        return None
    try:
        i = int(v)
    except ValueError:
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be an integer", path=name)
    if not -2**31 <= i < 2**31 or (minimum is not None and i < minimum):
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be an int32 >= {minimum}", path=name)
    return i


def parse_query_bool(q, name):
    v = q.get(name)
    if v is None or v == "":
        return None
    if v.lower() in ("true", "1", "yes"):
        return True
    if v.lower() in ("false", "0", "no"):
        return False
    raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be true or false", path=name)


def is_uuid(s):
    try:
        uuid.UUID(s)
        return True
    except (ValueError, AttributeError, TypeError):
        return False


def is_ip(s):
    try:
        ipaddress.ip_address(s.strip())
        return True
    except ValueError:
        return False


def valid_kid(ref):
    """Norwegian KID: 2-25 digits, last digit MOD10 (Luhn) or MOD11 ('-' for 10)."""
    if not re.fullmatch(r"\d{1,24}[\d-]", ref) or len(ref) < 2:
        return False
    body, check = ref[:-1], ref[-1]
    # MOD10
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    if check.isdigit() and (10 - total % 10) % 10 == int(check):
        return True
    # MOD11
    total = sum(int(ch) * (2 + i % 6) for i, ch in enumerate(reversed(body)))
    r = 11 - total % 11
    exp = "0" if r == 11 else "-" if r == 10 else str(r)
    return exp == check
