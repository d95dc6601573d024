"""Checks of a ``run`` or ``selfcheck`` command line before anything runs: the worker count, the
``-m``/``-k`` selection handed to pytest, the fault names. Each mistake is one line with its fix,
before a server starts or pytest parses anything (pytest would answer with its own argparse text,
or with an xdist traceback after half a minute)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from conformance.errors import ConformanceError, did_you_mean

if TYPE_CHECKING:
    from _pytest.mark.expression import Expression

    from conformance.scenario import Scenario

__all__ = [
    "add_list_faults",
    "check_faults",
    "check_numprocesses",
    "check_selection",
    "fault_table",
    "positive_int",
    "selection_options",
]

#: Words ``-n`` takes besides a number (pytest-xdist's).
_WORKER_WORDS = ("auto", "logical")

#: Names every scenario item matches with ``-k`` besides its id and markers: the test function,
#: its module and the folders above it (pytest's keyword matching reads the parents' names).
_ITEM_NAMES = ("test_scenario", "test_conformance.py", "suite", "conformance")


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 1 (``--jobs``, ``--days``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not at least 1")
    return value


def check_numprocesses(value: str | None, option: str = "-n") -> None:
    """``-n``: a number of workers, ``auto``, ``logical`` or 0; anything else is one line."""
    if value is None or value in _WORKER_WORDS or (value.isdigit()):
        return
    raise ConformanceError(
        f"{option} takes a number of workers, 'auto' (one per CPU) or 0 (one process), "
        f"not {value!r}"
    )


def selection_options(pytest_args: Sequence[str]) -> Iterator[tuple[str, str]]:
    """The ``-m`` and ``-k`` expressions among pytest's arguments, as ``(option, expression)``
    (``-m EXPR`` and ``-mEXPR`` alike); ``-n``/``--numprocesses`` values as ``("-n", N)``."""
    args = list(pytest_args)
    index = 0
    while index < len(args):
        word = args[index]
        for option in ("-m", "-k", "-n", "--numprocesses"):
            if word == option and index + 1 < len(args):
                yield ("-n" if option == "--numprocesses" else option), args[index + 1]
                index += 1
                break
            if word.startswith(option + "=") and option.startswith("--"):
                yield "-n", word.split("=", 1)[1]
                break
            if len(option) == 2 and word.startswith(option) and len(word) > 2:
                yield option, word[2:]
                break
        index += 1


def check_selection(pytest_args: Sequence[str], scenarios: Sequence[Scenario]) -> None:
    """``-m`` naming a marker no scenario has, an expression pytest cannot read, or a ``-m``/``-k``
    that selects no scenario: one line (with the closest marker), before anything runs."""
    # on use: pytest's expression parser is what pytest itself will read -m and -k with
    from _pytest.mark.expression import Expression

    from conformance.generate import all_marker_names, scenario_markers

    markers = set(all_marker_names(scenarios)) | {"conformance"}
    chosen: list[tuple[str, Expression]] = []
    for option, text in selection_options(pytest_args):
        if option == "-n":
            check_numprocesses(text)
            continue
        try:
            expression = Expression.compile(text)
        except SyntaxError as error:
            raise ConformanceError(f"{option} {text!r} cannot be read: {error.msg}") from None
        if option == "-m":
            unknown = sorted(expression.idents() - markers)
            if unknown:
                raise ConformanceError(
                    f"-m {text!r}: no scenario has the marker {unknown[0]!r}"
                    f"{did_you_mean(unknown[0], markers)}; markers are operation ids (E16, PS), "
                    "levels (must, should), kinds (positive, auth, ...), rule ids and spec parts "
                    "(`pytest --markers -p conformance.plugin` lists them)"
                )
        chosen.append((option, expression))
    if not chosen:
        return
    for scenario in scenarios:
        marks = set(scenario_markers(scenario)) | {"conformance"}
        names = (f"test_scenario[{scenario.id}]", scenario.id, *_ITEM_NAMES, *marks)
        if all(_selects(option, expression, marks, names) for option, expression in chosen):
            return
    given = " ".join(f"{option} {expression.input!r}" for option, expression in chosen)
    raise ConformanceError(f"{given} selects no scenario (nothing would run)")


def _selects(option: str, expression: Expression, marks: set[str], names: Sequence[str]) -> bool:
    """Whether one scenario is selected by ``-m`` (its markers) or ``-k`` (a case-insensitive
    part of its id, its markers or the names above it, as pytest's keyword matching reads)."""
    lowered = [name.lower() for name in names]

    def marked(name: str, /, **kwargs: str | int | bool | None) -> bool:
        return name in marks

    def keyword(name: str, /, **kwargs: str | int | bool | None) -> bool:
        part = name.lower()
        return any(part in candidate for candidate in lowered)

    matcher = marked if option == "-m" else keyword
    return expression.evaluate(matcher)


def check_faults(names: Iterable[str], command: str) -> list[str]:
    """The fault names, each once; an unknown one is one line with the closest name."""
    # on use: the table of faults lives with the reference server
    from reference_server.faults import FAULTS

    chosen = list(dict.fromkeys(names))
    for name in chosen:
        if name not in FAULTS:
            raise ConformanceError(
                f"unknown fault {name!r}{did_you_mean(name, FAULTS)}; "
                f"`conformance {command} --list-faults` lists them"
            )
    return chosen


def fault_table() -> str:
    """Every fault of the reference server with the rule it breaks (``--list-faults``)."""
    # on use: the table of faults lives with the reference server
    from reference_server.faults import FAULTS

    width = max((len(name) for name in FAULTS), default=0)
    return "\n".join(
        f"{fault.name:<{width}}  {fault.rule}: {fault.description}" for fault in FAULTS.values()
    )


def add_list_faults(parser: argparse.ArgumentParser) -> None:
    """``--list-faults``: print the reference server's faults and stop."""
    parser.add_argument(
        "--list-faults",
        action="store_true",
        help="print the reference server's deliberate faults and the rule each breaks, and stop",
    )
