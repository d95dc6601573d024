"""JUnit as a CI dashboard reads it (``conformance.report.junit``): the scenarios grouped by their
operation, named by their scenario id."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.report.junit import group_by_operation

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2">
<testcase classname="conformance.suite.test_conformance" name="test_scenario[E16-a-rejected]">
<properties><property name="scenario" value="E16-a-rejected"/>
<property name="operation" value="E16"/></properties></testcase>
<testcase classname="tests.test_other" name="test_plain"/>
</testsuite></testsuites>
"""


def test_the_classname_is_the_operation_and_the_name_the_scenario(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT, encoding="utf-8")
    group_by_operation(path, {"E16": "Create NDCT payment v1.2"})
    scenario, plain = ET.parse(path).getroot().iter("testcase")
    assert scenario.get("classname") == "E16 Create NDCT payment v12"  # no dot: no package split
    assert scenario.get("name") == "E16-a-rejected"
    assert (plain.get("classname"), plain.get("name")) == ("tests.test_other", "test_plain")
