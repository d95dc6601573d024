"""The request signer: :class:`SignatureAuth`, an ``httpx.Auth`` that adds Digest, Signature and
TPP-Signature-Certificate to exactly the request that is sent (spec 5).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from functools import cached_property

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from conformance.errors import CertificateError
from conformance.signing.canonical import (
    DEFAULT_SIGNED_HEADERS,
    DIGEST_ALGORITHMS,
    SIGNATURE_ALGORITHM,
    encode_header_value,
    sign_signing_string,
    signing_string_of,
    wire_text,
)
from conformance.signing.keyid import KeyIdStyle, SignatureParameters


@dataclass(frozen=True)
class SigningCredentials:
    """A TPP signing certificate and its RSA private key (spec 5.1, 5.2).

    ``key_id`` is ``SN=<serial>,CA=<issuer>``: the serial in lowercase hexadecimal without
    leading zeros, the issuer as its RFC 4514 string. Both derived values are computed once.
    Raises :class:`~conformance.errors.CertificateError` when the key is not RSA or does not
    belong to the certificate: signing with it would only produce confusing BAD_SIGNATUREs.
    """

    certificate: x509.Certificate
    private_key: rsa.RSAPrivateKey

    def __post_init__(self) -> None:
        if not isinstance(self.private_key, rsa.RSAPrivateKey):
            raise CertificateError(
                "spec 5.2 expects rsa-sha256: the signing key must be an RSA key, "
                f"not {type(self.private_key).__name__}"
            )
        certified = self.certificate.public_key()
        if (
            not isinstance(certified, rsa.RSAPublicKey)
            or certified.public_numbers() != self.private_key.public_key().public_numbers()
        ):
            raise CertificateError(
                f"the private key does not belong to the certificate with serial "
                f"{self.serial_hex} issued by {self.issuer}"
            )

    @cached_property
    def serial_hex(self) -> str:
        """The certificate serial, lowercase hex, no leading zeros (``keyId`` SN=)."""
        return format(self.certificate.serial_number, "x")

    @cached_property
    def issuer(self) -> str:
        """The issuer DN as an RFC 4514 string (``keyId`` CA=)."""
        return self.certificate.issuer.rfc4514_string()

    @cached_property
    def key_id(self) -> str:
        """Spec 5.2: ``SN=<serial_hex>,CA=<full CA distinguished name>``."""
        return f"SN={self.serial_hex},CA={self.issuer}"

    @cached_property
    def certificate_b64(self) -> str:
        """Spec 5.1: TPP-Signature-Certificate, the DER certificate in base64."""
        der = self.certificate.public_bytes(serialization.Encoding.DER)
        return base64.b64encode(der).decode("ascii")


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _http_date(moment: datetime) -> str:
    """An IMF-fixdate (RFC 7231 HTTP-date) such as ``Sun, 05 Jan 2014 21:31:40 GMT``."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return format_datetime(moment, usegmt=True)


def _headers_as_sent(request: httpx.Request) -> dict[bytes, bytes]:
    """Spec 5.3: replace every non-ASCII header value by its RFC 2047 encoded word; return the
    request's headers as they will be sent, lowercased name to value (a repeated header's
    values joined by ``", "`` as draft-10 section 2.3 says).

    httpx refuses non-ASCII ``str`` header values, so callers pass such values as UTF-8 (or
    Latin-1) bytes; this runs before signing so that the value signed is the value sent. It
    works on the raw header list in one pass: this is the signer's hot path.
    """
    raw = request.headers.raw
    if not b"".join([value for _, value in raw]).isascii():
        raw = [
            (name, value if value.isascii() else encode_header_value(wire_text(value)).encode())
            for name, value in raw
        ]
        request.headers = httpx.Headers(raw)
    sent = {name.lower(): value for name, value in raw}
    if len(sent) != len(raw):
        sent = {}
        for name, value in raw:
            key = name.lower()
            sent[key] = sent[key] + b", " + value if key in sent else value
    return sent


OnSigned = Callable[[httpx.Request, str], None]


class SignatureAuth(httpx.Auth):
    """Sign every request as spec 5 asks: Date, Digest, Signature, TPP-Signature-Certificate.

    The flow, in overridable steps (each broken signer below overrides one, or two):

    1. non-ASCII header values become RFC 2047 encoded words (spec 5.3);
    2. ``Date`` is added from ``clock`` when absent;
    3. ``Digest`` over :meth:`digest_input` when :meth:`wants_digest` (a non-empty body, or any
       body with ``digest_empty_body=True``); an existing Digest is replaced;
    4. :meth:`header_names`: ``signed_headers`` filtered to those present, in that order;
    5. the signing string, :meth:`signature` over it, the Signature header with :attr:`key_id`
       and :attr:`algorithm_name`, and TPP-Signature-Certificate;
    6. :meth:`outgoing` gives the request that is sent; ``on_signed(request, signing_string)``
       lets the client record the signing string for its report.

    ``clock`` returns an aware ``datetime`` (a naive one is taken as UTC). ``key_id_style``
    writes the keyId another way than :attr:`SigningCredentials.key_id` (upper-case serial, a
    reversed or URL-encoded DN: :class:`~conformance.signing.keyid.KeyIdStyle`).
    """

    requires_request_body = True
    algorithm_name: str = SIGNATURE_ALGORITHM

    def __init__(
        self,
        credentials: SigningCredentials,
        *,
        digest_algorithm: str = "SHA-256",
        clock: Callable[[], datetime] | None = None,
        signed_headers: Sequence[str] = DEFAULT_SIGNED_HEADERS,
        on_signed: OnSigned | None = None,
        digest_empty_body: bool = False,
        key_id_style: KeyIdStyle | None = None,
    ) -> None:
        name = digest_algorithm.upper()
        if name not in DIGEST_ALGORITHMS:
            raise ValueError(
                f"digest algorithm {digest_algorithm!r} is not one of {sorted(DIGEST_ALGORITHMS)}"
                " (spec 5.4)"
            )
        self.credentials = credentials
        self.digest_algorithm = name
        self.clock = clock or _utc_now
        self.signed_headers = tuple(header.lower() for header in signed_headers)
        self.on_signed = on_signed
        self.digest_empty_body = digest_empty_body
        # The hot path reads these per request: derive them once.
        self._key_id = (
            credentials.key_id
            if key_id_style is None
            else key_id_style.render(credentials.certificate)
        )
        self._certificate_b64 = credentials.certificate_b64
        self._private_key = credentials.private_key
        self._digest = DIGEST_ALGORITHMS[name]
        self._digest_prefix = f"{name}="
        self._candidates = tuple((name, name.encode("ascii")) for name in self.signed_headers)
        self._last_date: tuple[int, str] = (-1, "")

    # -- overridable steps ------------------------------------------------------------------

    @property
    def key_id(self) -> str:
        """The keyId parameter (spec 5.2)."""
        return self._key_id

    @property
    def certificate_b64(self) -> str:
        """The TPP-Signature-Certificate value (spec 5.1)."""
        return self._certificate_b64

    def _date_header(self, moment: datetime) -> str:
        """The Date value for ``moment``; formatted once per second (requests come in bursts)."""
        second = int(moment.timestamp())
        if self._last_date[0] != second:
            self._last_date = (second, _http_date(moment))
        return self._last_date[1]

    def wants_digest(self, body: bytes) -> bool:
        """Spec 5.4: requests that carry a body include Digest."""
        return bool(body) or self.digest_empty_body

    def digest_input(self, body: bytes) -> bytes:
        """The bytes the Digest is computed over: the exact body."""
        return body

    def header_names(self, present: Mapping[str, str]) -> tuple[str, ...]:
        """Spec 5.2: the configured headers, in order, each when present in the request.

        ``present`` maps the lowercased name of each header of ``signed_headers`` that the
        request carries to its value as sent.
        """
        return tuple(
            name for name in self.signed_headers if name.startswith("(") or name in present
        )

    def signature(self, signing_string: str) -> str:
        """The signature parameter: Base64(RSA-SHA256(signing string))."""
        return sign_signing_string(signing_string, self._private_key)

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        """The request that is sent once signed."""
        return request

    # -- the flow -----------------------------------------------------------------------------

    def sign_request(self, request: httpx.Request) -> str:
        """Add Date, Digest, Signature and TPP-Signature-Certificate; return the signing string."""
        sent = _headers_as_sent(request)
        present = {name: sent[key].decode("ascii") for name, key in self._candidates if key in sent}
        headers = request.headers
        if b"date" not in sent:
            headers["Date"] = present["date"] = self._date_header(self.clock())
        body = request.content
        if self.wants_digest(body):
            digest = self._digest(self.digest_input(body)).digest()
            value = f"{self._digest_prefix}{base64.b64encode(digest).decode('ascii')}"
            headers["Digest"] = present["digest"] = value
        names = self.header_names(present)
        signing_string = signing_string_of(
            request.method, request.url.raw_path.decode("ascii"), present, names
        )
        parameters = SignatureParameters(
            key_id=self.key_id,
            signature=self.signature(signing_string),
            algorithm=self.algorithm_name,
            headers=names,
        )
        headers["Signature"] = encode_header_value(parameters.to_header_value())
        headers["TPP-Signature-Certificate"] = self.certificate_b64
        return signing_string

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        signing_string = self.sign_request(request)
        sent = self.outgoing(request)
        if self.on_signed is not None:
            self.on_signed(sent, signing_string)
        yield sent
