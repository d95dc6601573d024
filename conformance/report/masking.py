"""What may not appear in a report, and how it is hidden: identity numbers masked, certificates
summarised, keys and passwords left out, and, for a real target, its secrets and personal data.

Every text a report carries (Allure attachments, failure messages, JUnit, the compliance matrix)
goes through :func:`scrub`. National identity numbers are always masked. With the policy's
``secrets`` (the default for any target but the bundled reference server, whose data is made up)
the values of Consent-ID, Authorization, Cookie, Set-Cookie, PSU-ID, PSU-Corporate-ID and
PSU-IP-Address are masked wherever they appear (a value seen in a header or as a ``consentId`` is
remembered for the rest of the run, so the same id in a path or a body is masked too; the traffic
judge remembers each exchange's secrets by value first, :func:`learn_secrets`, so an id first seen
in a path and a token a bank echoes in an error text are masked too), and so are the query values
of SCA redirect links (their session tokens). ``accounts`` masks IBANs and
11-digit account numbers, ``names`` the values of JSON members that hold a person's or an
account's name; both are off unless the profile's ``[mask]`` table switches them on.
"""

from __future__ import annotations

import functools
import html
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from conformance.contract.identifiers import is_valid_national_id, mask_identity

if TYPE_CHECKING:
    from conformance.profile import TargetProfile

__all__ = [
    "CertificateSummary",
    "MaskPolicy",
    "certificate_summary",
    "configure_masking",
    "learn_secrets",
    "mask_value",
    "policy_for",
    "scrub",
    "scrub_identities",
    "secrets_masked",
]

#: A run of eleven digits or more, taken whole (greedy, from its first digit); only a run of
#: exactly eleven is a candidate (an account number is 11 digits too; masking one that happens
#: to pass both identity check digits costs nothing). Every attachment of a run goes through
#: here, so the pattern is written for speed: no look-arounds, and a leading single ``[0-9]``
#: that lets the regex engine skip ahead to the next digit (4x faster than the look-around
#: form on a rendered exchange).
_DIGIT_RUN = re.compile(r"[0-9][0-9]{10,}")
_IDENTITY_LENGTH = 11
#: Hex digits of the fingerprint a report keeps: enough to tell certificates apart.
_FINGERPRINT_CHARS = 16


def scrub_identities(text: str) -> str:
    """``text`` with every national identity or D-number masked (``*********42``)."""

    def mask(match: re.Match[str]) -> str:
        value = match.group(0)
        if len(value) == _IDENTITY_LENGTH and is_valid_national_id(value):
            return mask_identity(value)
        return value

    return _DIGIT_RUN.sub(mask, text)


@dataclass(frozen=True)
class MaskPolicy:
    """What :func:`scrub` masks besides identity numbers (profile ``[mask]``)."""

    secrets: bool = False
    accounts: bool = False
    names: bool = False
    #: More header names (lower case) whose values are secrets: the profile's ``[headers]``
    #: read from the environment (an API key).
    headers: frozenset[str] = frozenset()


#: Headers whose values are secrets or personal data (lower case).
SECRET_HEADERS = frozenset(
    {
        "consent-id",
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "psu-id",
        "psu-corporate-id",
        "psu-ip-address",
    }
)
#: Of those, the ones whose values are ids, remembered so that a path or a body naming the same
#: id is masked too; the others are masked where they stand.
_REMEMBERED_HEADERS = frozenset({"consent-id", "psu-id", "psu-corporate-id"})


@functools.lru_cache(maxsize=8)
def _header_argument(names: frozenset[str]) -> re.Pattern[str]:
    """``Name: value`` of these headers: a header line, an ``-H`` argument of a reproduction
    command, a line of a signing string."""
    return re.compile(
        r"(?P<name>" + "|".join(re.escape(name) for name in sorted(names)) + r")"
        r"(?P<sep>:\s*)(?P<value>[^\r\n'\"]+)",
        re.IGNORECASE,
    )


_CONSENT_ID_MEMBER = re.compile(r'"consentId"\s*:\s*"(?P<value>[^"]{4,})"')
#: An SCA redirect link (its ``href``), or a Location header: the query is masked.
_SCA_LINK = re.compile(
    r'(?P<head>"scaRedirect"\s*:\s*\{\s*"href"\s*:\s*"[^"?]*\?)(?P<query>[^"]*)'
    r"|(?P<location>^Location:\s*[^?\s]*\?)(?P<lquery>\S*)",
    re.IGNORECASE | re.MULTILINE,
)
_QUERY_VALUE = re.compile(r"(?P<key>[^=&#]+=)(?P<value>[^&#]*)")
_IBAN = re.compile(r"\b(?P<country>[A-Z]{2})[0-9]{2}[A-Z0-9]{7,26}(?P<tail>[0-9A-Z]{4})\b")
_ACCOUNT_NUMBER = re.compile(r"(?<![0-9])[0-9]{7}(?P<tail>[0-9]{4})(?![0-9])")
_NAME_MEMBER = re.compile(
    # The value ends at its closing quote on the same line (escapes kept); a value cut short
    # (a body shortened with "…") is masked to the line's end, never across lines.
    r'"(?P<key>[A-Za-z]*(?:Name|name)|ultimateDebtor|ultimateCreditor)"[ \t]*:[ \t]*'
    r'"(?P<value>(?:[^"\\\n]|\\.)*)(?:"|$)',
    re.MULTILINE,
)
_MIN_REMEMBERED = 4
_MASKED = "***"
#: A consent id in a path (``/consents/{consentId}``, ``…/status``), told from a sub-resource's
#: word by holding a digit.
_CONSENT_IN_PATH = re.compile(r"/consents/(?P<value>[^/?#]*[0-9][^/?#]*)")
#: Query parameters whose values are a PSU's ids.
_PSU_QUERY = frozenset({"psuid", "psu-id", "psu_id", "psucorporateid", "psu-corporate-id"})
#: Headers whose whole value, and its credential (after the scheme) or cookie values, are
#: remembered: a bank that echoes a token in an error text has it masked there too.
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


class _Masking:
    """The process's policy and the secret values seen so far (one per process: every xdist
    worker configures its own from the profile)."""

    def __init__(self) -> None:
        self.policy = MaskPolicy()
        self.learned: set[str] = set()
        self.lock = threading.Lock()


_STATE = _Masking()


def policy_for(profile: TargetProfile) -> MaskPolicy:
    """The profile's ``[mask]``: secrets masked unless it says otherwise or is the reference
    server's; account numbers and names only when it asks."""
    secrets = profile.mask.secrets
    return MaskPolicy(
        secrets=(not profile.reference_server) if secrets is None else secrets,
        accounts=profile.mask.accounts,
        names=profile.mask.names,
        headers=profile.secret_headers,
    )


def configure_masking(policy: MaskPolicy) -> None:
    """Set the policy of this process (the plugin does, from the profile); forgets learned ids."""
    with _STATE.lock:
        _STATE.policy = policy
        _STATE.learned = set()


def learn_secrets(headers: Iterable[tuple[str, str]], url: str = "", body: bytes = b"") -> None:
    """Remember the secrets of one exchange by value, wherever they stand in it: the values of
    Consent-ID and the PSU id headers, Authorization's whole value and credential, each cookie's
    value, a consent id in the path, a PSU id in the query, a ``consentId`` member of the body.
    Every later :func:`scrub` masks each wherever it appears (a path, an echoed error text, a
    terminal line), whatever the text shows around it."""
    found: set[str] = set()
    for name, value in headers:
        lower = name.lower()
        if lower in _REMEMBERED_HEADERS or lower in _STATE.policy.headers:
            found.add(value.strip())
        elif lower in _CREDENTIAL_HEADERS:
            found |= _credentials(lower, value)
    split = urlsplit(url)
    found |= {match["value"] for match in _CONSENT_IN_PATH.finditer(split.path)}
    found |= {value for key, value in parse_qsl(split.query) if key.lower() in _PSU_QUERY}
    if body:
        text = body.decode("utf-8", "replace")
        found |= {match["value"] for match in _CONSENT_ID_MEMBER.finditer(text)}
    _remember(found)


def _credentials(name: str, value: str) -> set[str]:
    """What of an Authorization or cookie header value is secret, each part on its own."""
    value = value.strip()
    if name in ("cookie", "set-cookie"):
        pairs = value.split(";")
        if name == "set-cookie":
            pairs = pairs[:1]  # the attributes after it (Path, Expires) are no secret
        return {pair.partition("=")[2].strip() for pair in pairs}
    scheme, _, credential = value.partition(" ")
    return {value, credential.strip()} if credential.strip() else {scheme}


def _remember(values: Iterable[str]) -> None:
    kept = {
        form
        for value in values
        if len(value) >= _MIN_REMEMBERED and _MASKED not in value and not value.startswith("${")
        for form in _written_forms(value)
    }
    if kept:
        with _STATE.lock:
            _STATE.learned |= kept


def _written_forms(value: str) -> set[str]:
    """A value as a report may write it: as is, inside a JSON string (once, or twice: an
    exchange's body in a JSON report), and HTML-escaped."""
    forms = {value}
    if any(char in value for char in '"\\<>&'):
        once = json.dumps(value, ensure_ascii=False)[1:-1]
        twice = json.dumps(once, ensure_ascii=False)[1:-1]
        forms |= {once, twice, html.escape(value), html.escape(once)}
    return forms


def secrets_masked() -> bool:
    """Whether this process masks secrets (the compliance matrix masks the profile's PSU ids)."""
    return _STATE.policy.secrets


def mask_value(value: str) -> str:
    """A secret shown by its last four characters only (enough to tell two apart)."""
    text = value.strip()
    if len(text) <= 2 * _MIN_REMEMBERED:
        return _MASKED
    return _MASKED + text[-_MIN_REMEMBERED:]


def scrub(text: str) -> str:
    """``text`` as a report may carry it under this process's policy (see the module)."""
    text = scrub_identities(text)
    policy = _STATE.policy
    if policy.secrets:
        text = _scrub_secrets(text, policy.headers)
    elif policy.headers:  # an API key from the environment is masked whatever else is shown
        text = _header_argument(policy.headers).sub(
            lambda m: f"{m['name']}{m['sep']}{_masked_header(m['name'], m['value'])}", text
        )
    if policy.accounts:
        text = _IBAN.sub(lambda m: f"{m['country']}{_MASKED}{m['tail']}", text)
        text = _ACCOUNT_NUMBER.sub(lambda m: f"{_MASKED}{m['tail']}", text)
    if policy.names:
        text = _NAME_MEMBER.sub(lambda m: f'"{m["key"]}": "{_MASKED}"', text)
    return text


def _scrub_secrets(text: str, extra: frozenset[str]) -> str:
    pattern = _header_argument(SECRET_HEADERS | extra)
    found = {
        match["value"].strip()
        for match in pattern.finditer(text)
        if match["name"].lower() in _REMEMBERED_HEADERS
    }
    found |= {match["value"] for match in _CONSENT_ID_MEMBER.finditer(text)}
    _remember(found)
    with _STATE.lock:
        learned = sorted(_STATE.learned, key=len, reverse=True)  # longest first
    # the values first: a header value with a quote in it is then masked whole, before the
    # header pattern (which stops at a quote) masks what is left of it
    for value in learned:
        if value in text:
            text = text.replace(value, mask_value(value))
    text = pattern.sub(
        lambda m: f"{m['name']}{m['sep']}{_masked_header(m['name'], m['value'])}", text
    )
    return _SCA_LINK.sub(_masked_link, text)


def _masked_header(name: str, value: str) -> str:
    if value.startswith("${") or value.startswith(_MASKED):  # a placeholder, or masked already
        return value
    if name.lower() in _REMEMBERED_HEADERS:
        return mask_value(value)
    return _MASKED


def _masked_link(match: re.Match[str]) -> str:
    head = match["head"] or match["location"]
    query = match["query"] if match["head"] is not None else match["lquery"]
    return head + _QUERY_VALUE.sub(lambda m: m["key"] + _MASKED, query)


@dataclass(frozen=True)
class CertificateSummary:
    """A signing certificate as a report names it: never the PEM, never anything of the key."""

    path: str
    subject: str
    serial: str
    sha256: str

    def as_dict(self) -> dict[str, str]:
        return {
            "path": self.path,
            "subject": self.subject,
            "serial": self.serial,
            "sha256": self.sha256,
        }


def certificate_summary(path: Path) -> CertificateSummary:
    """The certificate in ``path`` shortened: subject, serial, the start of its SHA-256.

    Only the certificate is read (the first PEM certificate, or DER); a PKCS#12 file or one
    that cannot be parsed is named by its path alone, since opening it would need the password.
    """
    unknown = CertificateSummary(str(path), subject="", serial="", sha256="")
    try:
        data = path.read_bytes()
    except OSError:
        return unknown
    certificate: x509.Certificate | None = None
    try:
        certificate = x509.load_pem_x509_certificate(data)
    except ValueError:
        try:
            certificate = x509.load_der_x509_certificate(data)
        except ValueError:
            return unknown
    digest = certificate.fingerprint(hashes.SHA256()).hex().upper()
    return CertificateSummary(
        path=str(path),
        subject=certificate.subject.rfc4514_string(),
        serial=f"{certificate.serial_number:X}",
        sha256=digest[:_FINGERPRINT_CHARS] + "…",
    )
