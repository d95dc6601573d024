"""The results the single-file Allure report is rendered from: small enough to be mailed.

A whole run's results hold every exchange of every scenario (thousands of attachments; a run
of the bundled server made a 73 MB ``index.html``, above what mail takes). ``conformance
report`` renders from a copy (:func:`mailable_results`) in which

- the passed scenarios of one spec part and operation are one passed entry that lists them: Allure
  spends some 8 KB of the file on each test it shows (its page, tree and search entries), so a
  whole run of some 2,500 scenarios shown one by one is 20 MB before any exchange. Their
  exchanges stay in ``allure-results/`` in the reports folder (``conformance report --full``
  renders every scenario on its own page, a file too big to mail);
- any other scenario keeps its attachments, each cut at :data:`ATTACHMENT_CUT` characters with a
  line naming the whole file in the reports folder, and the same attachment (a failure's
  message, an error page) is carried once;
- a failure's message is cut at :data:`MESSAGE_CUT` characters and pytest's traceback left out
  (the message is the suite's whole account; ``compliance.md`` has every failure whole);
- the pytest fixtures (Allure's set-up and tear-down of each test, 3 KB a scenario) and the
  labels of the machine that ran it are left out.

``allure-results/`` itself is left whole: the reports folder keeps everything.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

__all__ = ["ATTACHMENT_CUT", "MESSAGE_CUT", "mailable_results"]

#: The characters of one attachment of a scenario that did not pass that the report carries.
ATTACHMENT_CUT = 6_000
#: The characters of a failure's message the report carries.
MESSAGE_CUT = 6_000
_TEXT_SUFFIXES = (".txt", ".sh", ".json", ".md", ".html", ".log")
#: The labels allure-pytest adds of the machine that ran a test: the same for every scenario.
_RUNNER_LABELS = frozenset({"host", "thread", "framework", "language"})


def mailable_results(results: Path, target: Path) -> Path:
    """Copy ``results`` into ``target`` as the single-file report is to carry them (see the
    module); returns ``target``."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    carried: dict[str, str] = {}  # content digest → the file name it is carried as
    passed: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for path in sorted(results.iterdir()):
        if path.is_dir():
            shutil.copytree(path, target / path.name)  # Allure 2's history/
        elif path.name.endswith("-result.json"):
            document = _copy_result(path, results, target, carried)
            if document is not None:
                passed.setdefault(_group_of(document), []).append(document)
        elif "-attachment" not in path.name and not path.name.endswith("-container.json"):
            shutil.copy2(path, target / path.name)  # categories, environment, executor
    for group, documents in passed.items():
        _write_group(target, group, documents)
    return target


def _label(document: dict[str, Any], name: str) -> str:
    return next(
        (str(label.get("value", "")) for label in document.get("labels") or []
         if label.get("name") == name),
        "",
    )  # fmt: skip


def _group_of(document: dict[str, Any]) -> tuple[str, str]:
    """The spec part and operation of a scenario (Allure's epic and feature)."""
    return _label(document, "epic"), _label(document, "feature")


def _write_group(target: Path, group: tuple[str, str], documents: list[dict[str, Any]]) -> None:
    """One passed entry for the passed scenarios of a spec part and operation."""
    epic, feature = group
    key = hashlib.sha256(f"passed:{epic}:{feature}".encode()).hexdigest()[:32]
    names = sorted(str(document.get("fullName") or document.get("name")) for document in documents)
    listed = "\n".join(f"- {name}" for name in names)
    entry = {
        "uuid": key,
        "historyId": key,
        "testCaseId": key,
        "name": f"{feature or 'scenarios'}: {len(names)} scenario(s) passed",
        "fullName": f"passed: {epic} / {feature}",
        "status": "passed",
        "description": (
            f"{len(names)} scenario(s) of {epic} on {feature} passed (one entry for all, to keep "
            "the report small enough to mail; each scenario's exchanges are in allure-results/ "
            "in the run's reports folder, and `conformance report --full` shows each on its own "
            f"page):\n\n{listed}"
        ),
        "labels": [
            {"name": "epic", "value": epic},
            {"name": "feature", "value": feature},
            {"name": "story", "value": "passed scenarios"},
        ],
        "start": min(int(document.get("start") or 0) for document in documents),
        "stop": max(int(document.get("stop") or 0) for document in documents),
        "attachments": [],
        "parameters": [],
    }
    (target / f"{key}-result.json").write_text(json.dumps(entry, ensure_ascii=False), "utf-8")


def _copy_result(
    path: Path, results: Path, target: Path, carried: dict[str, str]
) -> dict[str, Any] | None:
    """Copy one result as the report carries it; a passed one is returned, not copied (it goes
    into its group's entry)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(document, dict):
        return None
    status = document.get("status")
    attachments = list(document.get("attachments") or [])
    document["labels"] = [
        label for label in document.get("labels") or [] if label.get("name") not in _RUNNER_LABELS
    ]
    if status == "passed":
        return document
    document["attachments"] = [
        _carried(attachment, results, target, carried) for attachment in attachments
    ]
    _cut_message(document)
    for step in document.get("steps") or []:
        step["attachments"] = []
    (target / path.name).write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return None


def _carried(
    attachment: dict[str, Any], results: Path, target: Path, carried: dict[str, str]
) -> dict[str, Any]:
    """The attachment as the report carries it: cut, and once for equal contents."""
    source = str(attachment.get("source", ""))
    path = results / source
    if not source or not path.is_file():
        return attachment
    data = path.read_bytes()
    if path.suffix in _TEXT_SUFFIXES and len(data) > ATTACHMENT_CUT:
        text = data.decode("utf-8", "replace")
        if len(text) > ATTACHMENT_CUT:
            data = (
                text[:ATTACHMENT_CUT]
                + f"\n\n… (cut at {ATTACHMENT_CUT} characters of {len(text)}: the whole "
                f"attachment is allure-results/{source} in the run's reports folder)\n"
            ).encode("utf-8")
    elif len(data) > ATTACHMENT_CUT:
        return {**attachment, "name": f"{attachment.get('name', '')} (allure-results/{source})"}
    digest = hashlib.sha256(data).hexdigest()
    name = carried.get(digest)
    if name is None:
        name = f"{digest[:32]}-attachment{path.suffix}"
        (target / name).write_bytes(data)
        carried[digest] = name
    return {**attachment, "source": name}


def _cut_message(document: dict[str, Any]) -> None:
    details = document.get("statusDetails")
    if not isinstance(details, dict):
        return
    details.pop("trace", None)
    message = str(details.get("message") or "")
    if len(message) > MESSAGE_CUT:
        details["message"] = (
            message[:MESSAGE_CUT] + f"\n\n… (cut at {MESSAGE_CUT} characters of {len(message)}: "
            "compliance.md in the run's reports folder has it whole)"
        )
