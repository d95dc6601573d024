"""The canonical parts of a signature (spec 5 items 2-4): header values (RFC 2047), the signing
string, the Digest header, and the RSA-SHA256 sign and verify primitives.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from typing import Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

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


def wire_text(raw: bytes) -> str:
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
    return signing_string_of(method, target, lowercased(headers), header_names)


def lowercased(headers: Mapping[str, str]) -> dict[str, str]:
    """Lowercased name to value; a name that ``items()`` yields twice (``email.message.Message``
    does) gets its values joined by ``", "`` (draft-10 section 2.3 step 2)."""
    lowered: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
    return lowered


def signing_string_of(
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
