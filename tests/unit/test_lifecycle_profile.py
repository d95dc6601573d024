"""The profile's lifecycle keys (issue 23): ``[cancellation] sca``, ``nok_redirect_uri``,
``release`` and ``[operations] optional``; and the release table of spec 9 they gate by
(``schemas/releases.json``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.contract import load_contract
from conformance.contract.releases import Release, change, changes_after, release_changes
from conformance.errors import ContractError, ProfileError
from conformance.profile import load_profile
from conformance.profile.lifecycle import Lifecycle

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bank.toml"
    path.write_text('base_url = "https://bank.test"\n' + text, encoding="utf-8")
    return path


def test_the_defaults_are_the_platforms() -> None:
    lifecycle = Lifecycle()
    assert lifecycle.cancellation_needs_sca and lifecycle.release is None
    assert not lifecycle.released_after(Release((1, 22, 0)))


def test_the_keys_are_read(tmp_path: Path) -> None:
    text = (
        'release = "1.21.18"\nnok_redirect_uri = "https://tpp.test/failed"\n'
        '[cancellation]\nsca = "never"\n[operations]\noptional = ["SI"]\n'
    )
    profile = load_profile(write(tmp_path, text))
    lifecycle = profile.lifecycle
    assert lifecycle.release == Release((1, 21, 18)) and str(lifecycle.release) == "1.21.18"
    assert lifecycle.nok_redirect_uri == "https://tpp.test/failed"
    assert not lifecycle.cancellation_needs_sca
    assert lifecycle.optional_operations == {"SI"}
    operations = load_contract().operations
    assert profile.unsupported_reason(operations["SI"]) is None
    assert 'sca = "never"' in (profile.unsupported_reason(operations["PCA"]) or "")


def test_an_optional_operation_is_not_applicable_unless_named(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, ""))
    reason = profile.unsupported_reason(load_contract().operations["SI"])
    assert reason is not None and "operations.optional" in reason


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('release = "1.21"\n', "a release such as '1.21.18'"),
        ('release = "1.5.0"\n', "spec 9 shows releases 1.6.3 to 1.22.0"),
        ('release = "2.0.0"\n', "spec 9 shows releases 1.6.3 to 1.22.0"),
        ('[cancellation]\nsca = "sometimes"\n', "must be one of authorised, never"),
        ('nok_redirect_uri = "/failed"\n', "must be an absolute URL"),
        ('[operations]\noptional = ["PS"]\n', "not an optional operation"),
    ],
)
def test_wrong_values_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message.replace("(", r"\(")):
        load_profile(write(tmp_path, text))


def test_the_release_table_names_what_came_after_a_release() -> None:
    contract = load_contract()
    rows = release_changes(contract)
    assert {row.id for row in rows} >= {"ncbct-baskets", "transaction-details"}
    assert change(contract, "ncbct-baskets").release == Release((1, 21, 20))
    older = Release((1, 21, 18))
    (found,) = changes_after(contract, older, "E1-basket-ncbct-accepted", "POS-E1", ["E1"])
    assert found.id == "ncbct-baskets"
    assert not changes_after(contract, older, "E1-basket-ndct-accepted", "POS-E1", ["E1"])
    assert not changes_after(contract, None, "E1-basket-ncbct-accepted", "POS-E1", ["E1"])
    flows = changes_after(contract, Release((1, 19, 0)), "AL-x", "STATE-x", ["AL", "E8"])
    assert [row.id for row in flows] == ["transaction-details"]  # a flow calling E8


def test_every_release_row_selects_scenarios_that_exist() -> None:
    from conformance.generate import generate_scenarios

    contract = load_contract()
    scenarios = generate_scenarios(contract)
    for row in release_changes(contract):
        assert any(
            row.covers(s.id, s.rule, (s.operation, *s.param("steps", ()))) for s in scenarios
        ), row.id


def test_a_bad_release_row_is_a_contract_error(tmp_path: Path) -> None:
    root = tmp_path / "schemas"
    shutil.copytree(ROOT / "schemas", root)
    table = json.loads((root / "releases.json").read_text(encoding="utf-8"))
    table["releases"][0]["quotes"] = ["no-such-quote"]
    (root / "releases.json").write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(ContractError, match="no-such-quote"):
        release_changes(load_contract(root))
