"""The replay a failure prints (``reproduce:``), chosen in the worker that ran the scenario.

A request that stands alone is replayed by ``conformance call`` with ``--scenario ID``, which
judges the answer as the run did ("still breaks" or "now holds"), and, where the reports mask
what it sent, with ``--values`` naming the run's file of the real values
(``conformance.report.replays``). Any other scenario (a flow, a rule, a positive or a signature
case: :data:`_CALL_KINDS`), any scenario of the bundled server (a server like it starts empty,
without what the run made), and a request that names a resource a ``--cleanup`` run took away
is run again whole: the controller names the command
(:data:`~conformance.report.replays.RERUN`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.contract import bounded_json
from conformance.plugin.cleanup import cleanup_requested
from conformance.plugin.options import uses_bundled_server
from conformance.report.masking import scrub
from conformance.report.replays import RERUN, VALUES_FILE, record_values
from conformance.report.verdicts import ScenarioFacts, reproduce_line

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["raw_text", "scenario_replay"]

#: Kinds whose verdict is the judgement of one answer against the answer due, which ``call
#: --scenario`` judges again. The others are run again whole: a flow and a rule rest on more
#: than one request or on a state the run made, a positive scenario on checks of the answer
#: beyond it, and an auth case on a request signed wrong on purpose (sent again as it was, a
#: bank may refuse it as a replay).
_CALL_KINDS = frozenset({"constraint", "header", "robustness", "version"})
_CONSENT_HEADER = re.compile(r"-H '?Consent-ID:", re.IGNORECASE)


def raw_text(failure: BaseException) -> str:
    """The failure message with its notes, unmasked (never shown: its replay's values are
    kept apart, :func:`scenario_replay`)."""
    parts = [str(failure), *getattr(failure, "__notes__", ())]
    return "\n\n".join(part for part in parts if part)


def scenario_replay(
    config: pytest.Config,
    facts: ScenarioFacts,
    failure: BaseException,
    exchanges: Sequence[Exchange] = (),
) -> str:
    """The replay of a failed scenario as the reports print it (masked), or ``RERUN``;
    ``exchanges`` are the scenario's own, set-up included."""
    raw = str(getattr(failure, "replay", "") or reproduce_line(raw_text(failure)))
    if facts.kind not in _CALL_KINDS or (
        raw and _names_gone_resource(config, facts, raw, exchanges)
    ):
        return RERUN
    if not raw:
        return ""
    shown = scrub(raw)
    words = [shown, "--scenario", shlex.quote(facts.id)]
    reports = Path(config.getoption("reports"))
    if record_values(reports, facts.id, raw, shown):
        words += ["--values", shlex.quote(str(_here(reports / VALUES_FILE)))]
    return " ".join(words)


def _names_gone_resource(
    config: pytest.Config, facts: ScenarioFacts, line: str, exchanges: Sequence[Exchange]
) -> bool:
    """Whether a replay could not meet the request's resources as the run did: on the bundled
    server, whose replay starts empty, always (the scenario made its PSU, accounts and
    payments, or an earlier one did); with ``--cleanup`` where it names a consent, a path id or
    what the scenario made before it (a basket's payments), all taken away."""
    if uses_bundled_server(config) or config.getoption("conformance_server_pid", None):
        return True
    if not cleanup_requested(config):
        return False
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.contract import load_contract

    operation = load_contract().operations.get(facts.operation)
    return (
        any(made_id in line for made_id in _made_ids(exchanges))
        or bool(_CONSENT_HEADER.search(line))
        or (operation is not None and "{" in operation.path)
    )


#: Shorter ids are not looked for in a replay line (a word could hold them by chance).
_SHORTEST_ID = 8


def _made_ids(exchanges: Sequence[Exchange]) -> set[str]:
    """The ids of what the scenario made before its judged request (a 2xx to a POST): the tail
    of its Location, its answer's ``...Id`` members (``paymentId``, ``consentId``)."""
    found: set[str] = set()
    for exchange in list(exchanges)[:-1]:
        if exchange.method != "POST" or not 200 <= exchange.status < 300:
            continue
        location = exchange.response_header("location")
        if location:
            found.add(location.rstrip("/").rsplit("/", 1)[-1])
        try:
            document = bounded_json.loads(exchange.response_body)
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(document, dict):
            found |= {
                value
                for name, value in document.items()
                if name.endswith("Id") and isinstance(value, str)
            }
    return {made for made in found if len(made) >= _SHORTEST_ID}


def _here(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path
