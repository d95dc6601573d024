"""Section 5: TPP certificate, draft-cavage (v10) HTTP signature, Digest, PSU headers."""
import base64
import binascii
import datetime as dt
import email.utils
import hashlib
import ipaddress
import quopri
import re

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from common import ApiError, is_uuid, nor_id_ok, now

SIGNED_WHEN_PRESENT = ["date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"]
CLOCK_SKEW = 300  # seconds allowed between Date header and server time
KNOWN_FIXES = {"amount-as-string", "cash-account-type-iso", "longer-name",
               "cardaccount-switch-originalamount-and-transactionamount"}


def forbidden(msg):
    return ApiError(403, "FORBIDDEN", msg)


class Trust:
    def __init__(self, pem_paths):
        self.cas = []
        for p in pem_paths:
            with open(p, "rb") as f:
                data = f.read()
            for blk in re.findall(rb"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", data, re.S):
                ca = x509.load_pem_x509_certificate(blk)
                try:
                    if not ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca:
                        raise SystemExit(f"{p}: certificate is not a CA (basicConstraints CA:FALSE)")
                except x509.ExtensionNotFound:
                    pass
                self.cas.append(ca)
        if not self.cas:
            raise SystemExit("no CA certificate found in --trust files")

    def issuer_of(self, cert):
        for ca in self.cas:
            if ca.subject != cert.issuer:
                continue
            try:
                cert.verify_directly_issued_by(ca)
            except Exception:
                continue
            t = now()
            if ca.not_valid_before_utc <= t <= ca.not_valid_after_utc:
                return ca
        return None


def load_tpp_cert(value):
    v = value.strip()
    try:
        raw = base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, "FORMAT_ERROR", "TPP-Signature-Certificate is not base64")
    try:
        if raw.lstrip().startswith(b"-----BEGIN CERTIFICATE-----"):
            return x509.load_pem_x509_certificate(raw)
        return x509.load_der_x509_certificate(raw)
    except Exception:
        raise ApiError(400, "FORMAT_ERROR", "TPP-Signature-Certificate is not an X.509 certificate")


def _rfc2047(value):
    m = re.fullmatch(r"=\?([^?]+)\?([BbQq])\?(.*)\?=", value.strip(), re.S)
    if not m:
        return value
    charset, enc, text = m.group(1).lower(), m.group(2).upper(), m.group(3)
    if charset not in ("utf-8", "iso-8859-1"):
        raise ApiError(400, "FORMAT_ERROR", "Signature: unsupported RFC 2047 charset")
    try:
        raw = base64.b64decode(text, validate=True) if enc == "B" else quopri.decodestring(text.replace("_", " "), header=True)
        return raw.decode(charset)
    except Exception:
        raise ApiError(400, "FORMAT_ERROR", "Signature: bad RFC 2047 encoding")


def parse_signature(value):
    value = _rfc2047(value)
    params = {}
    pos = 0
    v = value.strip()
    pat = re.compile(r'\s*([A-Za-z]+)\s*=\s*"([^"]*)"\s*(,|$)')
    while pos < len(v):
        m = pat.match(v, pos)
        if not m:
            raise ApiError(400, "FORMAT_ERROR", "Signature header is malformed")
        k = m.group(1)
        if k in params:
            raise ApiError(400, "FORMAT_ERROR", f"Signature parameter {k} repeated")
        params[k] = m.group(2)
        pos = m.end()
    for k in params:
        if k not in ("keyId", "algorithm", "headers", "signature"):
            raise ApiError(400, "FORMAT_ERROR", f"Signature parameter {k} unknown")
    for k in ("keyId", "algorithm", "headers", "signature"):
        if k not in params:
            raise ApiError(400, "FORMAT_ERROR", f"Signature parameter {k} missing")
    return params


def _dn_parts(s):
    s = s.strip().lstrip("/")
    sep = "/" if ("/" in s and "," not in s) else ","
    parts = [p.strip() for p in re.split(r"(?<!\\)" + re.escape(sep), s) if p.strip()]
    out = []
    alias = {"EMAILADDRESS": "E", "EMAIL": "E", "1.2.840.113549.1.9.1": "E", "S": "ST",
             "2.5.4.97": "ORGANIZATIONIDENTIFIER", "SN": "SURNAME"}
    for p in parts:
        if "=" not in p:
            return None
        k, val = p.split("=", 1)
        k = k.strip().upper()
        out.append((alias.get(k, k), val.strip().replace("\\", "")))
    return sorted(out)


def check_keyid(keyid, cert):
    m = re.fullmatch(r"SN=([0-9A-Fa-f]+),CA=(.+)", keyid.strip(), re.S)
    if not m:
        raise ApiError(400, "FORMAT_ERROR", "keyId must be SN=<serial_hex>,CA=<CA distinguished name>")
    if int(m.group(1), 16) != cert.serial_number:
        raise forbidden("keyId serial number does not match TPP-Signature-Certificate")
    want = _dn_parts(cert.issuer.rfc4514_string())
    got = _dn_parts(m.group(2))
    if got is None or got != want:
        raise forbidden("keyId CA does not match the issuer of TPP-Signature-Certificate")


def verify_digest(headers, body):
    d = headers.get("digest")
    if d is None:
        return
    ok_any = False
    for part in d.split(","):
        part = part.strip()
        if "=" not in part:
            raise ApiError(400, "FORMAT_ERROR", "Digest is malformed")
        alg, val = part.split("=", 1)
        alg = alg.strip().upper()
        if alg not in ("SHA-256", "SHA-512"):
            continue
        h = hashlib.sha256 if alg == "SHA-256" else hashlib.sha512
        try:
            got = base64.b64decode(val.strip(), validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "FORMAT_ERROR", "Digest value is not base64")
        if got != h(body).digest():
            raise ApiError(400, "FORMAT_ERROR", "Digest does not match the request body")
        ok_any = True
    if not ok_any:
        raise ApiError(400, "FORMAT_ERROR", "Digest must use SHA-256 or SHA-512")


def verify_request(trust, method, target, headers, body):
    """Verify certificate + signature; returns a TPP identity string."""
    cert = load_tpp_cert(headers["tpp-signature-certificate"])
    t = now()
    if not (cert.not_valid_before_utc <= t <= cert.not_valid_after_utc):
        raise forbidden("TPP certificate is expired or not yet valid")
    if trust.issuer_of(cert) is None:
        raise forbidden("TPP certificate is not issued by a trusted CA")
    try:
        bc = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        if bc.ca:
            raise forbidden("a CA certificate cannot sign requests")
    except x509.ExtensionNotFound:
        pass
    try:
        ku = cert.extensions.get_extension_for_class(x509.KeyUsage).value
        if not (ku.digital_signature or ku.content_commitment):
            raise forbidden("TPP certificate key usage does not allow signing")
    except x509.ExtensionNotFound:
        pass
    key = cert.public_key()
    if not isinstance(key, rsa.RSAPublicKey):
        raise forbidden("only RSA certificates are accepted (rsa-sha256)")
    if key.key_size < 2048:
        raise forbidden("RSA key shorter than 2048 bits")

    p = parse_signature(headers["signature"])
    if p["algorithm"].lower() != "rsa-sha256":
        raise ApiError(400, "FORMAT_ERROR", "Signature algorithm must be rsa-sha256")
    check_keyid(p["keyId"], cert)
    signed = p["headers"].lower().split()
    if len(set(signed)) != len(signed):
        raise ApiError(400, "FORMAT_ERROR", "Signature headers list repeats a header")
    for h in SIGNED_WHEN_PRESENT:
        if h in headers and h not in signed:
            raise ApiError(400, "FORMAT_ERROR", f"header {h} is present but not signed")
    lines = []
    for h in signed:
        if h == "(request-target)":
            lines.append(f"(request-target): {method.lower()} {target}")
        elif h in headers:
            lines.append(f"{h}: {headers[h]}")
        else:
            raise ApiError(400, "FORMAT_ERROR", f"signed header {h} is absent from the request")
    try:
        sig = base64.b64decode(p["signature"], validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, "FORMAT_ERROR", "signature value is not base64")
    try:
        key.verify(sig, "\n".join(lines).encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
    except Exception:
        raise forbidden("signature verification failed")
    verify_digest(headers, body)
    if "date" in headers:
        try:
            d = email.utils.parsedate_to_datetime(headers["date"])
        except Exception:
            raise ApiError(400, "FORMAT_ERROR", "Date header is not an HTTP date")
        if d.tzinfo is None:
            d = d.replace(tzinfo=dt.timezone.utc)
        if abs((t - d).total_seconds()) > CLOCK_SKEW:
            raise ApiError(400, "FORMAT_ERROR", "Date header too far from server time")
    fp = cert.fingerprint(hashes.SHA256()).hex()
    return {"subject": cert.subject.rfc4514_string(), "issuer": cert.issuer.rfc4514_string(),
            "tpp": cert.subject.rfc4514_string() + "|" + cert.issuer.rfc4514_string(), "fingerprint": fp}


# ---- header formats -----------------------------------------------------------------
def check_header_formats(h):
    def bad(name, why):
        raise ApiError(400, "FORMAT_ERROR", f"header {name} {why}")
    if "x-request-id" in h and not is_uuid(h["x-request-id"]):
        bad("X-Request-ID", "must be a UUID")
    if "psu-id" in h and not is_uuid(h["psu-id"]):
        bad("PSU-ID", "must be a UUID")
    if "psu-device-id" in h and not is_uuid(h["psu-device-id"]):
        bad("PSU-Device-ID", "must be a UUID")
    if "x-psu-identity" in h and not nor_id_ok(h["x-psu-identity"]):
        bad("X-PSU-IDENTITY", "must be a valid Norwegian national identity or D-number")
    if "psu-context" in h and h["psu-context"] not in ("PRIVATE", "CORPORATE"):
        bad("PSU-Context", "must be PRIVATE or CORPORATE")
    if "psu-ip-address" in h:
        try:
            ipaddress.ip_address(h["psu-ip-address"])
        except ValueError:
            bad("PSU-IP-Address", "must be an IPv4 or IPv6 address")
    if "psu-ip-port" in h:
        if not re.fullmatch(r"\d{1,5}", h["psu-ip-port"]) or int(h["psu-ip-port"]) > 65535:
            bad("PSU-IP-Port", "must be a port number")
    if "psu-http-method" in h and h["psu-http-method"] not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        bad("PSU-HTTP-Method", "must be one of GET, POST, PUT, PATCH, DELETE")
    if "tpp-redirect-preferred" in h and h["tpp-redirect-preferred"] not in ("true", "false"):
        bad("TPP-Redirect-Preferred", "must be true or false")
    if "tpp-redirect-uri" in h:
        u = h["tpp-redirect-uri"]
        if not re.fullmatch(r"https://[^\s/?#]+[^\s]*", u) or len(u) > 2048:
            bad("TPP-Redirect-URI", "must be an absolute https URI")
    if "tpp-session-id" in h and not re.fullmatch(r"[\x21-\x7e]{1,128}", h["tpp-session-id"]):
        bad("TPP-Session-ID", "must be 1-128 visible ASCII characters")
    if "psu-corporate-id" in h and not re.fullmatch(r"[\x21-\x7e]{1,64}", h["psu-corporate-id"]):
        bad("PSU-Corporate-ID", "must be 1-64 visible ASCII characters")
    if "x-accept-fix" in h:
        vals = [v.strip() for v in h["x-accept-fix"].split(",")]
        for v in vals:
            if v not in KNOWN_FIXES:
                bad("x-accept-fix", f"has unknown value '{v}'")
    if h.get("psu-context") == "CORPORATE" and "psu-corporate-id" not in h:
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "PSU-Corporate-ID is required for a corporate user")


def fixes(h):
    return {v.strip() for v in h.get("x-accept-fix", "").split(",") if v.strip()}


def UUID_OK(v):
    return is_uuid(v)
