"""The sub-commands of ``conformance``: one module each, named after the command."""

import argparse
from typing import TypeAlias

__all__ = ["COMMANDS", "Subparsers"]

#: What each command's ``register(subparsers)`` adds its parser to: argparse's private action
#: class, generic only to the type checker (so the alias is a string at run time).
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: Sub-commands and their one-line help, in the order ``--help`` lists them. A command's module
#: is ``conformance.commands.<name>`` (``-`` read as ``_``).
COMMANDS: dict[str, str] = {
    "run": "run the conformance suite (against the bundled reference server by default)",
    "report": "render the Allure HTML report of the last run (needs Node.js or Allure)",
    "selfcheck": "check that the suite catches each deliberate fault of the reference server",
    "fleet": "many banks at once: run each bank's suite in its own process, merge the reports",
    "compare": "compare two runs' compliance.json: regressions, fixes, changed findings",
    "call": "send one signed request and show the exchange",
    "certs": "write a test CA and a TPP signing certificate with PSD2 roles (spec 5)",
    "discover": "probe a bank and write a draft profile of it (--check: has it changed?)",
    "serve": "run the reference server (a local sandbox of the interface)",
    "proxy": "judge live traffic: a reverse proxy between a TPP's app and a bank",
    "judge": "judge recorded traffic: a HAR file or the reference server's exchange log",
    "verify": "check a sealed record of a run (run --seal): its seal, its files, its verdicts",
    "export-openapi": "write the contract as an OpenAPI 3.1 document",
    "export-examples": "write a valid example request for every operation that takes a body",
}
