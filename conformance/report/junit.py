"""The JUnit file's "should" suite: one failing test case per scenario with should findings, each
naming its causes (``cause``, ``cause_summary`` properties, as the scenario's own test case does).

pytest's JUnit writer records such a scenario as passed (its must tier held). So that a CI
dashboard still shows what the suite chose and the target did otherwise, the file gets a second
``<testsuite name="should">`` whose test cases fail with the findings; the run's exit code is
unchanged (``--strict`` makes them failures of the run itself).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SHOULD_SUITE",
    "ShouldCase",
    "add_run_properties",
    "add_should_suite",
    "group_by_operation",
]

#: The name of the added suite (and the class name of its test cases).
SHOULD_SUITE = "should"


@dataclass(frozen=True)
class ShouldCase:
    """One test case of the "should" suite: a scenario's should findings, with its node id, their
    one-line summary and the full text."""

    nodeid: str
    summary: str
    text: str
    #: ``(name, value)`` pairs naming its causes (``cause``, ``cause_summary``).
    properties: tuple[tuple[str, str], ...] = ()


def add_should_suite(path: Path, findings: Sequence[ShouldCase]) -> None:
    """Append the "should" suite to the JUnit file at ``path`` (nothing when there is none)."""
    if not findings or not path.is_file():
        return
    tree = ET.parse(path)
    root = tree.getroot()
    if root.tag != "testsuites":
        wrapper = ET.Element("testsuites")
        wrapper.append(root)
        root = wrapper
        tree = ET.ElementTree(root)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=SHOULD_SUITE,
        tests=str(len(findings)),
        failures=str(len(findings)),
        errors="0",
        skipped="0",
    )
    for finding in sorted(findings, key=lambda item: item.nodeid):
        case = ET.SubElement(suite, "testcase", classname=SHOULD_SUITE, name=finding.nodeid)
        if finding.properties:
            properties = ET.SubElement(case, "properties")
            for name, value in finding.properties:
                ET.SubElement(properties, "property", name=name, value=value)
        failure = ET.SubElement(case, "failure", message=finding.summary)
        failure.text = finding.text
    tree.write(path, encoding="utf-8", xml_declaration=True)


def add_run_properties(path: Path, pairs: Sequence[tuple[str, str]]) -> None:
    """The run's own facts (its verdict in a word, whether it was complete, what interrupted
    it) as ``<property>``s of pytest's test suite, where a CI dashboard shows a suite's
    properties."""
    if not pairs or not path.is_file():
        return
    tree = ET.parse(path)
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    suite = next((item for item in suites if item.get("name") != SHOULD_SUITE), None)
    if suite is None:
        return
    properties = suite.find("properties")
    if properties is None:
        properties = ET.Element("properties")
        suite.insert(0, properties)
    for name, value in pairs:
        ET.SubElement(properties, "property", name=name, value=value)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def group_by_operation(path: Path, names: Mapping[str, str]) -> None:
    """Each scenario's test case under its operation: ``classname`` the operation with its name
    (``E16 Create NDCT payment``; ``names``: operation id → name, no dots, so that no dashboard
    splits it into packages) and ``name`` the scenario id, instead of one class
    (``conformance.suite.test_conformance``) of 2,000 ``test_scenario[...]`` cases. A case without
    the scenario's properties (a test of no scenario) is left as pytest wrote it."""
    if not path.is_file():
        return
    tree = ET.parse(path)
    changed = False
    for case in tree.iter("testcase"):
        facts = {
            prop.get("name"): prop.get("value", "")
            for prop in case.iter("property")
            if prop.get("name") in ("scenario", "operation")
        }
        if not facts.get("scenario") or not facts.get("operation"):
            continue
        operation = facts["operation"]
        label = f"{operation} {names.get(operation, '')}".strip().replace(".", "")
        case.set("classname", label)
        case.set("name", str(facts["scenario"]))
        changed = True
    if changed:
        tree.write(path, encoding="utf-8", xml_declaration=True)
