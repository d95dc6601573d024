"""A failure's replay, as printed: the ``conformance call`` line of its judged request, or the
``conformance run … -- -k ID`` that runs the scenario again; and the values its masking hid.

Against a bank the reports mask secrets (``masking``): a replay pasted as printed would send
``PSU-ID: ***6d93`` and could tell the opposite story. So each worker keeps, for every failure
whose call line it masked, the real path, headers and body of that line in
:data:`VALUES_FILE` in the reports folder: owner-only (0600), git-ignored with the rest of
``reports/``, and never part of a sealed record or anything else the reports hand on. The printed
line names it (``--values reports/replay-values.jsonl --scenario ID``), and ``conformance call``
puts the values back (:func:`unmasked`) before it sends.

A flow, a state rule, and a request that names a resource the replay's target no longer holds
(the bundled server starts empty; ``--cleanup`` took it away) are run again whole instead:
:data:`RERUN` in the worker, :meth:`Rerun.line` on the controller, which knows how the run was
started.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError

__all__ = [
    "MASKED",
    "RERUN",
    "VALUES_FILE",
    "ReplayValues",
    "Rerun",
    "load_values",
    "masked_parts",
    "record_values",
    "unmasked",
]

#: The file of the run's hidden values, in its reports folder (one JSON object a line).
VALUES_FILE = "replay-values.jsonl"
#: What a worker reports as the replay of a scenario that is run again whole.
RERUN = "(run the scenario again)"
#: What a masked value starts with (``***6d93``, ``***``).
MASKED = "***"
_MASKED_VALUE = re.compile(r"\*\*\*[0-9A-Za-z-]{0,4}")
_OWNER_ONLY = 0o600


@dataclass(frozen=True)
class ReplayValues:
    """The real path, headers and body of one scenario's call line (what masking hid)."""

    scenario: str
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None


@dataclass(frozen=True)
class Rerun:
    """How the run was started (``conformance run`` and its target, profile, faults, identity),
    handed to the controller's pytest as a plugin object: the replay of a flow is this command
    with ``-- -k ID``."""

    command: str

    def line(self, scenario_id: str) -> str:
        return f"{self.command} -- -k {shlex.quote(scenario_id)}"

    @staticmethod
    def folder(reports: Path) -> Path:
        """Where a scenario run again writes its reports: ``rerun/`` in the run's (relative to
        the working directory when below it), so that the run's own stay as they are."""
        folder = reports / "rerun"
        try:
            return folder.resolve().relative_to(Path.cwd())
        except ValueError:
            return folder


def _call_words(line: str) -> tuple[str, str, list[str], str | None] | None:
    """METHOD, PATH, the ``-H`` arguments and the ``--data-json`` text of a call line."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if "call" not in words:
        return None
    words = words[words.index("call") + 1 :]
    if len(words) < 2:  # METHOD and PATH
        return None
    headers: list[str] = []
    body: str | None = None
    for index, word in enumerate(words[:-1]):
        if word == "-H":
            headers.append(words[index + 1])
        elif word == "--data-json":
            body = words[index + 1]
    return words[0], words[1], headers, body


def record_values(reports: Path, scenario_id: str, raw: str, shown: str) -> bool:
    """Keep what ``shown`` (the printed call line) hides of ``raw`` (the same line unmasked) in
    the run's :data:`VALUES_FILE`; False when nothing is hidden (nothing written)."""
    if raw == shown:
        return False
    real, masked = _call_words(raw), _call_words(shown)
    if real is None or masked is None:
        return False
    entry: dict[str, Any] = {"scenario": scenario_id}
    if real[1] != masked[1]:
        entry["path"] = real[1]
    headers = {}
    for given, printed in zip(real[2], masked[2], strict=False):
        if given != printed:
            name, _, value = given.partition(":")
            headers[name.strip()] = value.strip()
    if headers:
        entry["headers"] = headers
    if real[3] != masked[3]:
        entry["body"] = real[3]
    reports.mkdir(parents=True, exist_ok=True)
    path = reports / VALUES_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, _OWNER_ONLY)
    with os.fdopen(descriptor, "a", encoding="utf-8") as stream:  # one short line: one write
        stream.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return True


def load_values(path: Path, scenario_id: str) -> ReplayValues:
    """The values :func:`record_values` kept for ``scenario_id`` in ``path`` (its last entry)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConformanceError(
            f"--values: cannot read {path}: {error.strerror or error} (the run writes it into "
            "its reports folder, on the machine it ran on)"
        ) from None
    found: dict[str, Any] | None = None
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("scenario") == scenario_id:
            found = entry
    if found is None:
        raise ConformanceError(f"--values: {path} holds no values of the scenario {scenario_id}")
    return ReplayValues(
        scenario_id,
        str(found.get("path", "")),
        {str(name): str(value) for name, value in dict(found.get("headers", {})).items()},
        None if found.get("body") is None else str(found["body"]),
    )


def masked_parts(path: str, headers: list[tuple[str, str | None]]) -> list[str]:
    """What of a request to send still holds a masked value: "the path", header names."""
    parts = ["the path"] if _MASKED_VALUE.search(path) else []
    parts += [name for name, value in headers if value is not None and value.startswith(MASKED)]
    return parts


def unmasked(
    values: ReplayValues,
    path: str,
    headers: list[tuple[str, str | None]],
    body: bytes | None,
) -> tuple[str, list[tuple[str, str | None]], bytes | None]:
    """The request with the run's values in place of the masked ones: the path and body the run
    sent where the given ones hold a masked value, each masked header's value by its name."""
    if values.path and MASKED in path:
        path = values.path
    by_name = {name.lower(): value for name, value in values.headers.items()}
    headers = [
        (name, by_name.get(name.lower(), value))
        if value is not None and MASKED in value
        else (name, value)
        for name, value in headers
    ]
    if values.body is not None and body is not None and MASKED.encode() in body:
        body = values.body.encode("utf-8")
    return path, headers, body
