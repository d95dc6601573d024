"""Access tokens (``[oauth]``, spec 5 item 8 "not shown"): the reference server playing a bank
with a token endpoint of its own, the run's token source for each client authentication, the
bearer token on every request, a fresh token when one expires or an answer says it has (the
retried exchange shows both answers), and a real run whose tokens expire under it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conformance.bankside.bundled import BundledTls, bundled_reference_server, write_tls_identity
from conformance.bankside.client import TargetClient
from conformance.bankside.oauth import TokenSource, says_token_expired
from conformance.errors import TargetError
from conformance.profile import TargetProfile, TlsSettings, load_profile
from conformance.profile.oauth import OAuthSettings
from conformance.signing import default_ca, default_identity
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle, OAuthStyle
from reference_server.transport.http import RunningServer, start
from reference_server.transport.tls import server_context

TOKEN_PATH = "/oauth2/token"
SECRET_ENV = "CONFORMANCE_TEST_OAUTH_SECRET"


def _style(auth: str, secret: str | None = None) -> BankStyle:
    return BankStyle(
        oauth=OAuthStyle(TOKEN_PATH, "tpp-1", auth, frozenset({"psd2"}), client_secret=secret)
    )


def _settings(auth: str, **changes: object) -> OAuthSettings:
    values: dict[str, object] = {
        "token_url": TOKEN_PATH,
        "client_id": "tpp-1",
        "auth": auth,
        "scope": "psd2",
        "refresh_margin": 0.0,
    }
    values.update(changes)
    return OAuthSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def jwt_server() -> Iterator[RunningServer]:
    """A bank whose token endpoint takes private_key_jwt, trusting the default CA."""
    running = start(Application(bank=_style("private_key_jwt"), trust_ca=default_ca().certificate))
    yield running
    running.stop()


def test_private_key_jwt_gets_a_token_and_every_request_carries_it(
    jwt_server: RunningServer,
) -> None:
    profile = TargetProfile(name="t", base_url=jwt_server.url, oauth=_settings("private_key_jwt"))
    with TargetClient.from_profile(profile) as client:
        answer = client.request("GET", "/v1/sandbox/customers")
        again = client.request("GET", "/v1/sandbox/customers")
        assert client.tokens is not None and client.tokens.fetched == 1  # one token, reused
    assert (answer.status, again.status) == (200, 200)
    bearer = answer.request_header("authorization") or ""
    assert bearer.startswith("Bearer ") and len(bearer) > 20
    assert "authorization" in answer.profile_headers  # a replay's profile fetches its own
    assert "Authorization" not in answer.reproduce_command()


def test_without_a_token_or_with_an_unknown_one_the_server_refuses(
    jwt_server: RunningServer,
) -> None:
    with TargetClient(jwt_server.url) as client:
        bare = client.request("GET", "/v1/sandbox/customers")
        forged = client.request(
            "GET", "/v1/sandbox/customers", headers={"Authorization": "Bearer made-up"}
        )
    assert bare.status == 401 and json.loads(bare.response_body)["code"] == "TOKEN_INVALID"
    assert (bare.response_header("www-authenticate") or "").startswith("Bearer")
    assert forged.status == 401
    assert 'error="invalid_token"' in (forged.response_header("www-authenticate") or "")


def test_an_answer_that_says_the_token_expired_gets_a_fresh_one_and_both_answers_show(
    jwt_server: RunningServer,
) -> None:
    profile = TargetProfile(
        name="t",
        base_url=jwt_server.url,
        oauth=_settings("private_key_jwt", refresh_margin=60.0),
    )
    with TargetClient.from_profile(profile) as client:
        assert client.request("GET", "/v1/sandbox/customers").status == 200
        httpx.post(f"{jwt_server.url}/_control/oauth/expire").raise_for_status()
        answer = client.request("GET", "/v1/sandbox/customers")
        assert client.tokens is not None and client.tokens.fetched == 2
    assert answer.status == 200
    (refused,) = answer.token_refreshes
    assert refused.status == 401 and b"TOKEN_EXPIRED" in refused.response_body
    text = answer.render()
    assert "<<< HTTP 200" in text and "<<< HTTP 401 Unauthorized" in text
    assert "sent again with a fresh access token" in text


def test_a_client_secret_from_the_environment_authenticates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    running = start(Application(bank=_style("client_secret", "s3cret-value")))
    try:
        settings = _settings("client_secret", client_secret_env=SECRET_ENV)
        monkeypatch.setenv(SECRET_ENV, "s3cret-value")
        source = TokenSource(settings, running.url)
        assert source.token() and source.fetched == 1
        source.close()
        monkeypatch.setenv(SECRET_ENV, "wrong")
        wrong = TokenSource(settings, running.url)
        with pytest.raises(TargetError, match="refused the client credentials: invalid_client"):
            wrong.token()
        wrong.close()
    finally:
        running.stop()


def test_a_scope_the_bank_does_not_offer_is_refused(jwt_server: RunningServer) -> None:
    source = TokenSource(
        _settings("private_key_jwt", scope="everything"),
        jwt_server.url,
        identity=default_identity(),
    )
    with pytest.raises(TargetError, match="invalid_scope"):
        source.token()
    source.close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> BundledTls:
    return write_tls_identity(tmp_path_factory.mktemp("tls"))


def test_tls_client_auth_shows_the_qwac_to_the_token_endpoint(tls: BundledTls) -> None:
    context = server_context(tls.server_certificate, tls.server_key, [tls.client_ca])
    running = start(Application(bank=_style("tls_client_auth")), tls=context)
    try:
        settings = TlsSettings(
            ca_certificate=tls.server_ca, certificate=tls.client_certificate, key=tls.client_key
        )
        profile = TargetProfile(
            name="t", base_url=running.url, tls=settings, oauth=_settings("tls_client_auth")
        )
        with TargetClient.from_profile(profile) as client:
            assert client.request("GET", "/v1/sandbox/customers").status == 200
    finally:
        running.stop()


def test_tls_client_auth_without_a_tls_client_certificate_is_a_profile_mistake() -> None:
    with pytest.raises(Exception, match="tls_client_auth"):
        TokenSource(_settings("tls_client_auth"), "http://127.0.0.1:9")


def test_what_counts_as_an_expired_token() -> None:
    assert says_token_expired(401, 'Bearer error="invalid_token"', None)
    assert says_token_expired(401, None, "TOKEN_EXPIRED")
    assert not says_token_expired(401, None, "SIGNATURE_INVALID")  # a refused signature
    assert not says_token_expired(403, 'Bearer error="invalid_token"', None)


# ---------------------------------------------------------------------------- a real run


PROFILE = """
name = "tokens that expire under the run"
base_url = "http://127.0.0.1:1"
reference_server = true

[oauth]
token_url = "/oauth2/token"
client_id = "example-tpp"
auth = "private_key_jwt"
refresh_margin = 0.2
"""


#: About 150 scenarios: several seconds in one process, several token lifetimes.
SELECTION = "(E16 or E17 or E18) and (positive or auth)"


@pytest.mark.slow
def test_tokens_expire_mid_run_and_the_run_fetches_fresh_ones(tmp_path: Path) -> None:
    """The server's tokens live 2 s; a run of several seconds in one process needs several,
    fetched as each nears its end (or when an answer says it ended), and judges every scenario
    as a run without tokens would."""
    profile = tmp_path / "oauth.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    log = tmp_path / "server.log"
    reports = tmp_path / "reports"
    with bundled_reference_server(
        server_args=["--profile", str(profile), "--oauth-lifetime", "2"], log_path=log
    ) as url:
        done = subprocess.run(
            [sys.executable, "-m", "conformance", "run", "--profile", str(profile), "--target",
             url, "--reports", str(reports), "-n", "0", "--", "-k", SELECTION],
            capture_output=True, text=True, timeout=600, check=False, env=dict(os.environ),
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    totals = json.loads((reports / "compliance.json").read_text("utf-8"))["totals"]
    assert totals["failed"] == totals["error"] == totals["failed_should"] == 0, totals
    assert totals["passed"] > 100, totals
    grants = re.findall(r"POST /oauth2/token 200", log.read_text("utf-8"))
    seconds = float(re.search(r"in ([0-9.]+)s", done.stdout).group(1))  # type: ignore[union-attr]
    assert len(grants) >= 3, (len(grants), seconds)  # the preflight's, then fresh ones
    assert not re.search(
        r"Bearer [\w-]{8}", "".join(p.read_text("utf-8") for p in reports.glob("*.md"))
    )


def test_the_profile_keys_of_a_token_source_are_read(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PROFILE, encoding="utf-8")
    settings = load_profile(path).oauth
    assert settings == OAuthSettings(
        "/oauth2/token", "example-tpp", "private_key_jwt", refresh_margin=0.2
    )
    assert (
        settings.token_endpoint("https://bank.example/psd2") == "https://bank.example/oauth2/token"
    )


def test_play_points_an_absolute_token_url_at_the_bundled_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.commands.run import _token_endpoint_of

    monkeypatch.delenv("CONFORMANCE_TOKEN_URL", raising=False)
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.replace('"/oauth2/token"', '"https://auth.bank.example/t"'), "utf-8")
    with _token_endpoint_of("http://127.0.0.1:5", str(path)):
        assert os.environ["CONFORMANCE_TOKEN_URL"] == "http://127.0.0.1:5/t"
    assert "CONFORMANCE_TOKEN_URL" not in os.environ
    path.write_text(PROFILE, "utf-8")  # a path is on the base URL's host already
    with _token_endpoint_of("http://127.0.0.1:5", str(path)):
        assert "CONFORMANCE_TOKEN_URL" not in os.environ


@pytest.mark.slow
def test_a_client_secret_and_the_tokens_leave_no_trace_in_a_played_run(tmp_path: Path) -> None:
    """``auth = "client_secret"`` through ``--play``: the secret, read from the environment by
    the suite and by the server playing the bank, appears in no report and no log."""
    secret = "cl1ent-Sekret-9"
    profile = tmp_path / "secret.toml"
    profile.write_text(
        PROFILE.replace('auth = "private_key_jwt"', 'auth = "client_secret"')
        + f'client_secret_env = "{SECRET_ENV}"\n',
        encoding="utf-8",
    )
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--play", str(profile), "--reports",
         str(reports), "-n", "0", "--", "-k", "E9 or E12"],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, SECRET_ENV: secret},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    texts = done.stdout + done.stderr
    texts += "".join(p.read_text("utf-8", "replace") for p in reports.rglob("*") if p.is_file())
    assert "POST /oauth2/token 200" in (reports / "reference-server.log").read_text("utf-8")
    assert secret not in texts
    assert not re.search(r"Bearer [\w-]{8}", texts)
