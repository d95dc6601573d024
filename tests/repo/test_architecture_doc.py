"""ARCHITECTURE.md matches the tree: every path it names exists (from the repository, or from one
of the two trees), every dotted name of the two trees it names imports, every package of the two
trees is named, and it cites nothing outside the repository but the specification under test."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
#: The one document outside the repository it may cite: the specification under test.
SPEC = "../shared/spec/interface.md"
#: What a path in the document may be relative to: the repository, or one of the two trees.
BASES = (ROOT, ROOT / "conformance", ROOT / "reference_server")
TREES = ("conformance", "reference_server")
#: What a run writes: named in the document, never in the tree.
OUTPUTS = frozenset(
    {"allure-results/", "compliance.html", "compliance.json", "compliance.md", "junit.xml"}
)
_FILE_SUFFIXES = (".py", ".json", ".md", ".toml")


def _spans() -> list[str]:
    """The inline code of the document (fenced blocks left out), each up to a call or a test
    name: `conformance.contract.load_contract()` is `conformance.contract.load_contract`."""
    prose = re.sub(r"```.*?```", "", TEXT, flags=re.DOTALL)
    return [re.split(r"\(|::", span)[0] for span in re.findall(r"`([^`\n]+)`", prose)]


def _paths() -> list[str]:
    return [
        span
        for span in _spans()
        if " " not in span
        and "<" not in span
        and ("/" in span or span.endswith(_FILE_SUFFIXES))
        and span not in OUTPUTS
    ]


def _dotted() -> list[str]:
    return [span for span in _spans() if re.fullmatch(rf"({'|'.join(TREES)})(\.\w+)+", span)]


def _resolves(dotted: str) -> bool:
    """A module, or a module's attribute (a class's attribute too)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_the_document_names_paths_and_dotted_names() -> None:
    """The checks below read something: the document has the code spans they look at."""
    assert len(_paths()) > 40
    assert len(_dotted()) > 10


@pytest.mark.parametrize("path", sorted(set(_paths())))
def test_every_path_it_names_exists(path: str) -> None:
    if path.startswith("../"):
        assert path == SPEC, f"{path}: outside the repository (only the spec under test is)"
        return
    assert any((base / path).exists() for base in BASES), f"ARCHITECTURE.md names {path}"


@pytest.mark.parametrize("dotted", sorted(set(_dotted())))
def test_every_dotted_name_it_names_imports(dotted: str) -> None:
    assert _resolves(dotted), f"ARCHITECTURE.md names {dotted}, which does not import"


def _packages() -> list[Path]:
    return sorted(init.parent for tree in TREES for init in (ROOT / tree).rglob("__init__.py"))


@pytest.mark.parametrize(
    "package", [package.relative_to(ROOT).as_posix() for package in _packages()]
)
def test_every_package_of_the_trees_is_named(package: str) -> None:
    folder = (ROOT / package).resolve()
    by_path = any((base / path).resolve() == folder for path in _paths() for base in BASES)
    by_name = package.replace("/", ".") in {span.rstrip(".") for span in _spans()}
    assert by_path or by_name, f"ARCHITECTURE.md does not name the package {package}/"


def test_it_cites_nothing_outside_the_repository_but_the_spec() -> None:
    outside = set(re.findall(r"\.\./[^\s`)\"']*", TEXT))
    assert outside == {SPEC}
    for name in ("DESIGN.md", "STYLE.md", "reviews/"):
        assert name not in TEXT, f"ARCHITECTURE.md cites {name}, outside the repository"


def _contract_layers(container: str) -> list[frozenset[str]]:
    """The ``layers`` of the import-linter contract on ``container`` (pyproject.toml), top to
    bottom, each a set of module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = (
        contract
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["type"] == "layers" and contract.get("containers") == [container]
    )
    return [frozenset(part.strip() for part in layer.split("|")) for layer in contract["layers"]]


def _document_layers(tree: str) -> list[frozenset[str]]:
    """The layer table of ``tree`` in the document, top to bottom: a row numbered "n" is one
    layer of every name it gives; a row numbered "n–m" is one layer per name, in order."""
    table = TEXT.split(f"| layer | `{tree}/` | owns |", 1)[1].split("\n\n", 1)[0]
    layers: list[frozenset[str]] = []
    for row in table.strip().splitlines()[1:]:
        number, names = row.split("|")[1:3]
        modules = [re.sub(r"(\.py|/)$", "", name) for name in re.findall(r"`([^`]+)`", names)]
        first, _, last = number.strip().partition("–")
        if last:
            assert len(modules) == int(last) - int(first) + 1, row
            layers += [frozenset({module}) for module in modules]
        else:
            layers.append(frozenset(modules))
        assert len(layers) == int(last or first), f"{row}: numbered out of order"
    return layers


@pytest.mark.parametrize("tree", TREES)
def test_its_layer_tables_are_the_import_contracts(tree: str) -> None:
    """Each of the two layer tables names the layers of its tree's import-linter contract, in
    its order, each row joining what the contract joins."""
    assert _document_layers(tree) == _contract_layers(tree)


def _packages_on_disk(tree: str) -> set[str]:
    """The packages directly under ``tree`` on disk (folders with an ``__init__.py``)."""
    return {path.parent.name for path in (ROOT / tree).glob("*/__init__.py")}


def test_the_diagram_shows_every_package_of_the_harness() -> None:
    """The diagram names each package of ``conformance/`` (``conformance.NAME``) and no other."""
    diagram = TEXT.split("```\nschemas/ (the contract as data)", 1)[1].split("```", 1)[0]
    named = set(re.findall(r"\bconformance\.(\w+)", diagram))
    packages = _packages_on_disk("conformance")
    assert named & packages == packages, "packages the diagram leaves out"
    modules = {path.stem for path in (ROOT / "conformance").glob("*.py")}
    assert named - packages <= modules, "names in the diagram that are no package or module"


@pytest.mark.parametrize("tree", TREES)
def test_the_project_layout_lists_the_packages_on_disk(tree: str) -> None:
    """``docs/explanation/project-layout.md``'s row of each tree names its packages (``NAME/``;
    a sub-package is written with its parent, ``runners/flow/``) and no other."""
    layout = (ROOT / "docs" / "explanation" / "project-layout.md").read_text(encoding="utf-8")
    row = next(line for line in layout.splitlines() if line.startswith(f"| `{tree}/` |"))
    listed = set(re.findall(r"`(\w+)/`", row.split("|")[2]))
    assert listed == _packages_on_disk(tree)
