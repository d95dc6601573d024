"""Reading a Signature header (spec 5 item 2): its parameters, the keyId (serial and issuer DN,
compared as values), and the signing certificate of TPP-Signature-Certificate, cached per text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from urllib.parse import quote, unquote

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.types import CertificatePublicKeyTypes
from cryptography.x509.oid import NameOID

from conformance.signing.canonical import SIGNATURE_ALGORITHM


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
    headers: tuple[str, ...] = ("date",)
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
    return issuer_text_matches(dn_text, _name_key(issuer))


_NameKey = tuple[frozenset[tuple[str, str | bytes]], ...]


#: Distinct keyId issuers and signing certificates remembered. A TPP signs every request with
#: the same certificate and keyId, so a handful of entries serve a whole run; the bound keeps a
#: client that sends a new certificate per request from growing the process.
_CACHE_SIZE = 256


@lru_cache(maxsize=_CACHE_SIZE)
def dn_text_key(dn_text: str) -> _NameKey | None:
    """The comparison key of a DN written as text (None when it does not parse). A pure function
    of the string, cached: parsing a DN through ``x509.Name`` costs more than the RSA check."""
    parsed = _parse_dn(dn_text)
    return None if parsed is None else _name_key(parsed)


def keys_match(key: _NameKey | None, wanted: _NameKey) -> bool:
    return key is not None and (key == wanted or key[::-1] == wanted)


_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def issuer_text_matches(dn_text: str, wanted: _NameKey) -> bool:
    """Whether a keyId ``CA=`` text names the issuer whose key is ``wanted``: as written, or,
    when it holds percent escapes, URL-decoded (Berlin Group's own example writes
    ``CA=CN=D-TRUST%20CA%202-1%202015,...``). The order of the RDNs may be either way round
    (:func:`keys_match`)."""
    if keys_match(dn_text_key(dn_text), wanted):
        return True
    return bool(_PERCENT_ESCAPE.search(dn_text)) and keys_match(
        dn_text_key(unquote(dn_text)), wanted
    )


@dataclass(frozen=True)
class KeyIdStyle:
    """How the signer writes the keyId of spec 5 item 2 (``SN=<serial_hex>,CA=<full CA
    distinguished name>``), for a bank that compares keyIds as text rather than as values.

    The spec fixes neither the case of the hexadecimal serial nor the way the DN is written.
    The default is lower-case hex and the RFC 4514 string of the issuer (most specific RDN
    first). ``upper_serial`` writes ``SN=9FA1``; ``reversed_issuer`` writes the RDNs in the
    certificate's order (``C=..,O=..,CN=..``, as OpenSSL prints them); ``url_encoded``
    percent-encodes the DN but for its separators (``CN=D-TRUST%20CA%202-1%202015,O=...``), as
    Berlin Group's example does.
    """

    upper_serial: bool = False
    reversed_issuer: bool = False
    url_encoded: bool = False

    def render(self, certificate: x509.Certificate) -> str:
        """The keyId for ``certificate`` in this style."""
        serial = format(certificate.serial_number, "X" if self.upper_serial else "x")
        issuer = certificate.issuer
        if self.reversed_issuer:
            issuer = x509.Name(list(reversed(issuer.rdns)))
        text = issuer.rfc4514_string()
        if self.url_encoded:
            text = quote(text, safe="=,+")
        return f"SN={serial},CA={text}"


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
class SigningCertificate:
    """What :func:`verify_request` reads from a TPP-Signature-Certificate, read once."""

    certificate: x509.Certificate
    not_before: datetime
    not_after: datetime
    public_key: CertificatePublicKeyTypes
    serial: int
    issuer_key: _NameKey


@lru_cache(maxsize=_CACHE_SIZE)
def signing_certificate(value: str) -> SigningCertificate:
    """:func:`load_signature_certificate` and the facts the verifier needs, per header value.

    Why the cache is safe: everything here is a pure function of the header text (the DER
    bytes); nothing that depends on the request or the clock is kept (validity is compared
    with ``now`` on every request), and the values are immutable (``cryptography``'s
    certificate and public key objects are read-only and thread-safe). Nothing invalidates an
    entry; the least recently used goes when :data:`_CACHE_SIZE` are held. A value that does
    not load raises every time (``lru_cache`` does not keep exceptions).
    """
    certificate = load_signature_certificate(value)
    return SigningCertificate(
        certificate=certificate,
        not_before=certificate.not_valid_before_utc,
        not_after=certificate.not_valid_after_utc,
        public_key=certificate.public_key(),
        serial=certificate.serial_number,
        issuer_key=_name_key(certificate.issuer),
    )


@lru_cache(maxsize=_CACHE_SIZE)
def parsed_key_id(key_id: str) -> tuple[int, str]:
    """:func:`parse_key_id`, cached: a TPP's keyId is the same on every request."""
    return parse_key_id(key_id)
