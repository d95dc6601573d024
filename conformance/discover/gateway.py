"""Headers a gateway demands that the spec does not list (``[headers]``), read from its 4xx
answers: a refusal whose ``tppMessages`` path, or whose message, names a header that no
operation of the contract lists. Its value is the TPP's secret, never guessed: the draft reads
it from an environment variable named after the header (``X-IBM-Client-Id`` →
``X_IBM_CLIENT_ID``), and when that variable is set the probes send it from then on."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, undecided
from conformance.discover.probe import document_of
from conformance.profile import ENV_PREFIX

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["decide_gateway_headers", "env_name", "named_headers"]

#: A header name in a message: two or more words joined by hyphens (``X-IBM-Client-Id``).
_HEADER_NAME = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+\b")
#: How many unknown headers one discovery follows (a gateway asks for one or two).
_MOST = 4


def env_name(header: str) -> str:
    """The environment variable the draft reads a header's value from."""
    return re.sub(r"[^A-Za-z0-9]", "_", header).upper()


def _contract_headers(contract: Contract) -> frozenset[str]:
    names = {"digest", "signature", "content-type", "authorization", "user-agent"}
    for operation in contract.operations.values():
        names.update(h.lower() for h in (*operation.required_headers, *operation.optional_headers))
    return frozenset(names)


def named_headers(exchange: Exchange, known: Iterable[str]) -> list[str]:
    """The headers a 4xx answer names that are none of ``known`` (lower-case names): its
    ``tppMessages`` paths first, then names in its message."""
    if not 400 <= exchange.status < 500:
        return []
    document = document_of(exchange)
    texts: list[str] = []
    for item in document.get("tppMessages") or ():
        if isinstance(item, Mapping) and isinstance(item.get("path"), str):
            texts.append(item["path"])
    if isinstance(document.get("message"), str):
        texts.extend(_HEADER_NAME.findall(document["message"]))
    lowered = frozenset(known)
    found: list[str] = []
    for text in texts:
        if _HEADER_NAME.fullmatch(text) and text.lower() not in lowered and text not in found:
            found.append(text)
    return found


def decide_gateway_headers(prober: Prober) -> list[Decision]:
    """One decision per header the gateway demands (module docstring); the profile's own
    ``[headers]`` are sent as they are and not decided again."""
    known = _contract_headers(prober.contract) | {h.lower() for h in prober.profile.headers}
    decisions: list[Decision] = []
    for _ in range(_MOST):
        exchange = prober.request("AL")
        if exchange is None:
            break
        names = named_headers(exchange, known)
        if not names:
            break
        name = names[0]
        known |= {name.lower()}
        variable = env_name(name)
        key = ("headers", name)
        if not os.environ.get(variable):
            decisions.append(
                undecided(
                    key, f"{ENV_PREFIX}{variable}",
                    f"the gateway demands {name}; set {variable} to its value and discover "
                    "again: without it the probes after this one were refused",
                    exchange,
                )
            )  # fmt: skip
            break
        decisions.append(decided(key, f"{ENV_PREFIX}{variable}", exchange))
        prober.adopt(headers={**prober.profile.headers, name: f"{ENV_PREFIX}{variable}"})
    return decisions
