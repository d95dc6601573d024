"""The settings a run shares between ``conformance run`` and the pytest plugin are declared once
(``conformance.run_options``): both surfaces offer each with its one help and default, and the
command passes each on to pytest under the plugin's flag."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from conformance import cli
from conformance.commands.run import pytest_arguments
from conformance.plugin.options import pytest_addoption
from conformance.run_options import RUN_OPTIONS, RunOption


def _command_actions() -> dict[str, argparse.Action]:
    parser = cli.build_parser(["run", "--help"])
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run = commands.choices["run"]
    return {flag: action for action in run._actions for flag in action.option_strings}


class _Group:
    """What ``pytest_addoption`` is given, keeping what it adds."""

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {}

    def getgroup(self, *args: str) -> _Group:
        return self

    def addoption(self, *flags: str, **keywords: Any) -> None:
        for flag in flags:
            self.options[flag] = keywords


def _plugin_options() -> dict[str, dict[str, Any]]:
    group = _Group()
    pytest_addoption(group)  # type: ignore[arg-type]
    return group.options


@pytest.mark.parametrize("name", list(RUN_OPTIONS))
def test_both_surfaces_offer_the_setting_with_its_one_help(name: str) -> None:
    option = RUN_OPTIONS[name]
    command, plugin = _command_actions()[option.flag], _plugin_options()[option.plugin_flag]
    assert command.help == plugin["help"] == option.help
    assert command.metavar == plugin.get("metavar") == option.metavar
    assert command.dest == option.name.replace("-", "_")


def test_the_declarations_are_not_repeated() -> None:
    """No help of the table is spelled out again in either surface's module."""
    root = Path(__file__).resolve().parents[2] / "conformance"
    for module in ("commands/run.py", "plugin/options.py"):
        text = (root / module).read_text(encoding="utf-8")
        for option in RUN_OPTIONS.values():
            assert option.help[:40] not in text, (module, option.name)
            assert f'"{option.plugin_flag}",\n' not in text, (module, option.name)


def test_the_command_passes_each_setting_on_under_the_plugins_flag() -> None:
    args = pytest_arguments(
        target="http://bank.invalid",
        profile="p.toml",
        cert="c.pem",
        key="k.pem",
        seed=7,
        tls={"tls_cert": "t.pem", "tls_key": "tk.pem", "tls_ca": "ca.pem"},
        strict=True,
        reports=Path("out"),
        numprocesses=None,
        threads=3,
        smoke=True,
        cleanup=True,
        baseline="known.toml",
        traffic=True,
    )
    for option in RUN_OPTIONS.values():
        assert option.plugin_flag in args, option.name
    assert _plugin_options().keys() >= {option.plugin_flag for option in RUN_OPTIONS.values()}


def test_a_switch_is_off_unless_given() -> None:
    switch = RunOption("example", "an example")
    assert switch.keywords() == {"action": "store_true", "default": False, "help": "an example"}
    assert switch.plugin_flag == switch.flag == "--example"
