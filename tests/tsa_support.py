"""A time-stamping authority for the tests (RFC 3161 over HTTP), on the loopback address: its own
CA, a TSA certificate with the critical ``timeStamping`` purpose, and tokens built with
``asn1crypto`` (a dev dependency: ``rfc3161-client`` reads and checks tokens but cannot make
them). Its clock can be set, so a test can ask for a token of a chosen time."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from asn1crypto import algos, cms, core, tsp
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from serving_support import serving

__all__ = ["Authority", "running_tsa"]


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


class Authority:
    """The TSA's keys and certificates, and how it answers a request."""

    def __init__(self, name: str = "Test TSA") -> None:
        now = datetime.now(UTC)
        self.ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ca = (
            x509.CertificateBuilder()
            .subject_name(_name(f"{name} Root CA"))
            .issuer_name(_name(f"{name} Root CA"))
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=3650))
            .not_valid_after(now + timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                critical=True,
            )
            .sign(self.ca_key, hashes.SHA256())
        )
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(self.ca.subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=3650))
            .not_valid_after(now + timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, True, False, False, False, False, False, False, False),
                critical=True,
            )
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True
            )
            .sign(self.ca_key, hashes.SHA256())
        )
        #: The time the next token states (None: the clock's).
        self.clock: datetime | None = None
        self.requests = 0

    def write_ca(self, path: Path) -> Path:
        path.write_bytes(self.ca.public_bytes(serialization.Encoding.PEM))
        return path

    def answer(self, request_der: bytes) -> bytes:
        """The DER TimeStampResp to a DER TimeStampReq: granted, a token signed with SHA-256."""
        self.requests += 1
        request = tsp.TimeStampReq.load(request_der)
        when = self.clock or datetime.now(UTC)
        info = {
            "version": "v1",
            "policy": "1.3.6.1.4.1.99999.1",
            "message_imprint": request["message_imprint"],
            "serial_number": self.requests,
            "gen_time": when.replace(microsecond=0),
        }
        if request["nonce"].native is not None:
            info["nonce"] = request["nonce"].native
        tst_info = tsp.TSTInfo(info)
        content = tst_info.dump()
        leaf = asn1_x509.Certificate.load(self.certificate.public_bytes(serialization.Encoding.DER))
        root = asn1_x509.Certificate.load(self.ca.public_bytes(serialization.Encoding.DER))
        signing_certificate = tsp.SigningCertificateV2(
            {"certs": [{"cert_hash": hashlib.sha256(leaf.dump()).digest()}]}
        )
        attributes = cms.CMSAttributes(
            [
                cms.CMSAttribute({"type": "content_type", "values": ["tst_info"]}),
                cms.CMSAttribute(
                    {"type": "message_digest", "values": [hashlib.sha256(content).digest()]}
                ),
                cms.CMSAttribute(
                    {"type": "signing_certificate_v2", "values": [signing_certificate]}
                ),
            ]
        )
        signature = self.key.sign(attributes.dump(), padding.PKCS1v15(), hashes.SHA256())
        signer = cms.SignerInfo(
            {
                "version": "v1",
                "sid": cms.SignerIdentifier(
                    {
                        "issuer_and_serial_number": cms.IssuerAndSerialNumber(
                            {"issuer": leaf.issuer, "serial_number": leaf.serial_number}
                        )
                    }
                ),
                "digest_algorithm": algos.DigestAlgorithm({"algorithm": "sha256"}),
                "signed_attrs": attributes,
                "signature_algorithm": algos.SignedDigestAlgorithm({"algorithm": "sha256_rsa"}),
                "signature": signature,
            }
        )
        signed = cms.SignedData(
            {
                "version": "v3",
                "digest_algorithms": [algos.DigestAlgorithm({"algorithm": "sha256"})],
                "encap_content_info": {
                    "content_type": "tst_info",
                    "content": core.ParsableOctetString(content),
                },
                "certificates": [leaf, root] if request["cert_req"].native else [],
                "signer_infos": [signer],
            }
        )
        token = cms.ContentInfo({"content_type": "signed_data", "content": signed})
        response = tsp.TimeStampResp({"status": {"status": "granted"}, "time_stamp_token": token})
        return bytes(response.dump())


def retimed(token: bytes, when: datetime) -> bytes:
    """``token`` (a DER TimeStampResp) with its TSTInfo's time changed and nothing signed again:
    what a forger without the TSA's key can do."""
    response = tsp.TimeStampResp.load(token)
    signed = response["time_stamp_token"]["content"]
    info = tsp.TSTInfo.load(signed["encap_content_info"]["content"].contents)
    info["gen_time"] = when.replace(microsecond=0)
    signed["encap_content_info"]["content"] = core.ParsableOctetString(info.dump(force=True))
    return bytes(response.dump(force=True))


@contextmanager
def running_tsa(authority: Authority) -> Iterator[str]:
    """The authority answering POSTs at ``http://127.0.0.1:<port>/tsa``; its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            answer = authority.answer(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_: object) -> None:
            return

    with serving(Handler) as url:
        yield f"{url}/tsa"
