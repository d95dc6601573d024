"""Shared helpers: API errors, ids, dates, simple field checks."""
import datetime as dt
import re
import uuid

SYSTEM = "independent-2-gateway"


class ApiError(Exception):
    def __init__(self, status, code, message=None, links=None, headers=None):
        super().__init__(message or code)
        self.status, self.code, self.message = status, code, message
        self.links, self.headers = links, headers or {}

    def body(self):
        b = {"id": str(uuid.uuid4()), "system": SYSTEM, "status": self.status, "code": self.code}
        if self.message:
            b["message"] = self.message
        if self.links:
            b["_links"] = self.links
        return b


def fmt(msg, path=None):
    return ApiError(400, "FORMAT_ERROR", f"{path}: {msg}" if path else msg)


def new_id():
    return str(uuid.uuid4())


UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def is_uuid(v):
    return isinstance(v, str) and bool(UUID_RE.match(v))


def today():
    return dt.datetime.now(dt.timezone.utc).date()


def now():
    return dt.datetime.now(dt.timezone.utc)


def parse_date(v, path):
    if not isinstance(v, str) or not DATE_RE.match(v):
        raise fmt("must be an ISO 8601 date YYYY-MM-DD", path)
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise fmt("is not a valid calendar date", path)


def link(href, *verbs):
    return {"href": href, "verbs": list(verbs) or ["GET"]}


# ---- generic JSON object checking -------------------------------------------------
def obj(v, path, required=(), optional=()):
    """Check v is an object with only known members and all required ones."""
    if not isinstance(v, dict):
        raise fmt("must be a JSON object", path)
    allowed = set(required) | set(optional)
    for k in v:
        if k not in allowed:
            raise fmt(f"unknown member '{k}'", path)
    for k in required:
        if k not in v or v[k] is None:
            raise fmt(f"member '{k}' is required", path)
    return v


def s(v, path, maxlen=None, minlen=1, pattern=None, enum=None):
    if not isinstance(v, str):
        raise fmt("must be a string", path)
    if len(v) < minlen:
        raise fmt(f"must have at least {minlen} characters", path)
    if maxlen is not None and len(v) > maxlen:
        raise fmt(f"must have at most {maxlen} characters", path)
    if pattern and not re.fullmatch(pattern, v):
        raise fmt(f"does not match {pattern}", path)
    if enum is not None and v not in enum:
        raise fmt(f"must be one of {', '.join(sorted(enum))}", path)
    return v


def i32(v, path, minimum=-2**31, maximum=2**31 - 1):
    if not isinstance(v, int) or isinstance(v, bool):
        raise fmt("must be an integer", path)
    if v < minimum or v > maximum:
        raise fmt(f"must be between {minimum} and {maximum}", path)
    return v


def boolean(v, path):
    if not isinstance(v, bool):
        raise fmt("must be a boolean", path)
    return v


def qbool(q, name, default=False):
    v = q.get(name)
    if v is None:
        return default
    if v not in ("true", "false"):
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be true or false")
    return v == "true"


def qint(q, name, minimum, default=None):
    v = q.get(name)
    if v is None:
        return default
    if not re.fullmatch(r"\d{1,10}", v) or int(v) > 2**31 - 1:
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be an int32")
    if int(v) < minimum:
        raise ApiError(400, "FORMAT_ERROR", f"query parameter {name} must be at least {minimum}")
    return int(v)


def qdate(q, name):
    v = q.get(name)
    if v is None:
        return None
    try:
        return parse_date(v, "query " + name)
    except ApiError as e:
        raise ApiError(400, "FORMAT_ERROR", e.message)


def only_query(q, allowed):
    for k in q:
        if k not in allowed:
            raise ApiError(400, "FORMAT_ERROR", f"unknown query parameter '{k}'")


# ---- Norwegian account numbers / IBAN -------------------------------------------
def nor_bban_ok(b):
    if not re.fullmatch(r"\d{11}", b):
        return False
    w = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
    r = 11 - sum(int(c) * x for c, x in zip(b[:10], w)) % 11
    if r == 11:
        r = 0
    return r != 10 and r == int(b[10])


def iban_ok(i):
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{1,30}", i) or len(i) > 34:
        return False
    r = i[4:] + i[:4]
    n = "".join(str(int(c, 36)) for c in r)
    return int(n) % 97 == 1


def make_iban(country, bban):
    n = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(n) % 97:02d}{bban}"


def nor_id_ok(v):
    """Norwegian national identity / D-number (11 digits, two mod-11 control digits)."""
    if not re.fullmatch(r"\d{11}", v):
        return False
    d = [int(c) for c in v]
    w1 = [3, 7, 6, 1, 8, 9, 4, 5, 2]
    w2 = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
    k1 = 11 - sum(a * b for a, b in zip(d[:9], w1)) % 11
    k1 = 0 if k1 == 11 else k1
    k2 = 11 - sum(a * b for a, b in zip(d[:10], w2)) % 11
    k2 = 0 if k2 == 11 else k2
    return k1 != 10 and k2 != 10 and k1 == d[9] and k2 == d[10]
