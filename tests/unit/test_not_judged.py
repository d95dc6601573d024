"""What was not judged is said under the verdict (issue 19 item 5): the profile keys that supply
what a bank can prepare (``[prepared]``, ``[hooks]``), the batch hook, and the reports' "not
judged here" block right under the verdict."""

from __future__ import annotations

import stat
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.bankside.hooks import run_batch_hook
from conformance.checks import NotApplicable, SetUpFailure
from conformance.contract import load_contract
from conformance.errors import ProfileError
from conformance.profile import load_profile
from conformance.report.compliance import RunInfo, build_document, render_markdown
from conformance.report.compliance_page import not_judged_lines, overall_verdict
from conformance.report.compliance_render import render_html
from conformance.report.verdicts import (
    NOT_APPLICABLE,
    PASSED,
    ScenarioFacts,
    ScenarioVerdict,
    not_judged_properties,
    read_not_judged,
)

ROOT = Path(__file__).resolve().parents[2]
STARTED = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bank.toml"
    path.write_text('base_url = "https://bank.test"\n' + text, encoding="utf-8")
    return path


# --- the profile keys ----------------------------------------------------------------------------


def test_the_example_names_every_prepared_state_and_the_batch_hook() -> None:
    profile = load_profile(ROOT / "profiles" / "examples" / "prepared-states.toml")
    prepared = profile.prepared
    assert prepared.pending_payment_id and prepared.pending_payment_product == "ndct"
    assert prepared.aged_consent_id and prepared.renewal_due_consent_id
    assert prepared.renewal_due_account_id and prepared.renewal_due_transaction_id
    assert prepared.closed_account_consent_id and prepared.closed_account_id
    assert prepared.changed_basket_id and len(prepared.changed_basket_payment_ids) == 2
    assert "BS" not in profile.paths  # the basket status read is at the contract's path
    hook = Path(profile.hooks.batch[0])
    assert hook.is_absolute() and hook.is_file()  # resolved against the profile's folder
    assert profile.hooks.batch_timeout == 60


def test_basket_status_path_is_the_basket_status_operations_path(tmp_path: Path) -> None:
    text = "[prepared]\nbasket_status_path = '/v1/baskets/{basketId}/state'\n"
    profile = load_profile(write(tmp_path, text))
    assert profile.paths["BS"] == "/v1/baskets/{basketId}/state"


def test_without_the_tables_nothing_is_prepared(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, ""))
    assert profile.prepared.pending_payment_id is None and not profile.hooks.batch


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[prepared]\nclosed_account_id = 'a'\n", "given without closed_account_consent_id"),
        ("[prepared]\nclosed_account_consent_id = 'c'\n", "given without closed_account_id"),
        ("[prepared]\nrenewal_due_account_id = 'a'\n", "given without renewal_due_consent_id"),
        ("[prepared]\nchanged_basket_id = 'b'\n", "needs changed_basket_payment_ids"),
        (
            "[paths]\nBS = '/v1/baskets/{basketId}'\n[prepared]\n"
            "basket_status_path = '/v1/signing-baskets/{basketId}/status'\n",
            "they name the same operation",
        ),
        ("[prepared]\nbasket_status_path = '/v1/baskets/status'\n", "a path with {basketId}"),
        ("[prepared]\npending_payment_product = 'bulk'\n", "must be one of ndct, ncbct"),
        (
            "products = ['ndct']\n[prepared]\npending_payment_product = 'ncbct'\n",
            "which products leaves out",
        ),
        ("[prepared]\naged_consent = 'c'\n", "unknown key 'aged_consent' in [prepared]"),
        ("[hooks]\nbatch = ''\n", "must not be empty"),
        ("[hooks]\nbatch = 'x'\nbatch_timeout = 0\n", "positive number of seconds"),
        ("[hooks]\nbatchs = 'x'\n", "unknown key 'batchs' in [hooks]"),
    ],
)
def test_a_bad_prepared_or_hooks_table_is_one_clear_error(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ProfileError, match=message.replace("[", r"\[").replace("{", r"\{")):
        load_profile(write(tmp_path, text))


# --- the batch hook ------------------------------------------------------------------------------


def hook(tmp_path: Path, body: str) -> tuple[str, ...]:
    script = tmp_path / "hook.py"
    script.write_text(f"import os, sys, time\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return (sys.executable, str(script))


def test_the_batch_hook_gets_the_target_and_its_deadline(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    command = hook(
        tmp_path,
        f"open({str(seen)!r}, 'w').write(os.environ['CONFORMANCE_TARGET'] + ' ' + "
        "os.environ['CONFORMANCE_DEADLINE'])",
    )
    run_batch_hook(command, base_url="https://bank.test", timeout=5)
    assert seen.read_text(encoding="utf-8") == "https://bank.test 5"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("print('no batch today', file=sys.stderr); sys.exit(3)", "exit code 3: no batch today"),
        ("time.sleep(5)", "did not finish within 0.5 s"),
    ],
)
def test_a_failing_or_late_batch_hook_blocks_the_scenario(
    tmp_path: Path, body: str, message: str
) -> None:
    with pytest.raises(SetUpFailure, match=message):
        run_batch_hook(hook(tmp_path, body), base_url="https://bank.test", timeout=0.5)


def test_a_missing_batch_hook_blocks_the_scenario(tmp_path: Path) -> None:
    with pytest.raises(SetUpFailure, match="was not found"):
        run_batch_hook((str(tmp_path / "nowhere.sh"),), base_url="https://bank.test", timeout=1)


# --- the reports ---------------------------------------------------------------------------------


def test_not_applicable_carries_what_the_profile_could_supply() -> None:
    assert NotApplicable("x").supply == ""
    assert NotApplicable("x", supply="[hooks] batch").supply == "[hooks] batch"
    assert read_not_judged(not_judged_properties("[hooks] batch")) == "[hooks] batch"
    assert not_judged_properties("") == []


def document(*extra: ScenarioVerdict) -> dict[str, Any]:
    def facts(scenario_id: str, rule: str, level: str) -> ScenarioFacts:
        return ScenarioFacts(scenario_id, "PC", rule, "spec 7 rule 6", level, "rule", scenario_id)

    verdicts = [
        ScenarioVerdict(facts("PC-ok", "ERR-1", "must"), PASSED),
        ScenarioVerdict(
            facts("PC-ERR-6-rejected", "ERR-6", "must"),
            NOT_APPLICABLE,
            "the scenario needs a payment in status PDNG",
            not_judged="[prepared] pending_payment_id",
        ),
        ScenarioVerdict(
            facts("E16-batch-run", "STATE-batch", "should"),
            NOT_APPLICABLE,
            "the flow needs a batch run",
            not_judged="[hooks] batch",
        ),
        ScenarioVerdict(facts("E18-x", "POS-E18", "must"), NOT_APPLICABLE, "no ncbct"),
        *extra,
    ]
    run = RunInfo(
        started=STARTED, finished=STARTED + timedelta(seconds=1), seed=1, strict=False, target="t"
    )
    return build_document(verdicts, run, load_contract())


def test_the_verdict_says_how_many_must_rules_were_not_judged_and_lists_them_below() -> None:
    built = document()
    assert [e["scenario"] for e in built["not_judged"]] == ["PC-ERR-6-rejected", "E16-batch-run"]
    verdict = overall_verdict(built)
    assert verdict.startswith(
        "CONFORMANT at must level: no must failure; 1 must rule not judged at this target. "
    )
    markdown = render_markdown(built)
    after_verdict = markdown.split("## Verdict")[1].split("## ")[1]
    assert after_verdict.startswith("Not judged here")
    assert "| `PC-ERR-6-rejected` | ERR-6 | spec 7 rule 6 | must |" in after_verdict
    assert "[prepared] pending_payment_id" in after_verdict
    assert "E18-x" not in after_verdict  # out of the bank's scope, not a missing control
    page = render_html(built)
    assert '<p class="verdict open">' in page and "Not judged here" in page
    lines = not_judged_lines(built)
    assert lines[0].startswith("NOT JUDGED HERE: 1 must and 1 should rule(s)")
    assert "      the profile could supply: [prepared] pending_payment_id" in lines


def test_a_run_that_judged_everything_has_no_block() -> None:
    built = document()
    built["not_judged"] = []
    assert "not judged" not in overall_verdict(built)
    assert "Not judged here" not in render_markdown(built)
    assert not_judged_lines(built) == []
