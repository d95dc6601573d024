"""The run-level files of an Allure report, so that it reads like a certification report: written
beside allure-pytest's results when a run ends, and the Allure 3 configuration
``conformance report`` renders with.

- ``environment.properties``: target, profile, spec release, suite version, seed, certificate
  subject and the overall verdict (Allure's Environment block, front page);
- ``categories.json``: one category per cause of the must failures and should findings (the
  cause's id is in each failure's message, so Allure groups a cause's scenarios under it), then
  must failures, should findings, not applicable, blocked and waived as Allure categories (Allure
  matches them by status and message, the first that matches wins);
- ``executor.json``: the CI system and build that made the run, when one did (GitHub Actions,
  GitLab CI, Jenkins, or any that sets ``CI``);
- tidied results: a not-applicable, blocked or waived scenario keeps its reason as its message,
  without pytest's ``Skipped:`` prefix and without a traceback (it is not an error), and says its
  verdict and reason in its name and description (Allure's word for its status is "skipped"); a
  result is named after its scenario id, without the Python test's module and function;
- ``allurerc.json`` (Allure 3): the report named after the target and profile, grouped spec part ›
  operation › rule (epic › feature › story), with the same categories, written as one HTML file
  (``singleFile``) that opens from disk.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from allure_commons.logger import AllureFileLogger
from attr import asdict

from conformance.report.compliance_page import verdict_word
from conformance.report.verdicts import BLOCKED_PREFIX, NOT_APPLICABLE_PREFIX, WAIVED_PREFIX

__all__ = [
    "CATEGORIES",
    "SHOULD_PREFIX",
    "allure3_config",
    "categories",
    "environment",
    "executor",
    "finish_results",
    "report_name",
    "tidied",
    "tidy_as_written",
]

#: How the name of a test result's file ends (``<uuid>-result.json``).
_RESULT_SUFFIX = "-result.json"

#: How the message of a scenario with should findings only starts in Allure: its status is
#: "broken" (amber), never "passed" (green), so a run with findings does not look clean at a
#: glance; the pytest item passed (its must tier held), JUnit's pytest suite counts it passed.
SHOULD_PREFIX = "Should findings (the must requirement held): "

#: Allure categories of the suite's verdicts (matched on the result's status and message).
CATEGORIES: tuple[dict[str, Any], ...] = (
    {"name": "Must failures (the spec states it)", "matchedStatuses": ["failed"]},
    {
        "name": "Should findings (the suite's choice or an assumption)",
        "matchedStatuses": ["broken"],
        "messageRegex": "Should findings [\\s\\S]*",
    },
    {
        "name": "Errors of the suite or the run",
        "matchedStatuses": ["broken"],
        "messageRegex": "(?!Should findings )[\\s\\S]*",
    },
    {"name": "Not applicable", "matchedStatuses": ["skipped"], "messageRegex": "not applicable:.*"},
    {
        "name": "Blocked (set-up refused)",
        "matchedStatuses": ["skipped"],
        "messageRegex": "blocked:.*",
    },
    {"name": "Waived by the profile", "matchedStatuses": ["skipped"], "messageRegex": "waived:.*"},
)
_SKIPPED_PREFIX = "Skipped: "
#: The longest cause title a category name carries.
_CATEGORY_TITLE = 120


def categories(document: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The run's Allure categories: one per cause (matched by its id in the message, which
    ``report.verdicts.cause_lines`` puts there), then :data:`CATEGORIES`."""
    found: list[dict[str, Any]] = []
    for cause in (document or {}).get("causes", ()):
        title = str(cause["title"])
        if len(title) > _CATEGORY_TITLE:
            title = title[: _CATEGORY_TITLE - 1] + "…"
        what = "Must" if cause["level"] == "must" else "Should"
        found.append(
            {
                "name": f"{what}: {title} ({cause['count']} scenarios; {cause['id']})",
                # a scenario with should findings only is "broken" (``_tidy``); one that also
                # failed at must is "failed"
                "matchedStatuses": ["failed"] if cause["level"] == "must" else ["broken", "failed"],
                "messageRegex": f"[\\s\\S]*Cause {cause['id']} [\\s\\S]*",
            }
        )
    return [*found, *CATEGORIES]


def report_name(document: Mapping[str, Any]) -> str:
    """The report's title: what was certified, against which profile."""
    profile = (document.get("profile") or {}).get("name") or "no profile"
    return f"PSD2 conformance: {document['target']} ({profile})"


def environment(document: Mapping[str, Any]) -> dict[str, str]:
    """Allure's Environment block (Allure 3: the front page's metadata) for the run."""
    run = document["run"]
    profile = document.get("profile") or {}
    certificate = profile.get("certificate") or {}
    totals = document["totals"]
    values = {
        "Verdict": verdict_word(document),
        "Must failures": str(totals["failed"]),
        "Should findings": str(totals["failed_should"]),
        "Passed": str(totals["passed"]),
        "Not judged": f"{totals['blocked']} blocked, {totals['error']} errors",
        "Not applicable": str(totals["not_applicable"]),
        "Waived": str(totals["waived"]),
        "Target": str(document["target"]),
        "Profile": str(profile.get("name") or "(none)"),
        "Spec release": str(document["spec_version"]),
        "Suite version": str(document["suite_version"]),
        "Seed": str(run["seed"]),
        "Strict": "yes" if run.get("strict") else "no",
        "Suite commit": str(run.get("suite_commit") or "unknown"),
    }
    if certificate.get("subject"):
        values["Certificate subject"] = str(certificate["subject"])
    return values


def executor(environ: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """Allure's executor info when a CI system runs the suite, else None."""
    env = os.environ if environ is None else environ
    if env.get("GITHUB_ACTIONS") == "true":
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        repository, run_id = env.get("GITHUB_REPOSITORY", ""), env.get("GITHUB_RUN_ID", "")
        workflow, number = env.get("GITHUB_WORKFLOW", "workflow"), env.get("GITHUB_RUN_NUMBER", "")
        return {
            "name": "GitHub Actions",
            "type": "github",
            "buildName": f"{workflow} #{number}",
            "buildUrl": f"{server}/{repository}/actions/runs/{run_id}",
            "reportUrl": "",
        }
    if env.get("GITLAB_CI") == "true":
        return {
            "name": "GitLab CI",
            "type": "gitlab",
            "buildName": f"{env.get('CI_JOB_NAME', 'job')} #{env.get('CI_JOB_ID', '')}",
            "buildUrl": env.get("CI_JOB_URL", ""),
        }
    if env.get("JENKINS_URL"):
        return {
            "name": "Jenkins",
            "type": "jenkins",
            "buildName": env.get("BUILD_TAG", ""),
            "buildUrl": env.get("BUILD_URL", ""),
        }
    if env.get("CI"):
        return {"name": env.get("CI_NAME", "CI"), "type": "ci", "buildName": env.get("CI", "")}
    return None


#: The exception's dotted class name pytest puts before a failure's message.
_CLASS_PREFIX = re.compile(r"^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*: ")


#: The labels allure-pytest derives from the Python test function (its module, class, function
#: and package): the same for every scenario, and no reader's business.
_PYTHON_LABELS = frozenset(
    {"package", "testClass", "testMethod", "parentSuite", "suite", "subSuite"}
)


def _named(document: dict[str, Any]) -> bool:
    """A scenario's page names the scenario, not the Python test (``fullName`` is its id, the
    ``scenario`` parameter, and the module and function labels go); True when it changed."""
    scenario = next(
        (
            str(parameter.get("value", "")).strip("'")
            for parameter in document.get("parameters") or []
            if parameter.get("name") == "scenario"
        ),
        None,
    )
    labels = document.get("labels") or []
    kept = [label for label in labels if label.get("name") not in _PYTHON_LABELS]
    if scenario is None or (document.get("fullName") == scenario and kept == labels):
        return False
    document["fullName"] = scenario
    document["labels"] = kept
    return True


def _messages(document: dict[str, Any]) -> bool:
    """A skipped scenario's message is its verdict and reason, with no traceback; a failure's
    message starts with what failed, not with the exception's Python class; a scenario with
    should findings only is "broken" (amber), its message saying so (:data:`SHOULD_PREFIX`).
    True when it changed."""
    details = document.get("statusDetails") or {}
    message = str(details.get("message") or "")
    status = document.get("status")
    if status == "skipped" and message.startswith(_SKIPPED_PREFIX):
        document["statusDetails"] = {"message": message.removeprefix(_SKIPPED_PREFIX)}
        _say_the_verdict(document)
    elif status == "passed" and message:  # passed with a message: should findings only
        document["status"] = "broken"
        details["message"] = SHOULD_PREFIX + _CLASS_PREFIX.sub("", message, count=1)
        document["statusDetails"] = details
    elif status in ("failed", "broken") and _CLASS_PREFIX.match(message):
        details["message"] = _CLASS_PREFIX.sub("", message, count=1)
        document["statusDetails"] = details
    else:
        return False
    return True


#: A skipped scenario's verdict by the start of its message (Allure's word is "skipped").
_SKIP_WORDS = (
    (NOT_APPLICABLE_PREFIX, "not applicable"),
    (BLOCKED_PREFIX, "blocked"),
    (WAIVED_PREFIX, "waived"),
)


def _say_the_verdict(document: dict[str, Any]) -> None:
    """A not-applicable, blocked or waived scenario says so, with its reason, in its name and
    first in its description: Allure's own word for its status is "skipped"."""
    message = str((document.get("statusDetails") or {}).get("message") or "")
    for prefix, word in _SKIP_WORDS:
        if message.startswith(prefix):
            document["name"] = f"{word.upper()}: {document.get('name', '')}"
            described = str(document.get("description") or "")
            reason = message.removeprefix(prefix)
            document["description"] = f"**{word.capitalize()}**: {reason}\n\n{described}".rstrip()
            return


def tidied(document: dict[str, Any]) -> bool:
    """A result as a reader should meet it: named after its scenario (:func:`_named`), its
    message the verdict's (:func:`_messages`); True when it changed."""
    named = _named(document)
    return _messages(document) or named


def _tidy(result: Path) -> None:
    """The result file ``result`` tidied (:func:`tidied`), rewritten when that changed it."""
    try:
        document = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    if not isinstance(document, dict) or not tidied(document):
        return
    result.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")


def tidy_as_written(logger: object) -> bool:
    """Make allure-pytest's result writer ``logger`` (an ``AllureFileLogger``) tidy each result
    as it writes it (:func:`tidied`), with the JSON module's compiled encoder (``json.dump`` to a
    file takes the pure-Python one): a run's thousands of results are then written once, not
    read back and written again when it ends, and the files are the same. False (nothing done)
    when ``logger`` is some other writer."""
    if type(logger) is not AllureFileLogger:
        return False
    logger.__class__ = TidyingFileLogger
    return True


class TidyingFileLogger(AllureFileLogger):
    """allure-pytest's result writer, tidying each result as it writes it."""

    def _report_item(self, item: Any) -> None:
        indent = 4 if os.environ.get("ALLURE_INDENT_OUTPUT") else None  # as allure's own
        filename = item.file_pattern.format(prefix=uuid.uuid4())
        data = asdict(item, filter=lambda _, value: value or value is False)
        if filename.endswith(_RESULT_SUFFIX):
            tidied(data)
        temporary = self._report_dir / f"{filename}.tmp"
        temporary.write_text(json.dumps(data, indent=indent, ensure_ascii=False), "utf8")
        os.replace(temporary, self._report_dir / filename)


def finish_results(
    results: Path, document: Mapping[str, Any], *, tidy_results: bool = True
) -> None:
    """Write the run-level files into an allure-results directory and tidy its results (not
    when they were tidied as they were written: ``tidy_results`` False)."""
    if not results.is_dir():
        return
    lines = [
        f"{_property(key, key=True)}={_property(value)}"
        for key, value in environment(document).items()
    ]
    (results / "environment.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (results / "categories.json").write_text(json.dumps(categories(document), indent=2), "utf-8")
    info = executor()
    if info is not None:
        (results / "executor.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    if tidy_results:
        for result in results.glob(f"*{_RESULT_SUFFIX}"):
            _tidy(result)


def _property(value: str, *, key: bool = False) -> str:
    """A Java properties value (backslashes, line breaks escaped); in a key, spaces, ``=`` and
    ``:`` too, which would otherwise end it."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n")
    if key:
        for character in " =:":
            escaped = escaped.replace(character, "\\" + character)
    return escaped


def allure3_config(document: Mapping[str, Any] | None, history: Path) -> dict[str, Any]:
    """The Allure 3 configuration of a report of this run (``document``: its compliance.json)."""
    name = report_name(document) if document is not None else "PSD2 conformance"
    config: dict[str, Any] = {
        "name": name,
        "historyPath": str(history.resolve()),
        "plugins": {
            "awesome": {
                "options": {
                    "reportName": name,
                    "groupBy": ["epic", "feature", "story"],
                    # by name: the spec parts in spec order (allure.sortable_spec), not the order
                    # the scenarios happened to run in
                    "defaultSortBy": "name,asc",
                    # one index.html with the data inside: it opens from a file (a report sent
                    # by mail or kept as a CI artefact), where the many-file report's fetches fail
                    "singleFile": True,
                }
            }
        },
    }
    # The run's facts reach the front page from environment.properties (Allure 2 and 3 read it).
    config["categories"] = categories(document)
    return config
