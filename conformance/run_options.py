"""The settings of a run, declared once: what ``conformance run`` (argparse,
:mod:`conformance.commands.run`) and the pytest plugin (``addoption``,
:mod:`conformance.plugin.options`) both take, each with its name, help and default.

Both surfaces build their options from :data:`RUN_OPTIONS` (Schemathesis's one ``config`` read
by its CLI and its pytest plugin, in spirit), and ``conformance run`` passes each on to the
pytest run under the plugin's flag (:attr:`RunOption.plugin_flag`). An option of one surface
only stays there: the bundled server's (``--tls``, ``--play``, ``--fault``, ...) in the command,
the trust anchors and the self-check's scenario file in the plugin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from conformance.scenario import DEFAULT_SEED

__all__ = ["RUN_OPTIONS", "TARGET", "TLS", "RunOption"]


@dataclass(frozen=True)
class RunOption:
    """One setting of a run. ``metavar`` None makes it a switch (``store_true``); ``plugin``
    is the pytest plugin's name for it when that differs (``conformance-strict``: pytest has
    options of its own and of other plugins to keep clear of)."""

    name: str
    help: str
    metavar: str | None = None
    default: Any = None
    plugin: str | None = None

    @property
    def flag(self) -> str:
        """The command's flag: ``--strict``."""
        return f"--{self.name}"

    @property
    def plugin_flag(self) -> str:
        """The pytest plugin's flag: ``--conformance-strict``."""
        return f"--{self.plugin or self.name}"

    def keywords(self, **changes: Any) -> dict[str, Any]:
        """What ``add_argument``/``addoption`` take besides the flag, with a surface's own
        ``changes`` (its ``type``; the plugin's ``--conformance-threads`` defaults to 1 where
        the command's ``--threads`` leaves the choice to the run)."""
        if self.metavar is None:
            return {"action": "store_true", "default": False, "help": self.help, **changes}
        return {"metavar": self.metavar, "default": self.default, "help": self.help, **changes}


def _table(*options: RunOption) -> Mapping[str, RunOption]:
    return MappingProxyType({option.name: option for option in options})


#: The target and the signing identity.
TARGET = _table(
    RunOption(
        "target",
        "base URL of the implementation under test (overrides the profile's base_url); "
        "without --target and --profile the bundled reference server is started",
        metavar="URL",
    ),
    RunOption(
        "profile",
        "target profile (TOML): supported operations and products, PSUs, SCA mode, paths",
        metavar="FILE",
    ),
    RunOption("cert", "signing certificate (PEM or PKCS#12)", metavar="CERT"),
    RunOption("key", "private key of --cert (when not in CERT)", metavar="KEY"),
)

#: Mutual TLS with the target (``conformance call`` takes them too).
TLS = _table(
    RunOption(
        "tls-cert",
        "TLS client certificate for mutual TLS (QWAC; PEM or PKCS#12), apart from --cert",
        metavar="CERT",
    ),
    RunOption("tls-key", "private key of --tls-cert (when not in CERT)", metavar="KEY"),
    RunOption(
        "tls-ca",
        "CA bundle the target's TLS certificate is checked against (overrides the profile's "
        "ca_certificate)",
        metavar="CA.pem",
    ),
)

#: What a run does and where it writes.
RUN = _table(
    RunOption(
        "threads",
        "scenarios in flight in each worker: N - 1 upcoming scenarios run in threads ahead of "
        "their tests, to overlap a distant target's round trips; conformance run chooses by "
        "default 1 for the bundled server and a target on this machine, and for a target 5 ms "
        "or more away enough to overlap its round trips (at most 16), within the profile's "
        "rate_limit (pytest alone: 1)",
        metavar="N",
        plugin="conformance-threads",
    ),
    RunOption(
        "smoke",
        "a smoke run: one positive and one negative scenario per operation, in one process "
        "under conformance run (a first contact, a CI pre-check; seconds against the bundled "
        "server); its verdict says it is a smoke run, never a conformance verdict",
        plugin="conformance-smoke",
    ),
    RunOption(
        "seed",
        f"seed of the generated data ('random' draws one); default {DEFAULT_SEED} for the "
        "bundled server, random for a target (it keeps an earlier run's data, which the same "
        "seed would create again); printed in the header and the reports",
        metavar="N",
    ),
    RunOption(
        "strict",
        "should-level failures fail the run too (they are reported either way)",
        plugin="conformance-strict",
    ),
    RunOption(
        "reports",
        "where the reports are written (default: reports)",
        metavar="DIR",
        default="reports",
    ),
    RunOption(
        "cleanup",
        "after the run, cancel the payments it left unauthorised and delete the consents it "
        "made (where the contract has a consent deletion); what could not be is reported "
        "(cleanup.json)",
    ),
    RunOption(
        "baseline",
        "known failures (TOML: [[known]] with cause, owner, ticket, expires at most a year "
        "ahead): the run fails only on causes not in it, or on an entry past its expiry date; "
        "each entry is reported "
        "as observed, fixed, not observed (the run did not reach it) or expired",
        metavar="FILE",
        plugin="conformance-baseline",
    ),
    RunOption(
        "traffic",
        "write the run's own traffic for tools, masked as the reports are: "
        "<reports>/events.ndjson (an event per exchange and per verdict as the run goes) and "
        "<reports>/traffic.har (conformance judge reads it)",
        plugin="conformance-traffic",
    ),
)

#: Every setting both surfaces take, in the order their help lists them.
RUN_OPTIONS = _table(*TARGET.values(), *TLS.values(), *RUN.values())
