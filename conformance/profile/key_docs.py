"""What each key of a target profile means and its default, attached to the profile model's
fields as their metadata (``TargetProfile``, ``conformance/profile/model.py``: ``field(metadata=
key_docs.NAME)``). ``docs/reference/profile.md`` is generated from them (``make docs``), and a test
keeps it in sync and wants every field of the model described, so a new key cannot go
undocumented. A row is (the key as a profile writes it, what it means, its default); a field
whose key another field's row names, or that no key sets, is :data:`NOT_A_KEY`.

A default the model holds is never written here as text: the row says :class:`Default`, and
:func:`text_rows` reads it from the model (the field's default, or a part of it), its one home,
which the loader reads too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from conformance.profile.oauth import OAuthSettings

__all__ = ["METADATA_KEY", "NOT_A_KEY", "Default", "Row", "TextRow", "rows_of", "text_rows"]

#: The field metadata entry holding a field's rows.
METADATA_KEY = "profile_keys"


@dataclass(frozen=True)
class Default:
    """A key's default as the profile model holds it: ``attribute`` (None: all) of ``owner``'s
    class default (None: of the documented field's default value)."""

    owner: type | None = None
    attribute: str | None = None

    def value(self, field: dataclasses.Field[Any]) -> object:
        """The default itself, read from the model."""
        if self.owner is not None:
            held: object = self.owner
        elif field.default is not dataclasses.MISSING:
            held = field.default
        else:
            assert field.default_factory is not dataclasses.MISSING, field.name
            held = field.default_factory()
        return held if self.attribute is None else getattr(held, self.attribute)

    def text(self, field: dataclasses.Field[Any]) -> str:
        """As the reference table shows it: a number bare, any other value in backticks."""
        value = self.value(field)
        if isinstance(value, bool):
            return f"`{str(value).lower()}`"
        if isinstance(value, int | float):
            return f"{value:g}"
        return f"`{value}`"


#: One key of the reference table: the key, what it means, its default (text or the model's).
Row = tuple[str, str, "str | Default"]
#: A row as the table shows it.
TextRow = tuple[str, str, str]


def _keys(*rows: Row) -> Mapping[str, tuple[Row, ...]]:
    return MappingProxyType({METADATA_KEY: rows})


def rows_of(metadata: Mapping[str, object]) -> tuple[Row, ...] | None:
    """The rows a field's metadata gives, or None when it has none (an undescribed field)."""
    rows = metadata.get(METADATA_KEY)
    return rows if isinstance(rows, tuple) else None


def text_rows(field: dataclasses.Field[Any]) -> tuple[TextRow, ...] | None:
    """The rows of ``field`` with each :class:`Default` read from the model (None: none)."""
    rows = rows_of(field.metadata)
    if rows is None:
        return None
    return tuple(
        (key, meaning, default.text(field) if isinstance(default, Default) else default)
        for key, meaning, default in rows
    )


#: A field documented by another field's row (``key`` with ``certificate``), or set by no key.
NOT_A_KEY = _keys()


NAME = _keys(
    (
        "`name`",
        "what the reports call the target",
        "the file name",
    ),
)

BASE_URL = _keys(
    (
        "`base_url`",
        "the URL every spec path is relative to; a path here is a prefix of every operation",
        "required",
    ),
)

CERTIFICATE = _keys(
    (
        "`certificate`, `key`",
        "the signing certificate (PEM or PKCS#12) and its key (when not in the certificate file)",
        "a generated test identity",
    ),
)

KEY_PASSWORD = _keys(
    (
        "`key_password`",
        "the key's password (prefer `CONFORMANCE_KEY_PASSWORD`: a file or flag leaks)",
        "none",
    ),
)

TLS = _keys(
    (
        "`ca_certificate`",
        "the CA bundle the target's TLS certificate is checked against",
        "the system's",
    ),
    (
        "`ca_trust`",
        (
            "`replace`: `ca_certificate` is the only trust anchor (a test environment's private "
            "CA); `add`: it joins the system's CAs (a public gateway certificate in front of a "
            "private one)"
        ),
        Default(attribute="ca_trust"),
    ),
    (
        "`tls_certificate`, `tls_key`",
        (
            "the TLS client certificate of mutual TLS (the QWAC; PEM or PKCS#12) and its key when "
            "not in the certificate file; apart from the signing `certificate`"
        ),
        "none (no client certificate)",
    ),
    (
        "`tls_key_password_env`",
        (
            "the name of the environment variable that holds the TLS key's or PKCS#12 file's "
            "password (the password itself is never in the file)"
        ),
        (
            "`CONFORMANCE_TLS_KEY_PASSWORD` (the counterpart of the signing key's "
            "`CONFORMANCE_KEY_PASSWORD`)"
        ),
    ),
)

SECOND_IDENTITY = _keys(
    (
        "`second_certificate`, `second_key`, `second_key_password_env`",
        (
            "a second TPP's signing certificate (another organisation, PEM or PKCS#12), its key, "
            "and the environment variable holding the key's password: the run signs with it where "
            "one TPP must not reach another's payments, baskets and consents (`AUTH-other-tpp`, "
            "security, should). Without it the run mints one from the CA it knows (the bundled "
            "run's, or a declared trust anchor), else those scenarios are not applicable"
        ),
        "none",
    ),
)

NEGATIVE_CERTIFICATES = _keys(
    (
        "`[negative_certificates] expired`, `no_role`, `other_ca`, `revoked`",
        (
            "ready-made signing certificates for the negative scenarios of spec 5 item 1 (which "
            'says only "The TPP sends its signing certificate"; which ones a bank refuses is what '
            "those scenarios check), each a PEM or PKCS#12 file with its key in it or in "
            "`<name>_key` (`expired_key`, ...): one past its validity, one whose PSD2 roles "
            "include neither PSP_PI nor PSP_AI, one of a CA the bank does not trust, one its CA "
            "(one the bank trusts) has revoked. The scenarios sign with them instead of minting, "
            "so a TPP holding a qualified trust service provider's test certificates runs them "
            "without any CA key (`expired-certificate`, `missing-role`, `certificate-other-ca`, "
            "`revoked-certificate`)"
        ),
        "minted from a declared trust anchor, else not applicable (revoked: the bundled run's)",
    ),
    (
        "`[negative_certificates] qwac_no_role`, `qwac_other_organisation`",
        (
            "ready-made TLS client certificates (QWACs the bank accepts in the handshake) for the "
            "checks of the QWAC: one whose roles include neither PSP_PI nor PSP_AI, one of another"
            " organisation than the signing certificate (`qwac-missing-role`, "
            "`qwac-other-organisation`, security, should; they need mutual TLS in the run)"
        ),
        "minted from `--tls-trust-anchor`, else not applicable",
    ),
    (
        "`[negative_certificates] password_env`",
        (
            "the environment variable holding the password of those keys or PKCS#12 files (one for"
            " all; never the password itself)"
        ),
        "none",
    ),
)

OAUTH = _keys(
    (
        "`[oauth] token_url`, `client_id`, `scope`, `auth`",
        (
            "an OAuth 2.0 access token on every request the run signs (`Authorization: Bearer`; "
            "the PSU's SCA pages get none), as several Nordic banks want beside the signature "
            '(spec 5 item 8: "Access token or OAuth flow: not shown."): the run fetches one with '
            "the client-credentials grant from `token_url` (a URL, or a path on `base_url`'s host)"
            " for `client_id` and `scope` before it starts (the preflight: a refused client stops "
            "the run in one line), fetches a fresh one `refresh_margin` seconds before it expires "
            "and when an answer refuses it as expired (401 with `WWW-Authenticate: Bearer "
            'error="invalid_token"`, or code `TOKEN_EXPIRED`/`TOKEN_INVALID`: the request goes '
            "once more, and its report shows both answers). `auth` is how the client proves itself"
            " to the token endpoint: `tls_client_auth` (its QWAC, `tls_certificate`, in the TLS "
            "handshake, RFC 8705), `private_key_jwt` (a JWT signed with the signing key, its "
            "certificate in `x5c`, RFC 7523) or `client_secret` (HTTP Basic, RFC 6749 2.3.1). The "
            "token is masked in every report (even the reference server's). Each worker holds one "
            "token, shared by its threads; the client is Authlib's"
        ),
        "none (no token)",
    ),
    (
        "`[oauth] client_secret_env`",
        (
            'with `auth = "client_secret"`: the environment variable holding the client secret '
            "(never the secret itself: a file or flag leaks); the reference server playing the "
            "profile reads the same variable"
        ),
        "none",
    ),
    (
        "`[oauth] refresh_margin`",
        "seconds before a token's expiry at which the run fetches a fresh one",
        Default(OAuthSettings, "refresh_margin"),
    ),
)

CONNECTION = _keys(
    (
        "`rate_limit`",
        (
            "the most requests per second the whole run sends, spaced evenly and shared between "
            "its workers; it also caps how many workers and scenarios in flight a run takes (at "
            "most `rate_limit` × the round trip); the reference server playing the profile answers"
            " 429 with `Retry-After` beyond it"
        ),
        "no cap",
    ),
    (
        "`timeout`",
        "seconds to wait for the target's whole answer (from the request's start to its last "
        "byte: a bank that drips its answer does not hold the run)",
        Default(attribute="timeout"),
    ),
    (
        "`connect_timeout`",
        (
            "seconds to wait for a connection to the target (a gateway that drops connections "
            "fails fast while slow answers still get `timeout`)"
        ),
        "`timeout`",
    ),
    (
        "`proxy`",
        "an `http://` or `https://` proxy URL the requests go through (a corporate network's)",
        "none",
    ),
    (
        "`retry_attempts`",
        (
            "how often one request is retried when the target answers 429 or 503 with "
            "`Retry-After` (seconds or an HTTP date), as a gateway's rate limit does; each "
            "throttled answer is kept with the exchange and shown in the report"
        ),
        Default(attribute="retry_attempts"),
    ),
    (
        "`retry_max_wait`",
        (
            "the most seconds one request waits in all for those retries; an answer whose "
            "`Retry-After` would go beyond it stands as it is (a daily limit is then judged, not "
            "waited out)"
        ),
        Default(attribute="retry_max_wait"),
    ),
)

MASK = _keys(
    (
        "`[mask] secrets`",
        (
            "mask Consent-ID, Authorization, cookies, PSU-ID, PSU-Corporate-ID, PSU-IP-Address and"
            " SCA link tokens in every report"
        ),
        "`true`, except for the reference server (`reference_server = true`)",
    ),
    (
        "`[mask] accounts`, `names`",
        (
            "mask account numbers (IBAN, 11-digit BBAN) and the values of name members "
            "(`creditorName`, `accountName`, `ultimateDebtor`, ...) in every report"
        ),
        Default(attribute="accounts"),
    ),
)

WAIVERS = _keys(
    (
        "`[[waivers]] scenarios`, `reason`",
        (
            "scenarios the bank team waives: ids or `fnmatch` patterns (`E17-header-*`), each "
            "table with the reason every report shows; a waived scenario is not run and is "
            "reported **waived**, never passed (a reason is required)"
        ),
        "none",
    ),
)

DATE_SKEW = _keys(
    (
        "`date_skew`",
        (
            "the clock skew (seconds) the bank allows between a request's signed `Date` and its "
            "own clock; the stale-Date scenarios (`AUTH-date-far-past`, `AUTH-date-far-future`, "
            "should: spec 5 signs Date but states no window) sign a Date an hour beyond it, and "
            "the reference server playing the profile refuses beyond it"
        ),
        Default(),
    ),
)

REDIRECT_URI = _keys(
    (
        "`redirect_uri`",
        "sent as TPP-Redirect-URI (spec 4.2); an absolute URL",
        Default(),
    ),
)

PSU_PRIVATE = _keys(
    (
        "`[psu.private] psu_id`, `national_id`, `customer_number`",
        "the private PSU of the test environment (spec 4.2, spec 5 item 7)",
        "created through the sandbox",
    ),
)

PSU_CORPORATE = _keys(
    (
        "`[psu.corporate] psu_id`, `corporate_id`, `customer_number`",
        "the corporate PSU",
        "created through the sandbox",
    ),
)

PSU_SECOND = _keys(
    (
        "`[psu.second] psu_id`, `national_id`, `customer_number`",
        (
            "a second private PSU, another person than `[psu.private]`, for the checks that one "
            "PSU never reaches another's resources (issue 14's security group builds on it)"
        ),
        "created through the sandbox",
    ),
)

PRODUCTS = _keys(
    (
        "`products`",
        "payment products offered: `ndct`, `periodic-ndct`, `ncbct` (spec 1)",
        "all three",
    ),
)

SUPPORTED_OPERATIONS = _keys(
    (
        "`[operations] supported` / `unsupported`",
        "narrow the operations (ids as in `schemas/`); one or the other",
        "all",
    ),
)

PATHS = _keys(
    (
        "`[paths] <op id>`",
        (
            'where the target put a path the spec does not show (spec 4.1: "Method and path: not '
            "shown\", or an operation it only references); the same placeholders as the contract's."
            " A stated path (E5-E7, E16, E18, PS, the sandbox creations) cannot change"
        ),
        "the contract's",
    ),
)

METHODS = _keys(
    (
        "`[paths] <op id> = { path, method, periodic }`",
        (
            "the same as a table: `path` as above; `method` the bank's HTTP method where spec 4.1 "
            "does not show it (E15 with POST, say); `periodic` (PS, PC, PA, PCA only) the template"
            " for a periodic payment, as NextGenPSD2 banks put it under "
            "`/v1/periodic-payments/{payment-product}/{payment-id}...` (spec 4.1 names the status "
            "path with `{payment-product}` only). With a method of its own, the operation's "
            "wrong-method scenarios are not applicable"
        ),
        "the contract's",
    ),
)

SANDBOX = _keys(
    (
        "`sandbox`",
        "the target has the sandbox API (spec 4.3), so scenarios create their own data",
        Default(),
    ),
)

PRODUCTION = _keys(
    (
        "`[production] consent_id`, `account_ids`, `transaction_ids`",
        (
            "existing data for a target without the sandbox (`transaction_ids`: of the first "
            "account, spec 4.3 E8); the first account, with `[payments] debtor_bban`, is also the "
            "one consents are asked for"
        ),
        "none",
    ),
)

PAYMENT_ACCOUNTS = _keys(
    (
        "`[payments] debtor_bban`, `creditor_bban`",
        (
            "the accounts payments use (Norwegian BBANs, checked): the PSU's own account as "
            "`debtorAccount` where the run cannot create one (without the sandbox), and a domestic"
            " `creditorAccount` for NDCT and periodic payments (a test environment may accept only"
            " known creditors)"
        ),
        "the sandbox account; generated",
    ),
)

PREPARED = _keys(
    (
        "`[prepared] pending_payment_id`, `pending_payment_product`",
        (
            "a single payment of the private PSU the bank holds in status PDNG (`ndct` or "
            '`ncbct`), for spec 7 rule 6: "When a payment in status PDNG is deleted, then an error'
            ' message is returned." (spec 3: "A payment in status PDNG refuses deletion with an '
            'error."). The suite reads its status (PS), deletes it (PC) and requires the refusal; '
            "a payment no longer in PDNG leaves the rule not judged, with that reason. Without it,"
            " `[hooks] batch` lets the run bring a future-dated authorised payment to PDNG itself"
        ),
        "none; `ndct`",
    ),
    (
        "`[prepared] aged_consent_id`",
        (
            "a valid consent of the private PSU authorised more than 90 days (and less than 180 "
            "days) ago, whose accounts no newer consent covers, for spec 8's row \"transaction "
            "details calls without PSU-IP-Address \\| 4 per day, and the PSU consent is at most 90 "
            'days old \\| E8": the suite reads an account and a booked transaction through it (AL, '
            "AT) and requires E8 without PSU-IP-Address to be refused"
        ),
        "none",
    ),
    (
        (
            "`[prepared] renewal_due_consent_id`, `renewal_due_account_id`, "
            "`renewal_due_transaction_id`"
        ),
        (
            "a consent whose SCA is more than 180 days old, an account of it and a booked "
            "transaction on that account, for spec 8's row \"renewal of SCA \\| every 180 days \\| "
            'account access": AL, AT and E8 with it are to be refused (the account for AT and E8, '
            "the transaction for E8)"
        ),
        "none",
    ),
    (
        "`[prepared] closed_account_consent_id`, `closed_account_id`",
        (
            'a consent on an account the bank has closed since, for spec 7 rule 8: "When an '
            "account with consent no longer exists in the backend, the account list returns an "
            'empty list, not 404." The account list with it is to answer 200 without that account'
        ),
        "none",
    ),
    (
        "`[prepared] basket_status_path`",
        (
            "the older name of `[paths] BS`: where the bank reads a signing basket's status (the "
            "contract's basket status read BS, `GET /v1/signing-baskets/{basketId}/status`), for "
            'spec 2.4: "The basket status is a single value that stands for the worst case among '
            'all payments in the basket." Where the bank refuses a basket holding a rejected or '
            "cancelled payment, the run makes a basket, rejects (SCA cancelled) or cancels (PC) "
            "its payment, and reads the basket's status with BS. Giving both with different paths "
            "is an error"
        ),
        "the contract's BS path",
    ),
    (
        "`[prepared] changed_basket_id`, `changed_basket_payment_ids`",
        (
            "a signing basket of the private PSU (NDCT payments) one of whose payments the bank "
            "rejected or cancelled after the basket was made, where the run cannot change one "
            "itself; it serves the scenario of that change (RJCT: rejected, CANC: cancelled), its "
            "payments' statuses read with PS and its own with BS"
        ),
        "none",
    ),
)

HOOKS = _keys(
    (
        "`[hooks] batch`, `batch_timeout`",
        (
            "a command that runs the bank's batch processing, or waits until one has run, and "
            'exits 0 then (spec 3: "The sandbox advances payments (except periodic ones) through a'
            ' simulated batch processing run five times a day."); a program path with a `/` is '
            "relative to the profile's folder; it gets the target's URL in `CONFORMANCE_TARGET` "
            "and its deadline in `CONFORMANCE_DEADLINE` (`batch_timeout` seconds). It serves the "
            "batch flows of spec 3, E3's listing of a booked sandbox payment, E8's `endToEndId` "
            "bound (read on a booked payment's transaction: E7's creation gives none), and PDNG "
            "for spec 7 rule 6. A hook that fails or overruns its deadline blocks the scenario"
        ),
        "none; 600",
    ),
)

SETUP_TEMPLATES = _keys(
    (
        "`[setup] templates`",
        (
            "a folder of JSON objects, one per sandbox creation (`SCU.json`, `SA.json`, "
            "`SCA.json`, `SAG.json`, `SDF.json`, `E5.json`, `E6.json`, `E7.json`, `E15.json`), "
            "each merged into the body the suite makes for its own data: a key replaces the "
            "suite's value (objects merged key by key), `null` removes it, an array body gets it "
            "in every item (spec 4.1: the sandbox creations' \"request and response shapes: not "
            "shown\"). The suite's unique values stay where the template names none"
        ),
        "none",
    ),
)

AGREEMENT_OWNER = _keys(
    (
        "`[setup] agreement_owner`",
        (
            "which identifier of its owner a sandbox agreement's `owner` is sent as (SAG): "
            "`customerId` or `customerNumber` (spec 2.9: `owner` optional, its form not shown; "
            "a bank may take the customer number, at most 11 characters, and refuse the id)"
        ),
        Default(),
    ),
)

SCA = _keys(
    (
        "`[sca] mode`",
        (
            "`reference` (the reference server's page), `manual` (a person at a terminal; needs "
            "`-n 0`), `command`"
        ),
        Default(attribute="mode"),
    ),
    (
        "`[sca] command`",
        'with `mode = "command"`: run with the `scaRedirect` link as its argument',
        "none",
    ),
    (
        "`[sca] start`",
        (
            "where a single payment's SCA starts: `authorisation` (the suite starts it with PA, "
            "which spec 4.1 only implies), `creation` (every payment creation answer carries "
            "`_links.scaRedirect`, in a 201 or, as spec 5 item 6 words it, a 401; the suite "
            "follows that link and needs no PA) or `psu-context` (single-SCA initiation: the suite"
            ' sends PSU-Context on the payments it creates, spec 4.2 "required for single-SCA '
            "initiation\", and follows the creation's link)"
        ),
        Default(attribute="start"),
    ),
    (
        "`[sca] approach`",
        (
            "`redirect` (spec 5 item 6), `decoupled` (the PSU approves in the bank's app, as "
            "BankID often does; the answers carry `_links.scaStatus`, which the suite polls) or "
            "`oauth` (Berlin Group's OAuth SCA approach: the answers carry `_links.scaOAuth`, the "
            "metadata of the bank's OAuth 2.0 authorisation server; the PSU authorises at its "
            "authorisation endpoint through `mode` (`reference` or `command`: the step must see "
            "the redirect back), and the suite exchanges the code it comes back with for a token, "
            "with PKCE, authenticating as `[oauth]` says; needs `[oauth]`). Decoupled and OAuth "
            "are not what spec 5 item 6 states, so the scenarios that check the `scaRedirect` link"
            " itself fail unless waived; every other scenario is judged with SCA done the bank's "
            'way. With `mode = "manual"` the person approves in the app; with `command` the '
            "command gets the `scaStatus` link (decoupled) or the authorisation URL (OAuth)"
        ),
        Default(attribute="approach"),
    ),
    (
        "`[sca] poll_interval`, `poll_timeout`",
        (
            "decoupled: seconds between two reads of `scaStatus`, and the most seconds to wait for"
            " FINALISED or FAILED; an authorisation still open then blocks the scenario (never a "
            "pass)"
        ),
        "2, 120",
    ),
)

LIFECYCLE = _keys(
    (
        "`[cancellation] sca`",
        (
            "whether cancelling a payment that was already authorised needs its own authorisation:"
            " `authorised` (the platform's banks: DELETE answers 202 with "
            "`_links.startAuthorisation`, `POST .../cancellation-authorisations` (PCA) starts its "
            "SCA, the payment is CANC once that is approved and stays as it was when it is "
            "cancelled) or `never` (DELETE cancels at once; PCA's scenarios are not applicable). A"
            " payment not yet authorised is cancelled at once either way (spec 7 rule 6 names the "
            "deletion; its authorisation is not shown: the flows are should)"
        ),
        "`authorised`",
    ),
    (
        "`nok_redirect_uri`",
        (
            "where a failed SCA is to return: sent as `TPP-Nok-Redirect-URI` beside "
            "TPP-Redirect-URI (Berlin Group's header, which the platform's contracts list; not in "
            "spec 4.2), and the address `PA-failed-sca-returns-where-the-tpp-asked` expects a "
            "cancelled SCA to land on, with an error marker; an absolute URL. Without it a failed "
            "SCA is expected back at `redirect_uri`, marked as failed"
        ),
        "none",
    ),
    (
        "`release`",
        (
            'the release of the interface the bank runs (spec 9: "The release line shown is 1.22.0'
            ' ...; earlier releases run down to 1.6.3"): what spec 9 dates later '
            '(`schemas/releases.json`: "1.21.20 added signing basket support for NCBCT", E8 in '
            "1.20.0, stable transaction ids in 1.18.0, SCA renewal of 180 days in 1.17.4, E15 in "
            "1.17.1, the structured remittance array in 1.16.2, ...) is not applicable, the reason"
            " naming the release; the reference server playing the profile refuses NCBCT in a "
            "signing basket before 1.21.20"
        ),
        "the latest (nothing gated)",
    ),
    (
        "`[operations] optional`",
        (
            'the contract\'s optional operations the bank offers (`"optional": true` in their file:'
            " the platform's sandbox reset `SI`, `POST /v1/sandbox/initialize`, which \"resets the "
            'sandbox and creates default customers"); without it their scenarios are not '
            "applicable. A reset in the middle of a run may remove what the run's other scenarios "
            "made: name SI only where the bank's reset leaves them alone (the reference server "
            "resets its default set only), or run SI's scenarios alone (`-- -m SI`)"
        ),
        "none",
    ),
)

X_ACCEPT_FIX = _keys(
    (
        "`[x_accept_fix] default`",
        "the `x-accept-fix` value sent where it is required (spec 9)",
        Default(),
    ),
)

HEADERS = _keys(
    (
        "`[headers] <Name>`",
        (
            "a header sent on every request, as an API gateway wants (its client id, an API key; "
            'spec 4.2 forbids no other headers); `"env:NAME"` reads the value from the environment'
            " variable NAME when the run starts (a secret never kept in the file, and masked in "
            "every report). Headers the suite sets itself (PSU-ID, Digest, Signature, ...) cannot "
            "be replaced"
        ),
        "none",
    ),
)

PSU_HEADERS = _keys(
    (
        "`[psu] ip_address`, `user_agent`",
        (
            "the PSU-IP-Address and PSU-User-Agent values sent (spec 4.2: the PSU's; a test "
            "environment may accept only its own)"
        ),
        "`198.51.100.24`, none",
    ),
)

KEY_ID = _keys(
    (
        "`[key_id] serial`, `issuer`, `url_encoded`",
        (
            "how the signer writes the Signature's keyId (spec 5 item 2: "
            '"SN=<serial_hex>,CA=<full_CA_distinguished_name>, where the serial number is that of '
            'the signing certificate in hexadecimal" fixes neither the case of the hex nor how the'
            ' DN is written), for a bank that compares keyIds as text: `serial = "upper"` '
            '(`SN=9FA1`, as Berlin Group\'s example), `issuer = "reversed"` (the RDNs in the '
            "certificate's order, `C=..,O=..,CN=..`, as OpenSSL prints them), `url_encoded = true`"
            " (the DN percent-encoded but for its separators, "
            "`CA=CN=D-TRUST%20CA%202-1%202015,...`, as Berlin Group's example). The reference "
            "server accepts every rendering (it compares values)"
        ),
        "`lower`, `rfc4514`, `false`",
    ),
)

KID_REFERENCE_TYPE = _keys(
    (
        "`kid_reference_type`",
        (
            "the `referenceType` of a KID in the structured remittance array (spec 2.7 says a KID "
            '"belongs in the structured array" and does not show the type; several banks\' samples '
            "use ISO 20022's `SCOR`)"
        ),
        Default(),
    ),
)

QUERY_NAMES = _keys(
    (
        "`[query.<op id>] <name>`",
        (
            "the bank's name of a query parameter of an operation the spec only references "
            '(`[query.AT] fromDate = "dateFrom"`, as NextGenPSD2 names it): spec 4.3 names the '
            "parameters of its own operations (E3's `fromDate`, E9's `withAccounts`), so those "
            "cannot be renamed"
        ),
        "the contract's",
    ),
)

PRODUCT_IDS = _keys(
    (
        "`[product_ids] ncbct`",
        (
            "the bank's NCBCT product identifier in payment paths (spec 4.1: \"The NCBCT product "
            "identifier: not shown\"; NDCT's is stated, so only this one can change)"
        ),
        "`norwegian-cross-border-credit-transfers`",
    ),
)

REQUIRED_HEADERS = _keys(
    (
        "`[required_headers] <op id>`",
        (
            "the bank's required header set of an operation whose set the spec does not show (the "
            "contract's assumption topic `required-headers`: E2, E17, PA, PS, PC, CC, CS, CA, CG, "
            "CD, AL, AT and the sandbox creations), as a list of header names the operation lists;"
            " spec 5's signature headers cannot be dropped. A header the set leaves out makes its "
            "missing-header scenario not applicable"
        ),
        "the contract's assumed set",
    ),
)

CONSENT = _keys(
    (
        "`[consent] model`",
        (
            "the bank's consent model (spec 8 presupposes the PSU's consent and shows no consent "
            'operation, spec 1: "Production account-information operations other than the '
            "transaction-details operation: not shown.\"; the contract's CC is NextGenPSD2's): "
            "`detailed` (`access` names the accounts), `bank-offered` (`access` with empty "
            "`accounts`, `balances` and `transactions`: the PSU chooses the accounts at SCA, "
            "Berlin Group's \"Consent Request without Indication of Accounts\"; the platform's "
            "banks take these at `POST /v1/bank-offered-consents`: name it in `[paths] CC`) or "
            '`global` (`access` `{"allPsd2": "allAccounts"}`: every account offered to the PSU) or '
            "`first-access` (no consent endpoint at all: a TPP session's first account access is "
            "answered 401 with `_links.scaRedirect`, spec 5 item 6's form, \"the 401 answer carries"
            ' `_links.scaRedirect`, to which the PSU is sent"; after that SCA the consent covers '
            "the PSU's accounts for that session, and AL, AT and E8 name it by their "
            "`TPP-Session-ID`). The suite sends that body wherever it asks for a consent (set-up, "
            "CC's own scenarios but those breaking a member of a named account, the consent "
            "flows), and the consent read (`CG-authorised-consent-reads-its-access`) judges the "
            "access that model gives: the account asked for, at least one account the PSU chose, "
            "or `allPsd2`; under `first-access` it makes the first access instead (AL, 401, SCA "
            "the `[sca]` way, AL again), the consent operations CC, CS, CA, CG and CD are not "
            "applicable with that reason, and the `[production] consent_id` and `[prepared]` "
            "consent ids are the TPP-Session-IDs of sessions whose consents the bank holds "
            "(without `consent_id` the run makes the first access itself, as the private PSU, on "
            "`account_ids`). The reference server playing the profile takes that model's body only"
            " (`first-access`: its consent operations answer 404)"
        ),
        Default(attribute="model"),
    ),
)

RESPONSE_HEADERS = _keys(
    (
        "`[response_headers] promised`",
        (
            "the response headers the bank promises, any of `X-Request-ID` (echoed on every "
            "answer), `Location` (on the 201 of a payment, basket, consent or authorisation "
            "created) and `ASPSP-SCA-Approach` (naming `[sca] approach` on the answers that start "
            "an authorisation). Spec 4.2 shows request headers only, so the suite judges them at "
            "should (rules `RH-*`); a promised one that is missing or wrong counts as a must "
            "failure for this bank instead, and every report names it as the bank's own promise, "
            "not a sentence of the spec (docs/explanation/response-headers.md)"
        ),
        "none (should findings only)",
    ),
)

OPERATION_PROMISES = _keys(
    (
        "`[operations] promised`",
        (
            "the operations interface.md neither shows nor names that the bank promises to offer, "
            "any of `BR` (`GET /v1/signing-baskets/{basketId}`), `BS` (its `/status`), `PCA` "
            "(`POST .../cancellation-authorisations`) and `SI` (`POST /v1/sandbox/initialize`; "
            'promising it offers it, as `optional` does): the contract\'s `"unnamed": true` files. '
            "The spec states no such operation (spec 2.4 shows a basket's fields and spec 7 rule 6"
            " a payment's deletion, but no operation reading a basket or authorising a "
            "cancellation), so every scenario on one is judged at should, resting on the reading "
            "that the bank offers it. A promised one is held to what the spec states for every "
            "operation: a failure of its scenarios that quote a sentence (its signature, spec 5; "
            "its headers, spec 4.2 and spec 7 rule 3), of its positive scenario (the answer is no "
            "success) or of a flow step on it counts as a must failure for this bank, and every "
            "report names it as the bank's own promise, not a sentence of the spec "
            "(docs/explanation/verdicts-and-causes.md, item 6). Its other scenarios stay should "
            "(their header sets and bodies are the contract's readings). Unpromised, a failed step"
            " on one ends even a must flow at should"
        ),
        "none (should findings only)",
    ),
)

REFERENCE_SERVER = _keys(
    (
        "`reference_server`",
        "the target is the bundled reference server (its `/_control` clock and batch)",
        Default(),
    ),
)

EXTENDS = _keys(
    (
        "`extends`",
        (
            "the file name of another profile in the same folder whose keys this one starts "
            "from: its tables are merged key by key, a key given here wins (a list is replaced "
            "whole), and the base may extend another in turn "
            "(`profiles/reference-server-permissive.toml` extends `reference-server.toml`); a "
            "sealed record keeps each base beside its copy of the profile"
        ),
        "none",
    ),
)

READINGS = _keys(
    (
        "`readings`",
        (
            "the readings of the spec the reference server plays when it plays this profile "
            "(`conformance serve --profile`, `conformance run --play`): names of "
            "`reference_server/model/readings.py` (`docs/explanation/readings.md`), each a "
            "place where the spec reads two ways or is silent, played another way than the "
            "bundled server plays it; the suite itself ignores the key, and the server refuses "
            "a name it does not know"
        ),
        "none (the bundled server's readings)",
    ),
)
