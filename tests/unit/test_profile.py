"""The target profile: the bundled file loads, a full file loads, every kind of bad file is one
clear ProfileError, and CLI values go over the file (profiles/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.retry import RetryPolicy
from conformance.contract import load_contract
from conformance.errors import ProfileError
from conformance.profile import (
    REFERENCE_PROFILE,
    CorporatePsu,
    PrivatePsu,
    TargetProfile,
    load_profile,
    profile_from_options,
)
from conformance.profile.templates import apply_template

OPS = load_contract().operations

FULL_PROFILE = """
name = "Example Bank test environment"
base_url = "https://psd2.test.example-bank.no/api/"
certificate = "certs/tpp.pem"
key = "certs/tpp.key"
key_password = "hunter2"
ca_certificate = "certs/ca.pem"
timeout = 12
redirect_uri = "https://tpp.example/callback"
products = ["ndct", "ncbct"]
sandbox = false
reference_server = false

[operations]
unsupported = ["E1", "E2"]

[paths]
E17 = "/v1/periodic/{payment-product}"

[psu.private]
psu_id = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001"
national_id = "01017012345"
customer_number = "12345678"

[psu.corporate]
psu_id = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f002"
corporate_id = "987654321"
customer_number = "87654321"

[production]
consent_id = "consent-1"
account_ids = ["acc-1", "acc-2"]
transaction_ids = ["tx-1"]

[sca]
mode = "command"
command = "./complete-sca.sh"

[x_accept_fix]
default = "amount-as-string"
"""


def write(folder: Path, text: str, name: str = "target.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cert_folder(tmp_path: Path) -> Path:
    """Files the full profile names (their content is not read by the profile loader)."""
    certs = tmp_path / "certs"
    certs.mkdir()
    for name in ("tpp.pem", "tpp.key", "ca.pem"):
        (certs / name).write_text("placeholder\n")
    return tmp_path


def test_bundled_reference_profile_loads_with_everything_supported() -> None:
    profile = load_profile(REFERENCE_PROFILE)
    assert profile.base_url == "http://127.0.0.1:8000"
    assert profile.sandbox and profile.reference_server
    assert profile.sca.mode == "reference"
    assert profile.x_accept_fix == "amount-as-string"
    assert profile.certificate is None  # the default test identity signs
    unsupported = [op for op in OPS.values() if not profile.supports(op)]
    assert unsupported == []


def test_full_profile_loads_every_key(cert_folder: Path) -> None:
    profile = load_profile(write(cert_folder, FULL_PROFILE))
    assert profile.name == "Example Bank test environment"
    assert profile.base_url == "https://psd2.test.example-bank.no/api"  # trailing / dropped
    assert profile.certificate == cert_folder / "certs" / "tpp.pem"  # relative to the file
    assert profile.key == cert_folder / "certs" / "tpp.key"
    assert profile.tls.ca_certificate == cert_folder / "certs" / "ca.pem"
    assert profile.key_password == "hunter2"
    assert "hunter2" not in repr(profile)
    assert profile.connection.timeout == 12.0 and isinstance(profile.connection.timeout, float)
    assert profile.redirect_uri == "https://tpp.example/callback"
    assert profile.psu_private == PrivatePsu(
        "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001", "01017012345", "12345678"
    )
    assert profile.psu_corporate == CorporatePsu(
        "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f002", "987654321", "87654321"
    )
    assert profile.production.account_ids == ("acc-1", "acc-2")
    assert profile.production.transaction_ids == ("tx-1",)
    assert profile.production.consent_id == "consent-1"
    assert profile.sca.mode == "command" and profile.sca.command == "./complete-sca.sh"
    assert profile.products == {"ndct", "ncbct"}


def test_supports_combines_operations_products_and_sandbox(cert_folder: Path) -> None:
    profile = load_profile(write(cert_folder, FULL_PROFILE))
    assert (
        profile.supports(OPS["E16"]) and profile.supports(OPS["E8"]) and profile.supports(OPS["PS"])
    )
    assert not profile.supports(OPS["E1"])  # operations.unsupported
    assert not profile.supports(OPS["E17"])  # product periodic-ndct not listed
    assert not profile.supports(OPS["E3"])  # sandbox = false
    assert "sandbox = false" in (profile.unsupported_reason(OPS["SA"]) or "")
    assert "periodic-ndct" in (profile.unsupported_reason(OPS["E17"]) or "")


def test_operations_supported_list_narrows_to_exactly_those(tmp_path: Path) -> None:
    profile = load_profile(
        write(tmp_path, 'base_url = "http://h"\n[operations]\nsupported = ["E16", "PS"]\n')
    )
    assert {op.id for op in OPS.values() if profile.supports(op)} == {"E16", "PS"}


def test_path_override_is_used_and_rendered(cert_folder: Path) -> None:
    profile = load_profile(write(cert_folder, FULL_PROFILE))
    contract = load_contract()
    assert profile.path_for(OPS["E17"]) == "/v1/periodic/{payment-product}"
    assert profile.path_for(contract.operations["E16"]) == contract.operations["E16"].path
    assert profile.render_path(OPS["E17"]) == "/v1/periodic/norwegian-domestic-credit-transfers"


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"nowhere\.toml does not exist"):
        load_profile(tmp_path / "nowhere.toml")


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'base_url = "http://h"\nsandbox = \n')
    with pytest.raises(ProfileError, match=r"not valid TOML.*line 2") as caught:
        load_profile(path)
    assert str(path) in caught.value.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('base_url = "http://h"\nsandbx = false\n', r"unknown key 'sandbx' at the top level"),
        (
            'base_url = "http://h"\n[psu.private]\npsu_idd = "x"\n',
            r"unknown key 'psu_idd' in \[psu\.private\]",
        ),
        ('base_url = "http://h"\n[sca]\nmod = "manual"\n', r"unknown key 'mod' in \[sca\]"),
        ('base_url = "http://h"\n[psu.retail]\npsu_id = "x"\n', r"unknown key 'retail'"),
    ],
)
def test_unknown_keys_are_rejected(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ProfileError, match=expected):
        load_profile(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'base_url = "http://h"\nsandbox = "yes"\n',
            r"sandbox must be true or false, not a string",
        ),
        ('base_url = "http://h"\ntimeout = "30"\n', r"timeout must be a number"),
        ('base_url = "http://h"\ntimeout = 0\n', r"timeout must be a positive number"),
        ('base_url = "http://h"\nproducts = "ndct"\n', r"products must be a list of strings"),
        ("base_url = 8000\n", r"base_url must be a string, not an integer"),
        ('base_url = "http://h"\npsu = 3\n', r"psu must be a table"),
        ('base_url = "http://h"\n[psu.private]\npsu_id = 5\n', r"psu\.private\.psu_id must be a"),
    ],
)
def test_wrong_types_are_rejected(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ProfileError, match=expected):
        load_profile(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'base_url = "http://h"\n[operations]\nsupported = ["E16", "E99"]\n',
            r"operations\.supported names an unknown operation id 'E99'",
        ),
        (
            'base_url = "http://h"\n[operations]\nunsupported = ["e16"]\n',
            r"unknown operation id 'e16'",
        ),
        (
            'base_url = "http://h"\n[paths]\nE99 = "/v1/x"\n',
            r"paths\.E99 names an unknown operation",
        ),
    ],
)
def test_unknown_operation_ids_are_rejected(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ProfileError, match=expected):
        load_profile(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "x"\n', r"base_url is required"),
        ('base_url = "ftp://h"\n', r"base_url must be an http:// or https:// URL"),
        (
            'base_url = "http://h"\n[operations]\nsupported = ["E1"]\nunsupported = ["E2"]\n',
            r"cannot both be given",
        ),
        ('base_url = "http://h"\nproducts = ["sepa"]\n', r"unknown product 'sepa'"),
        ('base_url = "http://h"\nredirect_uri = "/cb"\n', r"redirect_uri must be an absolute"),
        ('base_url = "http://h"\n[sca]\nmode = "robot"\n', r"sca\.mode must be one of"),
        ('base_url = "http://h"\n[sca]\nmode = "command"\n', r"sca\.command is required"),
        ('base_url = "http://h"\ncertificate = "missing.pem"\n', r"missing\.pem.*does not exist"),
        ('base_url = "http://h"\n[paths]\nE17 = "v1/x/{payment-product}"\n', r"starting with '/'"),
        ('base_url = "http://h"\n[paths]\nE8 = "/v1/accounts/{id}/tx/{txId}"\n', r"keep the same"),
        ('base_url = "http://h"\nconnect_timeout = 0\n', r"connect_timeout must be a positive"),
        ('base_url = "http://h"\nproxy = "socks://p"\n', r"proxy must be an http:// or https://"),
        ('base_url = "http://h"\nretry_attempts = -1\n', r"retry_attempts must be 0 or more"),
        ('base_url = "http://h"\nretry_max_wait = -1\n', r"retry_max_wait must be 0 or more"),
        ('base_url = "http://h"\n[sca]\nstart = "login"\n', r"sca\.start must be one of"),
        ('base_url = "http://h"\n[sca]\napproach = "push"\n', r"sca\.approach must be one of"),
        ('base_url = "http://h"\n[sca]\npoll_timeout = 0\n', r"sca\.poll_timeout must be a pos"),
        (
            'base_url = "http://h"\n[sca]\npoll_interval = 9\npoll_timeout = 3\n',
            r"poll_interval is longer than poll_timeout",
        ),
        (
            'base_url = "http://h"\n[paths]\nE16 = "/v2/payments/{payment-product}"\n',
            r"spec 4.1 shows",
        ),
        ('base_url = "http://h"\n[paths]\nPS = { method = "POST" }\n', r"PS's method"),
        ('base_url = "http://h"\n[paths]\nE15 = { method = "FETCH" }\n', r"must be one of GET"),
        (
            'base_url = "http://h"\n[paths]\nE17 = { periodic = "/v1/p/{payment-product}" }\n',
            r"only for PS, PC, PA and PCA",
        ),
        (
            'base_url = "http://h"\n[paths]\nPC = { periodic = "/v1/periodic/{payment-id}" }\n',
            r"paths\.PC\.periodic has the placeholders",
        ),
        ('base_url = "http://h"\n[paths]\nPC = { verb = "POST" }\n', r"unknown key 'verb'"),
        ('base_url = "http://h"\n[payments]\ndebtor_bban = "12345678901"\n', r"not a valid Nor"),
        (
            'base_url = "http://h"\n[psu.private]\npsu_id = "a"\n[psu.second]\npsu_id = "a"\n',
            r"psu\.second\.psu_id is the private PSU's",
        ),
    ],
)
def test_inconsistent_values_are_rejected(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ProfileError, match=expected) as caught:
        load_profile(write(tmp_path, text))
    assert "target.toml" in caught.value.message  # the message names the file


def test_sca_style_and_path_choices_are_read(tmp_path: Path) -> None:
    text = (
        'base_url = "http://h"\n[sca]\nstart = "creation"\napproach = "decoupled"\n'
        "poll_interval = 1\npoll_timeout = 30\n[paths]\n"
        'PS = { periodic = "/v1/periodic-payments/{payment-product}/{payment-id}/status" }\n'
        'E15 = { method = "POST" }\n'
        'PC = { path = "/v1/payments/{payment-product}/{payment-id}/x" }\n'
    )
    profile = load_profile(write(tmp_path, text))
    assert profile.sca.starts_at_creation and profile.sca.decoupled
    assert (profile.sca.poll_interval, profile.sca.poll_timeout) == (1.0, 30.0)
    assert profile.method_for(OPS["E15"]) == "POST" and profile.method_for(OPS["E12"]) == "GET"
    assert profile.path_for(OPS["PS"]) == "/v1/payments/{payment-product}/{payment-id}/status"
    periodic = profile.render_path(
        OPS["PS"],
        **{"payment-product": "p", "payment-id": "1", "payment-service": "periodic-payments"},
    )
    assert periodic == "/v1/periodic-payments/p/1/status"
    single = profile.render_path(
        OPS["PS"], **{"payment-product": "p", "payment-id": "1", "payment-service": "payments"}
    )
    assert single == "/v1/payments/p/1/status"
    assert profile.path_for(OPS["PC"], periodic=True).endswith(
        "/x"
    )  # no periodic template: the path


def test_network_keys_reach_the_client(tmp_path: Path) -> None:
    text = (
        'base_url = "http://h"\ntimeout = 20\nconnect_timeout = 3\n'
        'proxy = "http://proxy.example:3128"\nretry_attempts = 5\nretry_max_wait = 9\n'
    )
    profile = load_profile(write(tmp_path, text))
    assert (profile.connection.connect_timeout, profile.connection.proxy) == (
        3.0,
        "http://proxy.example:3128",
    )
    client = TargetClient.from_profile(profile, sign=False)
    assert client.retry == RetryPolicy(5, 9.0)
    assert client._http.timeout.connect == 3.0 and client._http.timeout.read == 20.0
    client.close()
    default = load_profile(write(tmp_path, 'base_url = "http://h"\ntimeout = 7\n', "d.toml"))
    assert default.connection.connect_timeout == 7.0 and default.connection.proxy is None


def test_options_default_to_the_reference_server() -> None:
    profile = profile_from_options(environ={})
    assert profile.reference_server and profile.base_url == "http://127.0.0.1:8000"


def test_target_flag_alone_gives_a_permissive_profile() -> None:
    profile = profile_from_options(target="http://bank.test:9000/psd2/", environ={})
    assert profile.base_url == "http://bank.test:9000/psd2"
    assert not profile.reference_server
    assert all(profile.supports(op) for op in OPS.values() if not op.optional)


def test_flags_go_over_the_file_and_the_environment(cert_folder: Path) -> None:
    path = write(cert_folder, FULL_PROFILE)
    own_cert = cert_folder / "own.pem"
    own_cert.write_text("placeholder\n")
    profile = profile_from_options(
        profile=path,
        cert=own_cert,
        environ={"CONFORMANCE_TARGET": "http://from-env:1", "CONFORMANCE_KEY_PASSWORD": "pw"},
    )
    assert profile.base_url == "http://from-env:1"
    assert profile.certificate == own_cert.resolve()
    assert profile.key is None  # the file's key belongs to the file's certificate
    assert profile.key_password == "pw"
    assert profile.sandbox is False  # everything else from the file
    flagged = profile_from_options(
        profile=path, target="http://flag:2", environ={"CONFORMANCE_TARGET": "http://env:1"}
    )
    assert flagged.base_url == "http://flag:2"


def test_profile_path_can_come_from_the_environment(cert_folder: Path) -> None:
    path = write(cert_folder, FULL_PROFILE)
    assert profile_from_options(environ={"CONFORMANCE_PROFILE": str(path)}).source == path


def test_bad_options_are_profile_errors(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="--key needs --cert"):
        profile_from_options(key=tmp_path / "k.pem", environ={})
    with pytest.raises(ProfileError, match="--target must be an http"):
        profile_from_options(target="localhost:8000", environ={})
    with pytest.raises(ProfileError, match=r"--cert: the file .* does not exist"):
        profile_from_options(target="http://h", cert=tmp_path / "nope.pem", environ={})


def test_a_profile_built_in_code_supports_everything() -> None:
    profile = TargetProfile(name="t", base_url="http://h")
    assert all(profile.supports(op) for op in OPS.values() if not op.optional)
    assert not profile.supports(OPS["SI"])  # optional: judged where the profile names it
    assert profile.path_for(OPS["E16"]) == "/v1/payments/{payment-product}"


def test_waivers_name_scenarios_by_id_or_pattern_with_a_reason(tmp_path: Path) -> None:
    profile = load_profile(
        write(
            tmp_path,
            'base_url = "https://bank.example"\n'
            "[[waivers]]\n"
            'scenarios = ["E17-header-*", "E16-ndct-kid-mod10-accepted"]\n'
            'reason = "BANK-7: periodic headers come from the gateway"\n'
            "[[waivers]]\n"
            'scenarios = ["E1-*"]\n'
            'reason = "baskets are not offered in this release"\n',
        )
    )
    assert profile.waiver_for("E17-header-PSU-ID-missing-rejected") == (
        "BANK-7: periodic headers come from the gateway"
    )
    assert profile.waiver_for("E16-ndct-kid-mod10-accepted") is not None
    assert profile.waiver_for("E1-LIM-basket-max-10-payments-rejected") == (
        "baskets are not offered in this release"
    )
    assert profile.waiver_for("E16-ndct-unstructured-accepted") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[waivers]]\nreason = "x"\n', r"waivers\[0\].scenarios is required"),
        ('[[waivers]]\nscenarios = ["E1-*"]\n', r"waivers\[0\].reason is required"),
        ('[[waivers]]\nscenarios = ["E1-*"]\nreason = "x"\nowner = "me"\n', "unknown key 'owner'"),
        ('waivers = "E1"\n', "must be an array of tables"),
    ],
)
def test_a_bad_waiver_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        load_profile(write(tmp_path, 'base_url = "https://bank.example"\n' + text))


def test_static_headers_psu_values_and_the_kid_type(tmp_path: Path) -> None:
    profile = load_profile(
        write(
            tmp_path,
            'base_url = "https://bank.example"\n'
            'kid_reference_type = "SCOR"\n'
            "[headers]\n"
            '"X-IBM-Client-Id" = "env:BANK_CLIENT_ID"\n'
            '"X-Channel" = "TPP"\n'
            "[psu]\n"
            'ip_address = "192.0.2.10"\n'
            'user_agent = "TPP-Test/1.0"\n',
        )
    )
    assert profile.static_headers({"BANK_CLIENT_ID": "abc"}) == {
        "X-IBM-Client-Id": "abc",
        "X-Channel": "TPP",
    }
    assert profile.secret_headers == {"x-ibm-client-id"}  # masked in every report
    assert (profile.psu_ip_address, profile.psu_user_agent) == ("192.0.2.10", "TPP-Test/1.0")
    assert profile.kid_reference_type == "SCOR"
    with pytest.raises(ProfileError, match="BANK_CLIENT_ID, which is not set"):
        profile.static_headers({})
    assert load_profile(REFERENCE_PROFILE).kid_reference_type == "KID"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[headers]\n"PSU-ID" = "x"\n', "is a header the suite sets itself"),
        ('[headers]\n"Bad Name" = "x"\n', "is not a valid header name"),
        ('[headers]\n"X-Key" = "env:"\n', "names no environment variable"),
        ("[psu]\nip_address = 7\n", "must be a string"),
    ],
)
def test_bad_static_headers_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        load_profile(write(tmp_path, 'base_url = "https://bank.example"\n' + text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[query.E3]\nfromDate = "dateFrom"\n', "names query parameters the spec states"),
        ('[query.ZZ]\nfromDate = "dateFrom"\n', "is not an operation id"),
        ('[query.AT]\nsince = "dateFrom"\n', "is not a query parameter of AT"),
        ('[query.AT]\nfromDate = "date from"\n', "must be a plain query parameter name"),
    ],
)
def test_bad_query_names_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        load_profile(write(tmp_path, 'base_url = "https://bank.example"\n' + text))


def test_query_names_rename_only_that_operations_parameters(tmp_path: Path) -> None:
    profile = load_profile(
        write(tmp_path, 'base_url = "https://bank.example"\n[query.AT]\nfromDate = "dateFrom"\n')
    )
    assert profile.query_name("AT", "fromDate") == "dateFrom"
    assert profile.query_name("AT", "toDate") == "toDate"
    assert profile.query_name("E3", "fromDate") == "fromDate"


def test_a_banks_required_headers(tmp_path: Path) -> None:
    contract = load_contract()
    profile = load_profile(
        write(
            tmp_path,
            'base_url = "https://bank.example"\n'
            '[required_headers]\nPA = ["x-request-id", "TPP-Signature-Certificate", "Signature"]\n',
        )
    )
    assert profile.required_for(contract.operations["PA"]) == (
        "X-Request-ID",
        "TPP-Signature-Certificate",
        "Signature",
    )
    e16 = contract.operations["E16"]
    assert profile.required_for(e16) == e16.required_headers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('E16 = ["X-Request-ID"]\n', "has a required header set the spec states"),
        ('PA = ["X-Request-ID", "X-Foo", "Signature", "TPP-Signature-Certificate"]\n', "'X-Foo'"),
        ('PA = ["X-Request-ID", "TPP-Signature-Certificate"]\n', "drops Signature"),
        ('ZZ = ["X-Request-ID"]\n', "is not an operation id"),
    ],
)
def test_bad_required_headers_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        load_profile(
            write(tmp_path, 'base_url = "https://bank.example"\n[required_headers]\n' + text)
        )


def test_only_the_ncbct_product_identifier_is_open(tmp_path: Path) -> None:
    profile = load_profile(
        write(tmp_path, 'base_url = "https://x.example"\n[product_ids]\nncbct = "intl-transfers"\n')
    )
    assert profile.render_path(OPS["E18"]) == "/v1/payments/intl-transfers"
    assert profile.render_path(OPS["E16"]) == "/v1/payments/norwegian-domestic-credit-transfers"
    for line, message in (
        ('ndct = "x"', "spec 4.1 states the NDCT identifier"),
        ('sepa = "x"', "is not a product"),
        ('ncbct = "Has Spaces"', "lower-case path segment"),
    ):
        with pytest.raises(ProfileError, match=message):
            load_profile(
                write(tmp_path, f'base_url = "https://x.example"\n[product_ids]\n{line}\n')
            )


def test_set_up_templates_are_read_and_checked(tmp_path: Path) -> None:
    folder = tmp_path / "setup"
    folder.mkdir()
    (folder / "SCU.json").write_text('{"branch": "0101", "customerName": null}')
    (folder / "notes.txt").write_text("ignored: not JSON by name")
    profile = load_profile(write(tmp_path, 'base_url = "http://h"\n[setup]\ntemplates = "setup"\n'))
    template = profile.setup_templates["SCU"]
    body = {"customerType": "PRIVATE", "customerName": "Kari", "address": {"city": "Oslo"}}
    assert apply_template(template, body) == {"customerType": "PRIVATE", "branch": "0101",
                                              "address": {"city": "Oslo"}}  # fmt: skip
    assert apply_template({"address": {"zip": "0150"}}, [body])[0]["address"] == {
        "city": "Oslo",
        "zip": "0150",
    }
    assert body["customerName"] == "Kari"  # the suite's body is left as it was
    for name, text, expected in (
        ("E16.json", "{}", r"E16\.json: not a set-up operation"),
        ("SA.json", "{", r"SA\.json, not valid JSON"),
        ("SA.json", "[1]", r"SA\.json, which is not a JSON object"),
    ):
        for old in folder.glob("*.json"):
            old.unlink()
        (folder / name).write_text(text)
        with pytest.raises(ProfileError, match=expected):
            load_profile(write(tmp_path, 'base_url = "http://h"\n[setup]\ntemplates = "setup"\n'))
    with pytest.raises(ProfileError, match=r"setup\.templates names .* not a folder"):
        load_profile(write(tmp_path, 'base_url = "http://h"\n[setup]\ntemplates = "none"\n'))


def test_the_consent_model_is_one_of_three(tmp_path: Path) -> None:
    base = 'base_url = "https://bank.test"\n'
    assert load_profile(write(tmp_path, base)).consent.model == "detailed"
    offered = write(tmp_path, base + '[consent]\nmodel = "bank-offered"\n')
    assert load_profile(offered).consent.model == "bank-offered"
    with pytest.raises(ProfileError, match=r"consent\.model must be one of detailed"):
        load_profile(write(tmp_path, base + '[consent]\nmodel = "per-account"\n'))
    with pytest.raises(ProfileError, match="unknown key 'modle'"):
        load_profile(write(tmp_path, base + '[consent]\nmodle = "global"\n'))
