"""The probe of a target before a run (:func:`preflight`) and the note that it was done
(:class:`PreflightDone`), so that the pytest plugin does not probe again the target ``conformance
run`` has just probed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.errors import TargetError

if TYPE_CHECKING:
    from conformance.profile import TargetProfile

__all__ = ["TARGET_OPTIONS", "PreflightDone", "preflight"]

#: Operations whose GET has no path parameter: the probe asks one of them for a JSON answer.
_PROBE_OPERATIONS = ("AL", "E9")


def preflight(profile: TargetProfile, samples: int = 1) -> tuple[float, ...]:
    """Fail fast on what would make every scenario fail: certificate, connection, non-JSON; the
    answer times of the probe that answered JSON (seconds; the round trip to the target, for the
    run's concurrency): the probe itself and ``samples - 1`` more of the same request, empty when
    no probe was answered.

    Loads the signing certificate (:class:`~conformance.errors.CertificateError`), checks that
    the target answers HTTP at all (:class:`TargetError`: refused, DNS, TLS, timeout), then
    sends a signed GET of each supported operation without path parameters (the account list,
    the sandbox customer list) until one answers JSON: every answer of the interface is JSON
    (spec 7), so when none does the base URL points at something else. One JSON answer is
    enough: a target whose error answers alone are not JSON (the account list without a consent
    is an error) breaks spec 7, and that is for the scenarios to judge, not the probe. The first
    answer time may include a cold start (:func:`conformance.bankside.concurrency.round_trip`
    leaves it out).
    """
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.bankside.client import TargetClient
    from conformance.contract import load_contract

    operations = load_contract().operations
    with TargetClient.from_profile(profile) as client:
        client.check_reachable()
        first_error: TargetError | None = None
        probes = (operations[op] for op in _PROBE_OPERATIONS)
        for probe in (op for op in probes if profile.supports(op)):
            path = profile.render_path(probe)
            exchange = client.get(path)
            if exchange.response_body:
                try:
                    exchange.json()
                except TargetError as error:
                    first_error = first_error or error
                    continue
            # on the connection check_reachable opened: round trips, no handshake
            more = (client.get(path).elapsed for _ in range(samples - 1))
            return (exchange.elapsed, *more)
        if first_error is not None:
            raise TargetError(
                f"{first_error.message}; is {profile.base_url} the base URL of the interface "
                "(the part before /v1)?"
            )
    return ()


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
