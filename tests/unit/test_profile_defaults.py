"""Each profile key's default has one home, the profile model (``conformance/profile/model.py``
and its parts): the loader, the generated reference (``key_docs``), ``conformance discover`` and
the reference server read it there instead of writing it again."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from conformance.contract import Contract, load_contract
from conformance.discover.keys import profile_value
from conformance.discover.session import _not_probed
from conformance.profile import REFERENCE_PROFILE, TargetProfile, load_profile
from conformance.profile.key_docs import Default, rows_of
from reference_server.model.bank_style import BankStyle, style_of

#: Rows whose default is written as text on purpose, each with why: it is no value the model
#: holds as the key's default.
_TEXT_DEFAULTS = {
    "`connect_timeout`": "names another key (`timeout`), whose value it takes",
    "`[product_ids] ncbct`": "the contract's product identifier, a fact of the contract",
    "`[cancellation] sca`": "a choice the model keeps as a bool (cancellation_needs_sca)",
}


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture
def bare(tmp_path: Path) -> TargetProfile:
    """A profile that says nothing but where the bank is."""
    path = tmp_path / "bare.toml"
    path.write_text('base_url = "http://127.0.0.1:9"\n', "utf-8")
    return load_profile(path)


def test_the_loader_gives_a_key_it_does_not_find_the_models_default(bare: TargetProfile) -> None:
    model = TargetProfile(base_url=bare.base_url, name="bare", source=bare.source)
    # connect_timeout's default is the timeout read (the model's None means "timeout").
    model = dataclasses.replace(
        model,
        connection=dataclasses.replace(model.connection, connect_timeout=model.connection.timeout),
    )
    assert bare == model


def test_the_reference_reads_every_literal_default_from_the_model() -> None:
    """A row never writes a bare value (a number, `true`, a backticked word) as its default:
    it says :class:`Default`, rendered from the model."""
    written = []
    for field in dataclasses.fields(TargetProfile):
        for key, _, default in rows_of(field.metadata) or ():
            if isinstance(default, Default):
                assert default.value(field) is not None, key
            elif re.fullmatch(r"`[^`]*`|[0-9.]+", default) and key not in _TEXT_DEFAULTS:
                written.append(f"{key}: {default}")
    assert written == [], "say Default(...) in conformance/profile/key_docs.py"


def test_discover_leaves_an_unprobed_key_at_the_models_default(
    contract: Contract, bare: TargetProfile
) -> None:
    for decision in _not_probed(contract, "a test"):
        if decision.default is not None:
            assert decision.default == profile_value(bare, decision.key, contract), decision.key


def test_the_servers_defaults_are_those_of_the_bundled_profile() -> None:
    """Without a profile the server is the bundled one: the style its profile describes."""
    assert style_of(load_profile(REFERENCE_PROFILE)) == BankStyle()
