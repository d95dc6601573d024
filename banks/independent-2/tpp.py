"""TPP-side helpers: make a CA and a TPP certificate, and send signed requests (section 5).

    python tpp.py make-pki DIR     # writes DIR/ca.pem, DIR/ca.key, DIR/tpp.pem, DIR/tpp.key
"""
import base64
import datetime as dt
import email.utils
import gzip
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID


def _name(cn, org):
    return x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "NO"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_pki(d):
    os.makedirs(d, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = _name("Sandbox TPP CA", "Sandbox Trust Services")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
          .not_valid_after(now + dt.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    tpp_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    tpp = (x509.CertificateBuilder().subject_name(_name("Example TPP", "Example TPP AS"))
           .issuer_name(ca_name).public_key(tpp_key.public_key()).serial_number(x509.random_serial_number())
           .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=365))
           .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
           .add_extension(x509.KeyUsage(True, True, False, False, False, False, False, False, False), critical=True)
           .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    nokey = serialization.NoEncryption()
    fmt = serialization.PrivateFormat.PKCS8
    open(os.path.join(d, "ca.pem"), "wb").write(ca.public_bytes(pem))
    open(os.path.join(d, "ca.key"), "wb").write(ca_key.private_bytes(pem, fmt, nokey))
    open(os.path.join(d, "tpp.pem"), "wb").write(tpp.public_bytes(pem))
    open(os.path.join(d, "tpp.key"), "wb").write(tpp_key.private_bytes(pem, fmt, nokey))


class Client:
    def __init__(self, base, pki_dir):
        self.base = base.rstrip("/")
        self.cert = x509.load_pem_x509_certificate(open(os.path.join(pki_dir, "tpp.pem"), "rb").read())
        self.key = serialization.load_pem_private_key(open(os.path.join(pki_dir, "tpp.key"), "rb").read(), None)
        self.cert_b64 = base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()
        self.key_id = f"SN={self.cert.serial_number:x},CA={self.cert.issuer.rfc4514_string()}"

    def request(self, method, path, body=None, headers=None, raw=None, digest=False, after=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        h = {"X-Request-ID": str(uuid.uuid4()), "Date": email.utils.formatdate(usegmt=True),
             "TPP-Signature-Certificate": self.cert_b64, "Accept": "application/json"}
        if method in ("POST", "PUT") or data or digest:
            h["Digest"] = "SHA-256=" + base64.b64encode(hashlib.sha256(data).digest()).decode()
        if data:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        low = {k.lower(): v for k, v in h.items()}
        signed = [n for n in ("date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri") if n in low]
        text = "\n".join(f"{n}: {low[n]}" for n in signed).encode()
        sig = base64.b64encode(self.key.sign(text, padding.PKCS1v15(), hashes.SHA256())).decode()
        h["Signature"] = (f'keyId="{self.key_id}",algorithm="rsa-sha256",headers="{" ".join(signed)}",'
                          f'signature="{sig}"')
        h.update(after or {})  # headers changed after signing (tests of the gateway)
        req = urllib.request.Request(self.base + path, data=data or None, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, rb, rh = r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            status, rb, rh = e.code, e.read(), dict(e.headers)
        if rh.get("Content-Encoding") == "gzip":
            rb = gzip.decompress(rb)
        return status, (json.loads(rb) if rb and "json" in rh.get("Content-Type", "") else rb), rh


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make-pki":
        make_pki(sys.argv[2])
        print(f"wrote {sys.argv[2]}/ca.pem ca.key tpp.pem tpp.key")
    else:
        sys.exit(__doc__)
