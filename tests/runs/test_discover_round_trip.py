"""The round trip of ``conformance discover`` (issues 31 and 42): for every example profile
played by the reference server (``--profile``) and for its permissive and demanding readings,
discover drafts a profile from a base that leaves out every key discovery claims to decide; every
key it decides matches the example's, its clean-up leaves nothing behind, and the draft loads.

Then the suite's whole run with the draft is held to the whole run with the example (issue 42's
"done when"): no must failure (every one would be false: the server plays the example), nothing
blocked or in error, and at least 95 % of what the example's run judges judged. The example's
run is the session's one (``shared_runs.example_run``, ``reading_run``), read, not made again;
the draft's is made only where the draft differs from the example in what a run reads
(:func:`_as_a_run_reads`): where it does not, the run with the draft is that very run, already
judged. All slow (``make test-slow``)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.bankside.bundled import bundled_reference_server
from conformance.contract import load_contract
from conformance.discover.draft import absolute_paths, profile_text, write_draft
from conformance.discover.keys import matches
from conformance.discover.session import discover
from conformance.profile import (
    ENV_PREFIX,
    TargetProfile,
    load_profile,
    profile_data,
    profile_from_options,
)
from runs.shared_runs import SECRET, SharedRun, example_run, reading_run

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "profiles"
#: (id, the server's arguments, the profile of the bank it plays).
TARGETS = [
    *(
        (path.stem, ["--profile", str(path)], path)
        for path in sorted((PROFILES / "examples").glob("*.toml"))
    ),
    ("permissive", ["--permissive"], PROFILES / "reference-server-permissive.toml"),
    ("demanding", ["--demanding"], PROFILES / "reference-server-demanding.toml"),
]
#: Keys the reference server does not play (it offers every operation and the sandbox whatever
#: the profile says), so the base keeps them and they are not compared.
NOT_PLAYED = frozenset({("operations", "unsupported"), ("sandbox",)})
#: The targets that are readings of the bundled server (their runs: ``shared_runs.reading_run``).
READINGS = frozenset({"permissive", "demanding"})
#: The verdicts of a scenario that was judged.
JUDGED = frozenset({"passed", "failed", "failed (should)"})


def _base(example: Path) -> dict[str, Any]:
    """The example without the keys discovery claims to decide (those the server plays)."""
    data = profile_data(example)  # with the keys of the profile it extends
    absolute_paths(data, example.parent)
    for table in ("headers", "product_ids", "required_headers", "consent", "query"):
        data.pop(table, None)
    setup = data.get("setup", {})
    setup.pop("templates", None)  # its agreement_owner is not discovery's to decide
    if not setup:
        data.pop("setup", None)
    sca = data.get("sca", {})
    for key in ("start", "approach"):
        sca.pop(key, None)
    paths = data.get("paths", {})
    paths.pop("CC", None)
    for op_id in list(paths):
        if isinstance(paths[op_id], dict):
            paths[op_id].pop("periodic", None)
            if not paths[op_id]:
                del paths[op_id]
    return data


def _secrets(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment the server and the draft read the example's secrets from: the same
    value under the example's variable and under the one the draft names."""
    from conformance.discover.gateway import env_name

    loaded = load_profile(example)
    for name, value in loaded.headers.items():
        if value.startswith(ENV_PREFIX):
            monkeypatch.setenv(value.removeprefix(ENV_PREFIX), SECRET)
            monkeypatch.setenv(env_name(name), SECRET)
    if loaded.oauth is not None and loaded.oauth.client_secret_env:
        monkeypatch.setenv(loaded.oauth.client_secret_env, SECRET)


def _hand_written_run(name: str, example: Path) -> SharedRun:
    """The session's whole run with the hand-written profile of target ``name``."""
    return reading_run(name) if name in READINGS else example_run(example)


def _as_a_run_reads(profile: TargetProfile) -> TargetProfile:
    """``profile`` as a run reads it: where it is (``base_url``, ``source``) left out, a product id
    or a query table that renames nothing dropped, a header's ``env:NAME`` read from the
    environment. Two profiles equal so run the same requests."""
    headers = {
        name: os.environ.get(value.removeprefix(ENV_PREFIX), value)
        if value.startswith(ENV_PREFIX)
        else value
        for name, value in profile.headers.items()
    }
    return dataclasses.replace(
        profile,
        base_url="",
        source=None,
        headers=headers,
        product_ids={
            ours: theirs for ours, theirs in profile.product_ids.items() if ours != theirs
        },
        query_names={
            op_id: names
            for op_id, names in profile.query_names.items()
            if any(ours != theirs for ours, theirs in names.items())
        },
    )


def _whole_run(profile: Path, url: str, reports: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--profile", str(profile), "--target", url,
         "--reports", str(reports), "-n", "2"],
        capture_output=True, text=True, timeout=900, check=False, env=dict(os.environ),
    )  # fmt: skip
    assert (reports / "compliance.json").is_file(), done.stdout[-3000:] + done.stderr[-2000:]
    document: dict[str, Any] = json.loads((reports / "compliance.json").read_text("utf-8"))
    return document


def _judged(document: dict[str, Any]) -> set[str]:
    return {s["id"] for s in document["scenarios"] if s["verdict"] in JUDGED}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "server_args", "example"), TARGETS, ids=[t[0] for t in TARGETS])
def test_discover_drafts_what_the_example_says(
    name: str, server_args: list[str], example: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    _secrets(example, monkeypatch)
    contract = load_contract()
    base_path = tmp_path / "base.toml"
    base_data = _base(example)
    base_path.write_text(profile_text(base_data), encoding="utf-8")
    draft_path = tmp_path / "draft.toml"
    hand_written = _hand_written_run(name, example)  # made before this server starts, or read
    with bundled_reference_server(server_args=server_args, log_path=tmp_path / "server.log") as url:
        base = profile_from_options(target=url, profile=str(base_path))
        found = discover(base, contract=contract)
        write_draft(found, draft_path, contract, base=base, base_data=base_data)
        assert found.stopped is None
        assert found.cleanup.nothing_left, found.cleanup
        played = dataclasses.replace(load_profile(example), base_url=url)
        decided = [d for d in found.decisions if d.is_decided and d.key not in NOT_PLAYED]
        assert {("sca", "start"), ("consent", "model"), ("product_ids", "ncbct")} <= {
            d.key for d in decided
        }
        wrong = [(d.name, d.value) for d in decided if not matches(d, played, contract)]
        assert wrong == [], draft_path.read_text("utf-8")
        draft = load_profile(draft_path)  # the draft is a profile
        if _as_a_run_reads(draft) == _as_a_run_reads(played):
            document = hand_written.document()  # the run with the draft is this one
        else:
            document = _whole_run(draft_path, url, tmp_path / "draft")
    totals = document["totals"]
    assert totals["failed"] == totals["error"] == totals["blocked"] == 0, totals
    with_example = _judged(hand_written.document())
    with_draft = _judged(document)
    assert len(with_example & with_draft) >= 0.95 * len(with_example), sorted(
        with_example - with_draft
    )
