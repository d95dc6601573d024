"""What a conformance run leaves behind for people: Allure results, the compliance matrix.

| module | job |
|---|---|
| :mod:`~conformance.report.verdicts` | the verdict words and how one test's reports become one |
| :mod:`~conformance.report.compliance` | ``compliance.json``, ``compliance.md``: operation × rule |
| :mod:`~conformance.report.collector` | gathers the verdicts of a run, writes the matrix |
| :mod:`~conformance.report.allure` | Allure labels and attachments of one scenario |
| :mod:`~conformance.report.masking` | what may not appear in a report, and how it is hidden |

JUnit XML needs nothing here: pytest writes it (``--junitxml``), and the scenario's properties
(operation, rule, spec part, level, kind, verdict) go into it through ``user_properties``.
"""
