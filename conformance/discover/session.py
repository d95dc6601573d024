"""One discovery: the decision groups in order (the package docstring), each guarded so that a
bank answering nothing useful leaves its keys undecided with the reason, never an error; then
the clean-up of what the probes made (:class:`Discovery`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conformance.bankside.cleanup import CleanupResult
from conformance.contract import load_contract
from conformance.discover.base_path import decide_base_url
from conformance.discover.breaks import findings
from conformance.discover.consent import decide_consent
from conformance.discover.evidence import Decision, Key, describe, undecided
from conformance.discover.gateway import decide_gateway_headers
from conformance.discover.header_sets import decide_header_sets
from conformance.discover.operations import decide_operations
from conformance.discover.probe import Prober
from conformance.discover.products import NCBCT, PERIODIC, decide_ncbct, decide_periodic_paths
from conformance.discover.query_names import decide_query_names
from conformance.discover.refusals import tpp_refused
from conformance.discover.sca import decide_sca
from conformance.discover.setup_fields import decide_templates
from conformance.profile.consent_model import ConsentSettings
from conformance.profile.parts import ScaSettings

if TYPE_CHECKING:
    import httpx

    from conformance.contract import Contract
    from conformance.profile import TargetProfile

__all__ = ["Discovery", "discover"]


@dataclass
class Discovery:
    """What one discovery decided, what its clean-up did, and why it stopped early (None when
    every group was probed)."""

    target: str
    decisions: list[Decision] = field(default_factory=list)
    cleanup: CleanupResult = field(default_factory=CleanupResult)
    stopped: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Breaks of a stated rule the answers showed (:mod:`~conformance.discover.breaks`): the
    #: draft reports them and never writes them as the bank's choice.
    findings: list[str] = field(default_factory=list)

    def decision(self, key: Key) -> Decision | None:
        return next((d for d in self.decisions if d.key == key), None)

    @property
    def undecided(self) -> list[Decision]:
        return [d for d in self.decisions if not d.is_decided]

    def cleanup_line(self) -> str:
        """The clean-up report in one line (what no operation can take away: :attr:`notes`)."""
        result = self.cleanup
        made = result.payments_cancelled + result.payments_left + result.consents_deleted
        made += result.consents_kept + len(result.could_not)
        if result.nothing_left:
            return (
                f"clean-up: every payment and consent the probes made was taken away "
                f"({result.payments_cancelled} payment(s) cancelled, {result.consents_deleted} "
                f"consent(s) deleted, of {made})"
            )
        return (
            f"clean-up: LEFT BEHIND {result.payments_left} payment(s) no longer unauthorised, "
            f"{result.consents_kept} consent(s) kept, could not: {'; '.join(result.could_not)}"
        )


def _not_probed(contract: Contract, why: str) -> list[Decision]:
    """Every key of the groups after the one that stopped, left at its default."""
    ops = contract.operations
    keys: list[tuple[Key, object]] = [
        (("sandbox",), True),
        (("operations", "unsupported"), []),
        (("product_ids", "ncbct"), NCBCT),
        *((("paths", op_id, "periodic"), ops[op_id].path) for op_id in PERIODIC),
        (("sca", "start"), ScaSettings.start),
        (("sca", "approach"), ScaSettings.approach),
        (("consent", "model"), ConsentSettings.model),
        (("setup", "templates"), None),
    ]
    return [undecided(key, default, f"not probed: {why}") for key, default in keys]


def _guarded(
    found: Discovery,
    keys: Sequence[Key],
    step: Callable[[], list[Decision]],
    default: Any = None,
) -> list[Decision]:
    """The decisions of one group; an error in it leaves its ``keys`` undecided with
    ``default``, saying so (a key the draft must write, ``base_url``, gets one: M15)."""
    try:
        decisions = step()
    except Exception as error:  # discovery never ends in a traceback: the key says what broke
        why = f"the probe failed: {type(error).__name__}: {error}"
        decisions = [undecided(key, default, why) for key in keys]
    found.decisions.extend(decisions)
    return decisions


def discover(
    profile: TargetProfile,
    *,
    transport: httpx.BaseTransport | None = None,
    contract: Contract | None = None,
) -> Discovery:
    """Probe the target ``profile`` names and decide its keys (the package docstring)."""
    contract = contract or load_contract()
    prober = Prober(contract, profile, transport=transport)
    found = Discovery(target=profile.base_url)
    try:
        _probe_all(prober, found)
    finally:
        try:
            prober.clean_up()
        except Exception as error:  # the clean-up says what it could not do
            prober.cleaned.could_not.append(f"clean-up: {type(error).__name__}: {error}")
        prober.close()
        found.cleanup = prober.cleaned
        found.notes = list(prober.notes)
        found.findings = findings(prober)
        found.target = prober.profile.base_url
    return found


def _probe_all(prober: Prober, found: Discovery) -> None:
    contract = prober.contract
    base = _guarded(found, [("base_url",)], lambda: [decide_base_url(prober)], default=found.target)
    if not base[0].is_decided:
        found.stopped = f"{found.target}: {base[0].why}"
        found.decisions.extend(_not_probed(contract, base[0].why))
        return
    refused = _tpp_refused(prober)
    if refused is not None:
        found.stopped = refused
        found.decisions.extend(_not_probed(contract, refused))
        return
    headers = _guarded(found, [], lambda: decide_gateway_headers(prober))
    missing = [d for d in headers if not d.is_decided]
    if missing:
        found.stopped = missing[0].why
        found.decisions.extend(_not_probed(contract, f"the gateway demands {missing[0].key[1]}"))
        return
    exists: dict[str, bool | None] = {}

    def operations() -> list[Decision]:
        decisions, seen = decide_operations(prober)
        exists.update(seen)
        return decisions

    _guarded(found, [("sandbox",), ("operations", "unsupported")], operations)
    periodic_keys = [("paths", op_id, "periodic") for op_id in PERIODIC]
    _guarded(found, [("product_ids", "ncbct")], lambda: [decide_ncbct(prober)])
    _guarded(
        found, periodic_keys,
        lambda: decide_periodic_paths(prober, offered=exists.get("E17") is not False),
    )  # fmt: skip
    _guarded(
        found, [("sca", "start"), ("sca", "approach")],
        lambda: decide_sca(
            prober, pa_offered=exists.get("PA") is not False, scu_offered=bool(exists.get("SCU"))
        ),
    )  # fmt: skip
    prober.clean_up()
    consent = _guarded(
        found, [("consent", "model"), ("paths", "CC")], lambda: decide_consent(prober)
    )
    first_access = any(d.key == ("consent", "model") and d.value == "first-access" for d in consent)
    if first_access:
        prober.notes.append(
            "the first account access of the probe's TPP session opened a consent at the bank "
            "for that session, never authorised (no operation deletes one)"
        )
    prober.clean_up()
    if exists.get("SA") or exists.get("SCA") or exists.get("SCU"):
        templates = _guarded(
            found, [("setup", "templates")], lambda: [decide_templates(prober, exists)]
        )
        if templates and templates[0].value:  # the probes after this one send them
            prober.adopt(setup_templates={**prober.profile.setup_templates, **templates[0].value})
    _guarded(
        found, [],
        lambda: decide_header_sets(prober, exists, first_access=first_access),
    )  # fmt: skip
    _guarded(found, [], lambda: decide_query_names(prober, exists))
    found.decisions.append(_SCA_MODE)


def _tpp_refused(prober: Prober) -> str | None:
    """The line saying the bank refused the probes themselves (the TPP's certificate, its
    signature or token: spec 5), or None: then nothing it answered is about the interface."""
    for op_id in ("AL", "E9"):
        answer = prober.request(op_id)
        code = tpp_refused(answer)
        if answer is None or code is None:
            return None
        refusal = describe(answer)
    return f"the bank refused the probes ({refusal}): give the certificate it trusts (--cert)"


#: Who completes SCA: the bank's answers cannot tell (a person, a command, the reference server).
_SCA_MODE = undecided(
    ("sca", "mode"), ScaSettings.mode,
    "who completes SCA is yours to say: manual (a person at a terminal) or command (a "
    "program given the link); reference works against the reference server only",
)  # fmt: skip
