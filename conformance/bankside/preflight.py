"""The probe of a target before a run (:func:`preflight`) and the note that it was done
(:class:`PreflightDone`), so that the pytest plugin does not probe again the target ``conformance
run`` has just probed."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from conformance.errors import ConformanceError, TargetError

if TYPE_CHECKING:
    from datetime import datetime

    from conformance.bankside.client import TargetClient
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile
    from conformance.signing import TppIdentity

__all__ = [
    "TARGET_OPTIONS",
    "PreflightDone",
    "base_url_candidates",
    "certificate_warnings",
    "identity_code",
    "preflight",
]

#: Operations whose GET has no path parameter: the probe asks one of them for a JSON answer.
_PROBE_OPERATIONS = ("AL", "E9")

#: How many shorter base URLs the probe tries for the fix it proposes after a 404 everywhere.
_CANDIDATES = 3


def preflight(
    profile: TargetProfile, samples: int = 1, *, budget: float = 0.0, most: int = 0
) -> tuple[float, ...]:
    """Fail fast on what would make every scenario fail: certificate, connection, a base URL that
    is not the interface, the suite's own certificate refused; the answer times of the probe that
    answered (seconds; the round trip to the target, for the run's concurrency): the probe itself
    and ``samples - 1`` more of the same request, then more until ``budget`` seconds have passed
    since the first was sent (a rate limit's pacing counted), ``most`` in all (a near target is
    timed more often for the same wait: its fastest answer is then one a busy machine did not
    hold up); empty when no probe was answered.

    Loads the signing certificate (:class:`~conformance.errors.CertificateError`), checks that
    the target answers HTTP at all (:class:`TargetError`: refused, DNS, TLS, timeout), fetches
    an access token when the profile names a token endpoint (``[oauth]``), then
    sends a signed GET of each supported operation without path parameters (the account list,
    the sandbox customer list). Their paths name no resource, so they exist wherever the
    interface is: a 404 on every one of them means the base URL (or the profile's ``[paths]``)
    points elsewhere, and the error names a shorter base URL where the interface does answer,
    when one does. Any other answer in JSON, an empty one, or a 4xx other than 404 (an error page
    in HTML: spec 7 broken, which is for the scenarios to judge) is the interface answering; a
    2xx, 3xx or 5xx that is not JSON on every probe is something else than the interface. A
    probe refused for the suite's own certificate or signature (:func:`identity_code`) is no
    answer either: when no probe got another answer, no scenario can run, and the error names
    the certificate, the bank's code and ``--cert``/``--key`` (:func:`_identity_refused`). The
    first answer time may include a cold start (:func:`conformance.bankside.concurrency.round_trip`
    leaves it out).
    """
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.bankside.client import TargetClient
    from conformance.bankside.trace import PREFLIGHT_TAG, tagged
    from conformance.contract import load_contract

    operations = load_contract().operations
    # the self-check's recording run tags the probes as the preflight's (bankside/trace.py)
    with tagged(PREFLIGHT_TAG), TargetClient.from_profile(profile) as client:
        client.check_reachable()
        if client.tokens is not None:  # [oauth]: the first token before the run starts
            client.tokens.token()
        first_error: TargetError | None = None
        not_found: list[Exchange] = []
        refused: list[Exchange] = []
        probes = [operations[op] for op in _PROBE_OPERATIONS]
        paths = [profile.render_path(op) for op in probes if profile.supports(op)]
        for path in paths:
            # on the connection check_reachable opened: a round trip, no handshake
            exchange = client.get(path)
            if exchange.status == 404:
                not_found.append(exchange)
            elif identity_code(exchange):
                refused.append(exchange)
            elif _speaks_the_interface(exchange):
                return _answer_times(client, path, exchange, samples, budget, most)
            else:
                try:
                    exchange.json()
                except TargetError as error:
                    first_error = first_error or error
        if refused:
            raise _identity_refused(profile, client.identity(), refused)
        if first_error is not None:
            raise TargetError(
                f"{first_error.message}; is {profile.base_url} the base URL of the interface "
                "(the part before /v1)?"
            )
        if not_found:
            raise _wrong_base_path(profile, not_found, paths)
    return ()


def _answer_times(
    client: TargetClient, path: str, first: Exchange, samples: int, budget: float, most: int
) -> tuple[float, ...]:
    """The first probe's answer time and those of the same request sent again: ``samples`` in
    all, then more, up to ``most``, until ``budget`` seconds have passed since the first."""
    times, started = [first.elapsed], time.monotonic() - first.elapsed
    while len(times) < samples or (len(times) < most and time.monotonic() - started < budget):
        times.append(client.get(path).elapsed)
    return tuple(times)


#: The error codes that refuse the request's certificate or signature. Spec 7 lists none (its
#: codes are those of payment responses; "Error responses of the remaining operations: not
#: shown"); these are the Berlin Group's names (CERTIFICATE_INVALID, CERTIFICATE_EXPIRED,
#: CERTIFICATE_BLOCKED, CERTIFICATE_REVOKED, CERTIFICATE_MISSING, SIGNATURE_INVALID,
#: SIGNATURE_MISSING), matched by their prefix so that a bank's own variant counts too.
_IDENTITY_CODE_PREFIXES = ("CERTIFICATE_", "SIGNATURE_")


def identity_code(exchange: Exchange) -> str | None:
    """The code of a refusal (401 or 403) of the request's certificate or signature, or None."""
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.checks import error_codes, json_document

    if exchange.status not in (401, 403):
        return None
    codes = error_codes(json_document(exchange))
    return next((code for code in codes if code.startswith(_IDENTITY_CODE_PREFIXES)), None)


def _identity_refused(
    profile: TargetProfile, identity: TppIdentity, refused: Sequence[Exchange]
) -> TargetError:
    """The one line for probes refused for the suite's own certificate or signature: which
    certificate (file and subject), what the bank said, and how to give another."""
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.checks import json_document

    first = refused[0]
    document = json_document(first)
    said = document.get("message") if isinstance(document, dict) else None
    probes = ", ".join(f"GET {exchange.url}" for exchange in refused)
    certificate = identity.certificate
    where = (
        str(profile.certificate)
        if profile.certificate is not None
        else "(a test identity the suite made: no --cert given)"
    )
    start, end = certificate.not_valid_before_utc, certificate.not_valid_after_utc
    return TargetError(
        f"NOT JUDGED: the target refused the suite's own signing certificate {where} (subject "
        f"{certificate.subject.rfc4514_string()}, serial {certificate.serial_number:X}, valid "
        f"{start:%Y-%m-%d} to {end:%Y-%m-%d}) or its signature on every probe: "
        f"{first.status} {identity_code(first)}"
        + (f' "{said}"' if isinstance(said, str) and said else "")
        + f" ({probes}); give a certificate it accepts with --cert and --key (or certificate "
        "and key in the profile); no scenario was run"
    )


def _speaks_the_interface(exchange: Exchange) -> bool:
    """An answer of the interface: JSON, empty, or a refusal (4xx) whatever its body."""
    if not exchange.response_body or 400 <= exchange.status < 500:
        return True
    try:
        exchange.json()
    except TargetError:
        return False
    return True


def base_url_candidates(base_url: str, limit: int = _CANDIDATES) -> list[str]:
    """Shorter base URLs to try after every probe answered 404: the path without its last
    segment, then without the one before, and so on up to the bare host (``/api/psd2/v1`` →
    ``/api/psd2``, ``/api``, ````), at most ``limit`` of them."""
    parts = urlsplit(base_url)
    segments = [segment for segment in parts.path.split("/") if segment]
    candidates: list[str] = []
    while segments and len(candidates) < limit:
        segments.pop()
        path = "/" + "/".join(segments) if segments else ""
        candidates.append(urlunsplit((parts.scheme, parts.netloc, path, "", "")))
    return candidates


def _wrong_base_path(
    profile: TargetProfile, not_found: Sequence[Exchange], paths: Sequence[str]
) -> TargetError:
    """The one line for a 404 on every probe: the likely cause, and the base URL that answers
    when a shorter one does (one more GET per candidate, a fraction of a second)."""
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.bankside.client import TargetClient

    probed = ", ".join(f"GET {exchange.url}" for exchange in not_found)
    cause = f"every probe answered 404 ({probed}): the base URL {profile.base_url} is likely wrong"
    for candidate in base_url_candidates(profile.base_url):
        moved = dataclasses.replace(profile, base_url=candidate)
        try:
            with TargetClient.from_profile(moved) as client:
                exchange = client.get(paths[0])
        except TargetError:
            continue
        if exchange.status != 404 and _speaks_the_interface(exchange):
            return TargetError(
                f"{cause}; the interface answers at {candidate} (GET {exchange.url} → HTTP "
                f"{exchange.status}): give --target {candidate} (or base_url in the profile)"
            )
    return TargetError(
        f"{cause}; give the part before /v1 as --target (or base_url in the profile), and check "
        "the profile's [paths]"
    )


def certificate_warnings(profile: TargetProfile, *, now: datetime | None = None) -> list[str]:
    """One line for each of the TPP's own certificates (the signing one, the QWAC of mutual
    TLS) that has ended or ends within 30 days: a warning before the run, not an error (the run
    itself tells whether the bank still takes it). A certificate that cannot be read is left to
    the client, which says why."""
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.signing import load_certificate
    from conformance.signing.lint import expiry_warning

    warnings = []
    for what, path, tls in (
        ("signing certificate", profile.certificate, False),
        ("TLS client certificate (QWAC)", profile.tls.certificate, True),
    ):
        if path is None:
            continue
        try:
            password = profile.tls.password() if tls else profile.key_password
            certificate = load_certificate(path, password=password)
        except ConformanceError:
            continue
        warning = expiry_warning(certificate, f"{what} {path.name}", now=now)
        if warning is not None:
            warnings.append(warning)
    return warnings


#: The options that name a target and how to reach it (keywords of ``profile_from_options``).
TARGET_OPTIONS = ("target", "profile", "cert", "key", "tls_cert", "tls_key", "tls_ca")


@dataclass(frozen=True)
class PreflightDone:
    """Handed to the in-process pytest run by :func:`run`: the target these options name has
    just passed :func:`preflight`, so the plugin's own check at session start (for plain
    ``pytest --target``) is not repeated (a second profile load and four more probes, ~0.1-0.2 s
    on the way to the first scenario). The plugin skips it only when its options
    (:data:`TARGET_OPTIONS`) are these."""

    options: tuple[tuple[str, str | None], ...]

    @classmethod
    def naming(cls, **options: str | None) -> PreflightDone:
        """For the given options; the others of :data:`TARGET_OPTIONS` are None."""
        unknown = set(options) - set(TARGET_OPTIONS)
        if unknown:
            raise TypeError(f"not a target option: {', '.join(sorted(unknown))}")
        return cls(tuple((name, options.get(name)) for name in TARGET_OPTIONS))

    def covers(self, options: Mapping[str, str | None]) -> bool:
        return dict(self.options) == {name: options.get(name) for name in TARGET_OPTIONS}
