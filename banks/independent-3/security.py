"""TPP authentication: certificate trust, draft-cavage-10 signature, Digest (RFC 3230/5843)."""
import base64
import binascii
import email.utils
import hashlib
import re
import urllib.parse
from email.header import decode_header

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from common import ApiError, now

DATE_SKEW_SECONDS = 15 * 60
MUST_SIGN_WHEN_PRESENT = ["date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"]


def sig_error(msg):
    return ApiError(400, "SIGNATURE_INVALID", msg)


def cert_error(msg, code="CERTIFICATE_INVALID"):
    return ApiError(400, code, msg)


class Trust:
    def __init__(self, pem_paths):
        self.cas = []
        for p in pem_paths:
            data = open(p, "rb").read()
            self.cas.extend(x509.load_pem_x509_certificates(data))

    def load_tpp_cert(self, header):
        raw = header.strip()
        cert = None
        candidates = []
        if raw.startswith("-----BEGIN"):
            candidates.append(raw.encode())
        else:
            try:
                dec = base64.b64decode(re.sub(r"\s+", "", raw), validate=True)
                candidates.append(dec)
            except (binascii.Error, ValueError):
                raise cert_error("TPP-Signature-Certificate is not base64")
        for c in candidates:
            for loader in (x509.load_der_x509_certificate, x509.load_pem_x509_certificate):
                try:
                    cert = loader(c)
                    break
                except Exception:
                    continue
            if cert:
                break
        if cert is None:
            raise cert_error("TPP-Signature-Certificate is not an X.509 certificate (DER or PEM, base64)")
        t = now()
        if cert.not_valid_before_utc > t or cert.not_valid_after_utc < t:
            raise cert_error("TPP certificate is expired or not yet valid", "CERTIFICATE_EXPIRED")
        for ca in self.cas:
            try:
                cert.verify_directly_issued_by(ca)
                return cert
            except Exception:
                continue
        raise cert_error("TPP certificate is not issued by a trusted CA", "CERTIFICATE_UNTRUSTED")


def _rfc2047(value):
    v = value.strip()
    if not v.startswith("=?"):
        return v
    try:
        parts = decode_header(v)
        return "".join(p.decode(cs or "utf-8") if isinstance(p, bytes) else p for p, cs in parts)
    except Exception:
        raise sig_error("Signature header has an invalid RFC 2047 encoding")


def parse_signature(value):
    value = _rfc2047(value)
    params = {}
    for m in re.finditer(r'\s*([A-Za-z]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?', value):
        params[m.group(1)] = _rfc2047(m.group(2))
    if "signature" not in params or "keyId" not in params:
        raise sig_error("Signature header must carry keyId and signature parameters")
    return params


def _norm_dn(s):
    parts = [p.strip() for p in re.split(r"(?<!\\),", s) if p.strip()]
    norm = []
    for p in parts:
        k, _, v = p.partition("=")
        k = k.strip().upper()
        k = {"EMAILADDRESS": "E", "1.2.840.113549.1.9.1": "E", "S": "ST", "2.5.4.97": "ORGANIZATIONIDENTIFIER"}.get(k, k)
        norm.append(f"{k}={v.strip().lower()}")
    return norm


def check_key_id(key_id, cert):
    m = re.fullmatch(r"\s*SN=([^,]+),\s*CA=(.+)", key_id, re.S)
    if not m:
        raise sig_error("keyId must have the form SN=<serial_hex>,CA=<CA distinguished name>")
    sn = m.group(1).strip().lower()
    if sn.startswith("0x"):
        sn = sn[2:]
    try:
        serial = int(sn, 16)
    except ValueError:
        raise sig_error("keyId SN is not hexadecimal")
    if serial != cert.serial_number:
        raise sig_error("keyId SN does not match the serial number of TPP-Signature-Certificate")
    given = _norm_dn(m.group(2))
    issuer = _norm_dn(cert.issuer.rfc4514_string())
    if given != issuer and given != list(reversed(issuer)):
        raise sig_error("keyId CA does not match the issuer of TPP-Signature-Certificate")


def verify_digest(headers, body):
    value = headers.get("digest")
    if value is None:
        return
    ok = False
    for part in value.split(","):
        algo, _, b64 = part.strip().partition("=")
        a = algo.strip().upper()
        fn = {"SHA-256": hashlib.sha256, "SHA-512": hashlib.sha512}.get(a)
        if fn is None:
            continue
        if b64.strip() == base64.b64encode(fn(body).digest()).decode():
            ok = True
        else:
            raise ApiError(400, "DIGEST_INVALID", f"Digest {algo} does not match the request body")
    if not ok:
        raise ApiError(400, "DIGEST_INVALID", "Digest must use SHA-256 or SHA-512 (e.g. SHA-256=<base64>)")


def verify_signature(headers, method, raw_path, query, cert):
    params = parse_signature(headers["signature"])
    check_key_id(params["keyId"], cert)
    algo = params.get("algorithm", "rsa-sha256").lower()
    pub = cert.public_key()
    if algo not in ("rsa-sha256", "hs2019", "ecdsa-sha256", "rsa-pss-sha256"):
        raise sig_error(f"unsupported algorithm {algo}; rsa-sha256 is expected")
    if algo.startswith("rsa") and not isinstance(pub, rsa.RSAPublicKey):
        raise sig_error("algorithm does not match the certificate key type")
    if algo == "ecdsa-sha256" and not isinstance(pub, ec.EllipticCurvePublicKey):
        raise sig_error("algorithm does not match the certificate key type")
    signed = params.get("headers", "date").lower().split()
    if not signed:
        raise sig_error("signed headers list is empty")
    for h in MUST_SIGN_WHEN_PRESENT:
        if h in headers and h not in signed:
            raise sig_error(f"header {h} is present and must be in the signed headers list")
    if "date" in headers:
        try:
            d = email.utils.parsedate_to_datetime(headers["date"])
            if abs((now() - d).total_seconds()) > DATE_SKEW_SECONDS:
                raise sig_error("Date header is more than 15 minutes away from server time")
        except (TypeError, ValueError):
            raise ApiError(400, "FORMAT_ERROR", "Date header is not an RFC 7231 date")
    try:
        sig = base64.b64decode(params["signature"], validate=True)
    except (binascii.Error, ValueError):
        raise sig_error("signature is not base64")
    targets = {raw_path, urllib.parse.quote(raw_path, safe="/-_.~!$&'()*+,;=:@")}
    for tgt in targets:
        lines = []
        for h in signed:
            if h == "(request-target)":
                lines.append(f"(request-target): {method.lower()} {tgt}" + (f"?{query}" if query else ""))
            elif h in headers:
                lines.append(f"{h}: {headers[h]}")
            else:
                raise sig_error(f"signed header {h} is not in the request")
        data = "\n".join(lines).encode("utf-8")
        try:
            if isinstance(pub, rsa.RSAPublicKey):
                if algo == "rsa-pss-sha256":
                    pub.verify(sig, data, padding.PSS(padding.MGF1(hashes.SHA256()), padding.PSS.DIGEST_LENGTH), hashes.SHA256())
                else:
                    pub.verify(sig, data, padding.PKCS1v15(), hashes.SHA256())
            elif isinstance(pub, ec.EllipticCurvePublicKey):
                pub.verify(sig, data, ec.ECDSA(hashes.SHA256()))
            else:
                raise sig_error("unsupported certificate key type")
            return signed
        except InvalidSignature:
            continue
    raise sig_error("signature does not verify with the TPP certificate")


def tpp_identity(cert):
    return hashlib.sha256(cert.subject.public_bytes() + cert.issuer.public_bytes()).hexdigest()[:24]
