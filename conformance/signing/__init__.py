"""Request signing and verification (spec 5): draft-cavage-http-signatures-10, PSD2 profile.

Every request to the interface carries three things (spec 5.1, 5.2, 5.4):

* ``Digest``: ``SHA-256=<base64>`` (or ``SHA-512=``) over the exact body bytes (RFC 3230/5843);
* ``Signature``: ``keyId="SN=<serial hex>,CA=<issuer DN>",algorithm="rsa-sha256",
  headers="date digest x-request-id ...",signature="<base64 RSA-SHA256 PKCS#1 v1.5>"``;
* ``TPP-Signature-Certificate``: the signing certificate, base64 DER.

The module has four layers, each usable alone:

1. pure functions: :func:`build_signing_string`, :func:`sign_signing_string`,
   :func:`verify_signature`, :func:`parse_signature_header`, :func:`encode_header_value` /
   :func:`decode_header_value` (RFC 2047, spec 5.3);
2. :class:`SignatureAuth`, an ``httpx.Auth`` whose ``auth_flow`` sees the final request (httpx
   has read the body, set ``Host`` and ``Content-Length``) and signs exactly what is sent;
3. deliberately broken signers (:class:`StaleDigestSigner`, :class:`WrongKeySigner`, ...) for the
   negative scenarios: each overrides one step of :class:`SignatureAuth`;
4. :func:`verify_request`, used by the reference server and by the tests, which reports the
   *first* failed requirement as a :class:`VerificationFailure`.

Decisions where spec 5 and the draft are silent (each is a docstring below too):

* ``keyId`` serial: lowercase hex without leading zeros (``format(serial, "x")``). The verifier
  compares serials as integers, so ``SN=00A1F`` and ``SN=a1f`` name the same certificate.
* ``keyId`` issuer: the RFC 4514 string of the certificate's issuer as ``cryptography`` renders
  it. The verifier compares distinguished names as ``x509.Name`` values (attribute types
  case-insensitive, values compared case- and whitespace-insensitively, either RDN order), so a
  TPP that writes ``C=NO, O=Bank, CN=CA`` is not failed for formatting.
* Quoted-string parameter values escape ``\\`` and ``"`` as RFC 7230 quoted-pairs.
* Non-ASCII header values are sent as one RFC 2047 encoded word ``=?utf-8?B?...?=`` (spec 5.3)
  and are signed *as sent*; a non-ASCII ``Signature`` value (an issuer DN with ``Ø``) is encoded
  as a whole, exactly as spec 5.3 shows.
* Signing-string bytes: ISO-8859-1 when every character fits (so header values that a server
  decoded as Latin-1 give back the bytes on the wire), UTF-8 otherwise.
* ``algorithm`` may be absent (the draft makes it optional and derives it from the key); when
  present it must be ``rsa-sha256`` and the certificate key must be RSA.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.utils import format_datetime
from functools import cache, cached_property, lru_cache
from typing import Protocol

import httpx
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificatePublicKeyTypes
from cryptography.x509.oid import NameOID

from conformance.errors import CertificateError

__all__ = [
    "DEFAULT_SIGNED_HEADERS",
    "DIGEST_ALGORITHMS",
    "REQUEST_TARGET",
    "SIGNATURE_ALGORITHM",
    "SPEC5_SIGNED_HEADERS",
    "BodyChangedAfterSigningSigner",
    "IncompleteHeadersSigner",
    "KeyIdIssuerMismatchSigner",
    "KeyIdSerialMismatchSigner",
    "MalformedSignatureError",
    "NoDigestSigner",
    "NoSignatureSigner",
    "SignatureAuth",
    "SignatureParameters",
    "SigningCredentials",
    "SigningStringError",
    "StaleDigestSigner",
    "Verification",
    "VerificationFailure",
    "WrongAlgorithmSigner",
    "WrongKeySigner",
    "build_signing_string",
    "decode_header_value",
    "digest_header_value",
    "encode_header_value",
    "issuer_matches",
    "load_signature_certificate",
    "parse_key_id",
    "parse_signature_header",
    "sign_signing_string",
    "verify_httpx_request",
    "verify_request",
    "verify_signature",
]

SIGNATURE_ALGORITHM = "rsa-sha256"
"""The only algorithm spec 5.2 expects ("rsa-sha256 is expected")."""

REQUEST_TARGET = "(request-target)"
"""The draft's pseudo-header (draft-cavage-http-signatures-10 section 2.3 step 1)."""

SPEC5_SIGNED_HEADERS: tuple[str, ...] = (
    "date",
    "digest",
    "x-request-id",
    "psu-id",
    "psu-corporate-id",
    "tpp-redirect-uri",
)
"""Spec 5.2: the signed ``headers`` list contains these, in this order, each when available."""

DEFAULT_SIGNED_HEADERS = SPEC5_SIGNED_HEADERS


class _HashObject(Protocol):
    def digest(self) -> bytes: ...


DIGEST_ALGORITHMS: Mapping[str, Callable[[bytes], _HashObject]] = {
    "SHA-256": hashlib.sha256,
    "SHA-512": hashlib.sha512,
}
"""Spec 5.4 / 4.2 Digest: sha256 or sha512, named as in RFC 5843."""

_PKCS1V15 = padding.PKCS1v15()
_SHA256 = hashes.SHA256()


# --------------------------------------------------------------------------------------------
# RFC 2047 header values (spec 5.3)
# --------------------------------------------------------------------------------------------


def encode_header_value(value: str) -> str:
    """Return ``value`` as it may go on the wire: unchanged when ASCII, else ``=?utf-8?B?..?=``.

    Spec 5.3 shows a single encoded word for the whole value (no 75-character folding, which
    RFC 2047 asks of mail headers but which would split a Signature header in several words).
    """
    if value.isascii():
        return value
    return "=?utf-8?B?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str) -> str:
    """Decode RFC 2047 encoded words (``B`` or ``Q``, any charset Python knows) in ``value``.

    Text without an encoded word is returned unchanged. Raises ``ValueError`` for an encoded
    word that cannot be decoded (bad base64, unknown charset).
    """
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (HeaderParseError, LookupError, UnicodeError) as exc:
        raise ValueError(f"cannot decode RFC 2047 header value {value!r}: {exc}") from exc


def _wire_text(raw: bytes) -> str:
    """Text of a raw header value: UTF-8 when it is valid UTF-8, else ISO-8859-1 (spec 5.3)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")


def _signing_bytes(signing_string: str) -> bytes:
    """Bytes that are signed: Latin-1 when possible (the wire bytes of a Latin-1-decoded
    header), UTF-8 otherwise. A signer that follows spec 5.3 only produces ASCII."""
    try:
        return signing_string.encode("iso-8859-1")
    except UnicodeEncodeError:
        return signing_string.encode("utf-8")


# --------------------------------------------------------------------------------------------
# Signing string, signature value, Digest (pure functions)
# --------------------------------------------------------------------------------------------


class SigningStringError(ValueError):
    """A name in the ``headers`` list cannot be rendered: the header is absent from the request,
    or it is a pseudo-header that draft-10 does not define. ``header_name`` says which."""

    def __init__(self, header_name: str, message: str) -> None:
        super().__init__(message)
        self.header_name = header_name


_OBS_FOLD = re.compile(r"\r?\n[ \t]+")


def _canonical_value(value: str) -> str:
    """Draft-10 section 2.3 step 2: drop leading/trailing OWS; an obsolete line fold is one SP."""
    if "\n" in value:
        value = _OBS_FOLD.sub(" ", value)
    return value.strip(" \t")


def build_signing_string(
    method: str,
    target: str,
    headers: Mapping[str, str],
    header_names: Sequence[str],
) -> str:
    """Build the draft-10 signing string (section 2.3) for ``header_names``, in that order.

    ``target`` is the path and query exactly as sent (``/foo?param=value&pet=dog``); it is
    used for the ``(request-target)`` pseudo-header as ``<lowercased method> <target>``. Header
    lookup is case-insensitive; a header that occurs several times is used as its values joined
    by ``", "`` (``httpx.Headers`` joins them itself; a mapping whose ``items()`` repeats a
    name, like ``email.message.Message``, is joined here). Lines are ``name: value`` with the name
    lowercased, joined by ``\\n`` with no trailing newline.

    Raises :class:`SigningStringError` when a listed header is absent from ``headers``.
    """
    return _signing_string(method, target, _lowercased(headers), header_names)


def _lowercased(headers: Mapping[str, str]) -> dict[str, str]:
    """Lowercased name to value; a name that ``items()`` yields twice (``email.message.Message``
    does) gets its values joined by ``", "`` (draft-10 section 2.3 step 2)."""
    lowered: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
    return lowered


def _signing_string(
    method: str, target: str, lowered: Mapping[str, str], header_names: Sequence[str]
) -> str:
    """:func:`build_signing_string` over headers whose names are already lowercase."""
    if not header_names:
        raise ValueError("no header names to sign: the signing string would be empty")
    lines = []
    for listed in header_names:
        name = listed.lower()
        if name == REQUEST_TARGET:
            value = f"{method.lower()} {target}"
        elif name.startswith("("):
            raise SigningStringError(
                name,
                f"pseudo-header {name} is not defined by draft-cavage-http-signatures-10 "
                "(section 2.3 knows only (request-target))",
            )
        else:
            raw = lowered.get(name)
            if raw is None:
                raise SigningStringError(
                    name, f"header {name!r} is listed for signing but absent from the request"
                )
            value = _canonical_value(raw)
        lines.append(f"{name}: {value}")
    return "\n".join(lines)


def sign_signing_string(signing_string: str, private_key: rsa.RSAPrivateKey) -> str:
    """Base64(RSA-SHA256 PKCS#1 v1.5 (signing string)), spec 5.2 / draft-10 section 2.4."""
    raw = private_key.sign(_signing_bytes(signing_string), _PKCS1V15, _SHA256)
    return base64.b64encode(raw).decode("ascii")


def verify_signature(
    signing_string: str,
    signature_b64: str,
    public_key: rsa.RSAPublicKey,
    algorithm: str = SIGNATURE_ALGORITHM,
) -> bool:
    """Check ``signature_b64`` over ``signing_string`` (draft-10 section 2.5).

    Returns False for a wrong signature or one that is not base64. Raises ``ValueError`` for an
    algorithm other than rsa-sha256 or a public key that is not RSA: those are not "invalid
    signatures" but requests this verifier cannot judge.
    """
    if algorithm.lower() != SIGNATURE_ALGORITHM:
        raise ValueError(f"unsupported signature algorithm {algorithm!r}; only rsa-sha256")
    if not isinstance(public_key, rsa.RSAPublicKey):
        raise ValueError(f"rsa-sha256 needs an RSA public key, not {type(public_key).__name__}")
    try:
        raw = base64.b64decode(signature_b64, validate=True)
    except binascii.Error:
        return False
    try:
        public_key.verify(raw, _signing_bytes(signing_string), _PKCS1V15, _SHA256)
    except InvalidSignature:
        return False
    return True


def digest_header_value(body: bytes, algorithm: str = "SHA-256") -> str:
    """``SHA-256=<base64>`` (RFC 3230 instance digest, RFC 5843 algorithm names), spec 5.4."""
    name = algorithm.upper()
    digest = DIGEST_ALGORITHMS[name](body).digest()
    return f"{name}={base64.b64encode(digest).decode('ascii')}"


# --------------------------------------------------------------------------------------------
# The Signature header value
# --------------------------------------------------------------------------------------------


class MalformedSignatureError(ValueError):
    """The Signature header is not a list of draft-10 parameters with keyId and signature."""


def _quote(value: str) -> str:
    """An RFC 7230 quoted-string: ``\\`` and ``"`` become quoted-pairs."""
    if "\\" in value or '"' in value:
        value = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{value}"'


@dataclass(frozen=True)
class SignatureParameters:
    """The parameters of a draft-10 Signature header (section 2.1).

    ``headers`` defaults to ``("date",)`` as the draft says for an absent parameter (2.1.3);
    ``algorithm`` is ``None`` when the parameter is absent (it is optional, 2.1.4).
    """

    key_id: str
    signature: str
    algorithm: str | None = SIGNATURE_ALGORITHM
    headers: tuple[str, ...] = ("date",)

    def to_header_value(self) -> str:
        """Render as ``keyId="..",algorithm="..",headers="..",signature=".."`` (unencoded)."""
        parts = [f"keyId={_quote(self.key_id)}"]
        if self.algorithm is not None:
            parts.append(f"algorithm={_quote(self.algorithm)}")
        parts.append(f"headers={_quote(' '.join(self.headers))}")
        parts.append(f"signature={_quote(self.signature)}")
        return ",".join(parts)


_AUTH_SCHEME = re.compile(r"\s*Signature\s+(?=[A-Za-z][\w-]*\s*=)", re.IGNORECASE)
# The quoted-string is written "unrolled" (runs of plain characters, then one quoted-pair): the
# same language as ``(?:[^"\\]|\\.)*``, without one alternation step per character of the
# 344-character base64 signature.
_AUTH_PARAM = re.compile(
    r'\s*([A-Za-z][\w-]*)\s*=\s*(?:"([^"\\]*(?:\\.[^"\\]*)*)"|([^\s,"]*))\s*(?:,|$)', re.DOTALL
)
_QUOTED_PAIR = re.compile(r"\\(.)", re.DOTALL)


def parse_signature_header(value: str) -> SignatureParameters:
    """Parse a (decoded) Signature header value into :class:`SignatureParameters`.

    Accepts the ``Authorization: Signature ...`` form too (the scheme word is skipped) and
    optional whitespace after commas. Per draft-10 section 2.2 a duplicated parameter takes its
    last value and unknown parameters are ignored. Raises :class:`MalformedSignatureError`.
    """
    position = 0
    scheme = _AUTH_SCHEME.match(value)
    if scheme:
        position = scheme.end()
    params: dict[str, str] = {}
    text = value.rstrip()
    while position < len(text):
        match = _AUTH_PARAM.match(text, position)
        if match is None or match.end() == position:
            raise MalformedSignatureError(
                f'Signature header is not a list of name="value" parameters near '
                f"{text[position : position + 30]!r} (draft-cavage-http-signatures-10 section 4.1)"
            )
        quoted, bare = match.group(2), match.group(3)
        if quoted is not None and "\\" in quoted:
            quoted = _QUOTED_PAIR.sub(r"\1", quoted)
        params[match.group(1)] = quoted if quoted is not None else bare
        position = match.end()
    for required in ("keyId", "signature"):
        if not params.get(required):
            raise MalformedSignatureError(f"Signature header has no {required} parameter")
    try:
        base64.b64decode(params["signature"], validate=True)
    except binascii.Error as exc:
        raise MalformedSignatureError("Signature signature parameter is not base64") from exc
    headers = ("date",)
    if "headers" in params:
        headers = tuple(name.lower() for name in params["headers"].split())
        if not headers:
            raise MalformedSignatureError("Signature headers parameter is empty")
    return SignatureParameters(
        key_id=params["keyId"],
        signature=params["signature"],
        algorithm=params.get("algorithm"),
        headers=headers,
    )


_KEY_ID = re.compile(r"\s*SN\s*=\s*([0-9A-Fa-f]+)\s*,\s*CA\s*=\s*(.+?)\s*", re.IGNORECASE)


def parse_key_id(key_id: str) -> tuple[int, str]:
    """Split a spec 5.2 keyId ``SN=<serial_hex>,CA=<issuer DN>`` into (serial, issuer text)."""
    match = _KEY_ID.fullmatch(key_id)
    if match is None:
        raise ValueError(
            f"keyId {key_id!r} is not of the form SN=<serial_hex>,CA=<issuer DN> (spec 5.2)"
        )
    return int(match.group(1), 16), match.group(2)


# --------------------------------------------------------------------------------------------
# Distinguished names and certificates
# --------------------------------------------------------------------------------------------

_DN_TYPE_ALIASES: Mapping[str, str] = {
    "cn": "CN",
    "c": "C",
    "o": "O",
    "ou": "OU",
    "l": "L",
    "st": "ST",
    "s": "ST",
    "street": "STREET",
    "dc": "DC",
    "uid": "UID",
    "e": NameOID.EMAIL_ADDRESS.dotted_string,
    "emailaddress": NameOID.EMAIL_ADDRESS.dotted_string,
    "serialnumber": NameOID.SERIAL_NUMBER.dotted_string,
    "organizationidentifier": NameOID.ORGANIZATION_IDENTIFIER.dotted_string,
    "sn": NameOID.SURNAME.dotted_string,
    "surname": NameOID.SURNAME.dotted_string,
    "gn": NameOID.GIVEN_NAME.dotted_string,
    "givenname": NameOID.GIVEN_NAME.dotted_string,
    "title": NameOID.TITLE.dotted_string,
    "postalcode": NameOID.POSTAL_CODE.dotted_string,
    "businesscategory": NameOID.BUSINESS_CATEGORY.dotted_string,
}
"""Attribute type names seen in PSD2 (eIDAS QWAC/QSealC) issuer DNs, mapped to what
``x509.Name.from_rfc4514_string`` understands (its own short names, else a dotted OID)."""

_DN_SEPARATOR_SPACE = re.compile(r"\s*(?<!\\)([,+])\s*")
_DN_ATTRIBUTE_TYPE = re.compile(r"(^|(?<!\\)[,+])([A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)\s*=")


def _parse_dn(text: str) -> x509.Name | None:
    """Parse a DN written with spaces after separators or other-case attribute names."""
    compact = _DN_SEPARATOR_SPACE.sub(r"\1", text.strip())
    canonical = _DN_ATTRIBUTE_TYPE.sub(
        lambda m: m.group(1) + _DN_TYPE_ALIASES.get(m.group(2).lower(), m.group(2)) + "=",
        compact,
    )
    try:
        return x509.Name.from_rfc4514_string(canonical)
    except ValueError:
        return None


def _fold(value: str | bytes) -> str | bytes:
    return " ".join(value.split()).casefold() if isinstance(value, str) else value


def _name_key(name: x509.Name) -> tuple[frozenset[tuple[str, str | bytes]], ...]:
    return tuple(
        frozenset((attribute.oid.dotted_string, _fold(attribute.value)) for attribute in rdn)
        for rdn in name.rdns
    )


def issuer_matches(dn_text: str, issuer: x509.Name) -> bool:
    """True when ``dn_text`` names ``issuer`` (spec 5.2 keyId ``CA=``).

    Compared as names, not strings: attribute types case-insensitively (with the usual aliases),
    values ignoring case and runs of whitespace, and the RDNs either in RFC 4514 order (most
    specific first) or in certificate order (``C=..,O=..,CN=..``, as OpenSSL prints them).
    """
    return _keys_match(_dn_text_key(dn_text), _name_key(issuer))


_NameKey = tuple[frozenset[tuple[str, str | bytes]], ...]

#: Distinct keyId issuers and signing certificates remembered. A TPP signs every request with
#: the same certificate and keyId, so a handful of entries serve a whole run; the bound keeps a
#: client that sends a new certificate per request from growing the process.
_CACHE_SIZE = 256


@lru_cache(maxsize=_CACHE_SIZE)
def _dn_text_key(dn_text: str) -> _NameKey | None:
    """The comparison key of a DN written as text (None when it does not parse). A pure function
    of the string, cached: parsing a DN through ``x509.Name`` costs more than the RSA check."""
    parsed = _parse_dn(dn_text)
    return None if parsed is None else _name_key(parsed)


def _keys_match(key: _NameKey | None, wanted: _NameKey) -> bool:
    return key is not None and (key == wanted or key[::-1] == wanted)


_PEM_ARMOUR = re.compile(r"-----(?:BEGIN|END) CERTIFICATE-----")


def load_signature_certificate(value: str) -> x509.Certificate:
    """Load TPP-Signature-Certificate (spec 5.1): base64 DER, base64 of a PEM file, or PEM text
    squeezed onto one header line. Raises ``ValueError`` when it is none of these."""
    compact = "".join(_PEM_ARMOUR.sub("", value).split())
    try:
        raw = base64.b64decode(compact, validate=True)
    except binascii.Error as exc:
        raise ValueError("TPP-Signature-Certificate is not base64") from exc
    if raw.lstrip().startswith(b"-----BEGIN"):
        return x509.load_pem_x509_certificate(raw.strip())
    return x509.load_der_x509_certificate(raw)


@dataclass(frozen=True, slots=True)
class _SigningCertificate:
    """What :func:`verify_request` reads from a TPP-Signature-Certificate, read once."""

    certificate: x509.Certificate
    not_before: datetime
    not_after: datetime
    public_key: CertificatePublicKeyTypes
    serial: int
    issuer_key: _NameKey


@lru_cache(maxsize=_CACHE_SIZE)
def _signing_certificate(value: str) -> _SigningCertificate:
    """:func:`load_signature_certificate` and the facts the verifier needs, per header value.

    Why the cache is safe: everything here is a pure function of the header text (the DER
    bytes); nothing that depends on the request or the clock is kept (validity is compared
    with ``now`` on every request), and the values are immutable (``cryptography``'s
    certificate and public key objects are read-only and thread-safe). Nothing invalidates an
    entry; the least recently used goes when :data:`_CACHE_SIZE` are held. A value that does
    not load raises every time (``lru_cache`` does not keep exceptions).
    """
    certificate = load_signature_certificate(value)
    return _SigningCertificate(
        certificate=certificate,
        not_before=certificate.not_valid_before_utc,
        not_after=certificate.not_valid_after_utc,
        public_key=certificate.public_key(),
        serial=certificate.serial_number,
        issuer_key=_name_key(certificate.issuer),
    )


@lru_cache(maxsize=_CACHE_SIZE)
def _parsed_key_id(key_id: str) -> tuple[int, str]:
    """:func:`parse_key_id`, cached: a TPP's keyId is the same on every request."""
    return parse_key_id(key_id)


# --------------------------------------------------------------------------------------------
# Credentials and the signer
# --------------------------------------------------------------------------------------------


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
            (name, value if value.isascii() else encode_header_value(_wire_text(value)).encode())
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

    ``clock`` returns an aware ``datetime`` (a naive one is taken as UTC).
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
        self._key_id = credentials.key_id
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
        signing_string = _signing_string(
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


# --------------------------------------------------------------------------------------------
# Deliberately broken signers (negative scenarios). Each breaks one spec 5 requirement.
# --------------------------------------------------------------------------------------------


@cache
def _throwaway_key() -> rsa.RSAPrivateKey:
    """An RSA-2048 key that belongs to no certificate (made once per process)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class StaleDigestSigner(SignatureAuth):
    """Digest of another body (the body before a last edit): expect DIGEST_MISMATCH (5.4).
    The Digest is sent even without a body, so the fault never vanishes on a GET."""

    def wants_digest(self, body: bytes) -> bool:
        return True

    def digest_input(self, body: bytes) -> bytes:
        return body + b"\n"


class WrongKeySigner(SignatureAuth):
    """Signs with a key that is not the certificate's: expect BAD_SIGNATURE (spec 5.2)."""

    def signature(self, signing_string: str) -> str:
        return sign_signing_string(signing_string, _throwaway_key())


class KeyIdSerialMismatchSigner(SignatureAuth):
    """keyId names another serial than the certificate's: expect KEYID_MISMATCH (spec 5.2)."""

    @property
    def key_id(self) -> str:
        serial = self.credentials.certificate.serial_number + 1
        return f"SN={serial:x},CA={self.credentials.issuer}"


class KeyIdIssuerMismatchSigner(SignatureAuth):
    """keyId names another CA than the certificate's issuer: expect KEYID_MISMATCH (spec 5.2)."""

    other_issuer = "CN=Not The Issuing CA,O=PSD2 Conformance Suite,C=NO"

    @property
    def key_id(self) -> str:
        return f"SN={self.credentials.serial_hex},CA={self.other_issuer}"


class IncompleteHeadersSigner(SignatureAuth):
    """Leaves a present spec 5 header out of the list (``omitted`` when present, else the last
    one): expect HEADERS_INCOMPLETE (spec 5.2)."""

    omitted = "x-request-id"

    def header_names(self, present: Mapping[str, str]) -> tuple[str, ...]:
        names = super().header_names(present)
        dropped = self.omitted if self.omitted in names else names[-1]
        return tuple(name for name in names if name != dropped)


class WrongAlgorithmSigner(SignatureAuth):
    """Names an algorithm the RSA certificate does not have: expect UNSUPPORTED_ALGORITHM."""

    algorithm_name = "hmac-sha256"


class NoSignatureSigner(SignatureAuth):
    """Sends the certificate but no Signature header: expect MISSING_HEADER (spec 5.2)."""

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        del request.headers["Signature"]
        return request


class NoDigestSigner(SignatureAuth):
    """Signs a body without a Digest header: expect MISSING_HEADER Digest (spec 5.4)."""

    def wants_digest(self, body: bytes) -> bool:
        return False


class BodyChangedAfterSigningSigner(SignatureAuth):
    """Sends a body one byte longer than the one signed and digested: expect DIGEST_MISMATCH."""

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
        return httpx.Request(
            request.method,
            request.url,
            headers=headers,
            content=request.content + b" ",
            extensions=request.extensions,
        )


# --------------------------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------------------------


class VerificationFailure(enum.StrEnum):
    """Why a request's signature is rejected; the first failed check in the order of
    :func:`verify_request`."""

    MISSING_HEADER = enum.auto()
    MALFORMED_SIGNATURE = enum.auto()
    BAD_CERTIFICATE = enum.auto()
    UNSUPPORTED_ALGORITHM = enum.auto()
    KEYID_MISMATCH = enum.auto()
    DIGEST_MISMATCH = enum.auto()
    UNSUPPORTED_DIGEST_ALGORITHM = enum.auto()
    HEADERS_INCOMPLETE = enum.auto()
    BAD_SIGNATURE = enum.auto()


@dataclass(frozen=True)
class Verification:
    """The verdict on one request. ``header`` names the header concerned for MISSING_HEADER and
    HEADERS_INCOMPLETE; ``signing_string`` is the string the verifier rebuilt (when the listed
    headers allowed it), ``certificate`` and ``parameters`` what it parsed."""

    ok: bool
    failure: VerificationFailure | None = None
    detail: str = ""
    header: str | None = None
    signing_string: str | None = None
    certificate: x509.Certificate | None = None
    parameters: SignatureParameters | None = None


def _check_digest(value: str, body: bytes) -> tuple[VerificationFailure, str] | None:
    """Spec 5.4: every SHA-256/SHA-512 instance digest in ``value`` matches ``body``."""
    supported = 0
    for item in value.split(","):
        name, sep, encoded = item.strip().partition("=")
        algorithm = name.strip().upper()
        if not sep or algorithm not in DIGEST_ALGORITHMS:
            continue
        supported += 1
        try:
            received = base64.b64decode(encoded.strip(), validate=True)
        except binascii.Error:
            return VerificationFailure.DIGEST_MISMATCH, f"Digest {algorithm} value is not base64"
        expected = DIGEST_ALGORITHMS[algorithm](body).digest()
        if not hmac.compare_digest(received, expected):
            computed = base64.b64encode(expected).decode("ascii")
            return (
                VerificationFailure.DIGEST_MISMATCH,
                f"Digest {item.strip()!r} does not match the {len(body)}-byte body, whose "
                f"{algorithm} is {computed} (spec 5.4)",
            )
    if not supported:
        return (
            VerificationFailure.UNSUPPORTED_DIGEST_ALGORITHM,
            f"Digest {value!r} has no SHA-256 or SHA-512 value (spec 5.4, RFC 5843)",
        )
    return None


def verify_request(
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    required_signed: Sequence[str] = SPEC5_SIGNED_HEADERS,
    now: datetime | None = None,
) -> Verification:
    """Verify a received request against spec 5; report the first failure.

    Order of checks: TPP-Signature-Certificate and Signature present (MISSING_HEADER); Signature
    parsed after RFC 2047 decoding (MALFORMED_SIGNATURE); certificate decoded and valid at
    ``now`` (BAD_CERTIFICATE; ``now`` defaults to the current time); algorithm rsa-sha256 and an
    RSA certificate key (UNSUPPORTED_ALGORITHM); keyId serial and issuer against the certificate
    (KEYID_MISMATCH); Digest present when there is a body, SHA-256/SHA-512, matching
    (MISSING_HEADER, UNSUPPORTED_DIGEST_ALGORITHM, DIGEST_MISMATCH); every header of
    ``required_signed`` present in the request is listed (HEADERS_INCOMPLETE); every listed
    header present (MISSING_HEADER); the RSA-SHA256 signature (BAD_SIGNATURE).

    ``target`` is the path and query as received; ``headers`` values are as received (still
    RFC 2047-encoded: they are signed that way).
    """
    lowered = _lowercased(headers)

    certificate_value = lowered.get("tpp-signature-certificate")
    if certificate_value is None:
        return _missing("TPP-Signature-Certificate", "spec 5.1")
    signature_value = lowered.get("signature")
    if signature_value is None:
        return _missing("Signature", "spec 5.2")

    try:
        parameters = parse_signature_header(decode_header_value(signature_value.strip()))
    except ValueError as exc:
        return Verification(False, VerificationFailure.MALFORMED_SIGNATURE, f"{exc} (spec 5.2)")

    # Rebuilt up front so that every later verdict can show it in the report.
    signing_string: str | None = None
    string_error: SigningStringError | None = None
    try:
        signing_string = _signing_string(method, target, lowered, parameters.headers)
    except SigningStringError as exc:
        string_error = exc

    def fail(
        failure: VerificationFailure,
        detail: str,
        *,
        header: str | None = None,
        certificate: x509.Certificate | None = None,
    ) -> Verification:
        return Verification(
            False,
            failure,
            detail,
            header=header,
            signing_string=signing_string,
            certificate=certificate,
            parameters=parameters,
        )

    try:
        facts = _signing_certificate(certificate_value)
    except ValueError as exc:
        return fail(
            VerificationFailure.BAD_CERTIFICATE,
            f"TPP-Signature-Certificate is not a base64 DER (or PEM) certificate: {exc} (spec 5.1)",
        )
    certificate = facts.certificate
    moment = now or datetime.now(UTC)
    if not facts.not_before <= moment <= facts.not_after:
        return fail(
            VerificationFailure.BAD_CERTIFICATE,
            f"the signing certificate is not valid at {moment.isoformat()}: valid from "
            f"{facts.not_before.isoformat()} to {facts.not_after.isoformat()} (spec 5.1)",
            certificate=certificate,
        )

    public_key = facts.public_key
    algorithm = parameters.algorithm
    if algorithm is not None and algorithm.lower() != SIGNATURE_ALGORITHM:
        return fail(
            VerificationFailure.UNSUPPORTED_ALGORITHM,
            f"algorithm={algorithm!r}; spec 5.2 expects rsa-sha256, the algorithm of the "
            "certificate",
            certificate=certificate,
        )
    if not isinstance(public_key, rsa.RSAPublicKey):
        return fail(
            VerificationFailure.UNSUPPORTED_ALGORITHM,
            f"the certificate key is not RSA ({type(public_key).__name__}); spec 5.2 expects "
            "rsa-sha256 to name the certificate's algorithm",
            certificate=certificate,
        )

    try:
        serial, issuer_text = _parsed_key_id(parameters.key_id)
    except ValueError as exc:
        return fail(VerificationFailure.KEYID_MISMATCH, str(exc), certificate=certificate)
    if serial != facts.serial:
        return fail(
            VerificationFailure.KEYID_MISMATCH,
            f"keyId serial {serial:x} is not the certificate serial "
            f"{facts.serial:x} (spec 5.2 keyId SN=<serial_hex>)",
            certificate=certificate,
        )
    if not _keys_match(_dn_text_key(issuer_text), facts.issuer_key):
        return fail(
            VerificationFailure.KEYID_MISMATCH,
            f"keyId CA {issuer_text!r} is not the certificate issuer "
            f"{certificate.issuer.rfc4514_string()!r} (spec 5.2 keyId CA=<CA DN>)",
            certificate=certificate,
        )

    digest_value = lowered.get("digest")
    if digest_value is None:
        if body:
            return fail(
                VerificationFailure.MISSING_HEADER,
                f"Digest: absent from a request with a {len(body)}-byte body (spec 5.4)",
                header="Digest",
                certificate=certificate,
            )
    else:
        problem = _check_digest(digest_value, body)
        if problem is not None:
            failure, detail = problem
            return fail(failure, detail, certificate=certificate)

    listed = set(parameters.headers)
    for name in required_signed:
        if name.lower() in lowered and name.lower() not in listed:
            return fail(
                VerificationFailure.HEADERS_INCOMPLETE,
                f"{name} is present in the request but not in the Signature headers list "
                f"{' '.join(parameters.headers)!r} (spec 5.2)",
                header=name.lower(),
                certificate=certificate,
            )

    if string_error is not None:
        if string_error.header_name.startswith("("):
            return fail(
                VerificationFailure.MALFORMED_SIGNATURE, str(string_error), certificate=certificate
            )
        return fail(
            VerificationFailure.MISSING_HEADER,
            f"{string_error} (draft-cavage-http-signatures-10 section 2.3)",
            header=string_error.header_name,
            certificate=certificate,
        )
    assert signing_string is not None
    if not verify_signature(signing_string, parameters.signature, public_key):
        return fail(
            VerificationFailure.BAD_SIGNATURE,
            "the signature does not verify with the certificate's key over the signing string "
            "(spec 5.2: Base64(RSA-SHA256(signing string)))",
            certificate=certificate,
        )
    return Verification(
        True, signing_string=signing_string, certificate=certificate, parameters=parameters
    )


def _missing(header: str, part: str) -> Verification:
    return Verification(
        False,
        VerificationFailure.MISSING_HEADER,
        f"{header}: header absent ({part})",
        header=header,
    )


def verify_httpx_request(
    request: httpx.Request,
    *,
    required_signed: Sequence[str] = SPEC5_SIGNED_HEADERS,
    now: datetime | None = None,
) -> Verification:
    """:func:`verify_request` over an ``httpx.Request`` as it would be sent (tests, the client)."""
    return verify_request(
        request.method,
        request.url.raw_path.decode("ascii"),
        request.headers,
        request.read(),
        required_signed=required_signed,
        now=now,
    )
