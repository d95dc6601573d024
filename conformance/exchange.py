"""One recorded request and its answer (:class:`Exchange`), as reports show and replay it."""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from conformance.contract import bounded_json
from conformance.contract.identifiers import mask_identity
from conformance.errors import TargetError

__all__ = [
    "GENERATED_HEADERS",
    "JSON_MEDIA_TYPE",
    "STANDARD_SIGNER",
    "Exchange",
    "program_for",
    "replay_program",
]


def program_for(executable: str, on_path: str | None, cwd: Path) -> str:
    """How a printed command starts ``conformance`` so that it runs as printed: the bare name
    where ``on_path`` (what the shell finds as ``conformance``) is the script beside
    ``executable`` (the venv is active, or the package installed for the user); else that
    script's path (``.venv/bin/conformance`` after ``make run``); else ``executable -m
    conformance``. A path below ``cwd`` is shown relative to it, as the reports' paths are."""
    interpreter = Path(os.path.abspath(executable))  # not resolved: a venv's python is a link
    script = interpreter.parent / "conformance"
    if script.is_file():
        if on_path is not None and Path(on_path).resolve() == script.resolve():
            return "conformance"
        return shlex.quote(_below(script, cwd))
    return f"{shlex.quote(_below(interpreter, cwd))} -m conformance"


def _below(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


@functools.cache
def replay_program() -> str:
    """:func:`program_for` this interpreter, the PATH and the working directory (once per
    process: every replay line of a run names the same program)."""
    return program_for(sys.executable, shutil.which("conformance"), Path.cwd())


#: ``Exchange.signer`` of a request signed by the client's own :class:`SignatureAuth`.
STANDARD_SIGNER: Final = "standard"


#: Headers the signer or the HTTP layer produces; ``conformance call`` makes them afresh, so a
#: reproduce command for a normally signed exchange does not repeat them.
GENERATED_HEADERS: Final = frozenset(
    {
        "x-request-id",
        "digest",
        "signature",
        "tpp-signature-certificate",
        "date",
    }
)


#: Headers of the HTTP layer (httpx sets them); never part of a reproduce command.
_TRANSPORT_HEADERS: Final = frozenset(
    {"host", "content-length", "connection", "accept-encoding", "user-agent", "transfer-encoding"}
)


#: Headers whose value is shortened in :meth:`Exchange.render` (long, and no help to read).
_SHORTENED: Final = {"tpp-signature-certificate": 16}


#: Headers whose value identifies a person: masked in :meth:`Exchange.render` (spec 4.2).
_IDENTITY_HEADERS: Final = frozenset({"x-psu-identity"})


JSON_MEDIA_TYPE: Final = "application/json"


_ENV_PSU_IDENTITY: Final = "PSU_IDENTITY"


@dataclass(frozen=True)
class Exchange:
    """One request and its response, as sent and received (headers in the order on the wire).

    ``signing_string`` is what the signer signed (``None`` when the request was not signed or
    the signer did not report it); ``signer`` says who signed: :data:`STANDARD_SIGNER`, the
    class name of a per-request signer, or ``""`` for an unsigned request. ``elapsed`` is in
    seconds. ``base_url`` is the client's base URL (with its path prefix), kept so that a
    reproduce command names the same target and the same relative path. ``caller_headers`` are
    the (lowercase) names of the headers the scenario set itself, as opposed to the defaults and
    what the signer added: a replay repeats those even when ``call`` would make them afresh.
    ``retries`` are the throttled answers (429/503 with Retry-After) the client waited out
    before this one; ``token_refreshes`` an answer that refused the access token as expired,
    after which the request went again with a fresh one.
    """

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    signing_string: str | None
    status: int
    response_headers: tuple[tuple[str, str], ...]
    response_body: bytes
    elapsed: float
    signer: str = ""
    base_url: str = ""
    caller_headers: frozenset[str] = frozenset()
    #: Earlier answers to the same request that asked to retry (429/503 with Retry-After).
    retries: tuple[Exchange, ...] = ()
    #: An earlier answer that refused the access token as expired (``[oauth]``): the request
    #: was sent again with a fresh token, and both answers are shown.
    token_refreshes: tuple[Exchange, ...] = ()
    #: What a replay needs to sign as the run did: ``profile``, ``cert``, ``key`` file paths.
    replay_with: tuple[tuple[str, str], ...] = ()
    #: The profile's static headers (lower case) the client added: the replay's profile sends
    #: them again, so the reproduce command leaves them out (an API key stays out of reports).
    profile_headers: frozenset[str] = frozenset()

    # --- reading -------------------------------------------------------------------------------

    def request_header(self, name: str) -> str | None:
        """The first request header called ``name`` (case-insensitive), or None."""
        return _first(self.request_headers, name)

    def response_header(self, name: str) -> str | None:
        """The first response header called ``name`` (case-insensitive), or None."""
        return _first(self.response_headers, name)

    @property
    def path(self) -> str:
        """The request path with its query, relative to ``base_url`` when the URL starts with it."""
        if self.base_url and self.url.startswith(self.base_url + "/"):
            return self.url[len(self.base_url) :]
        parts = urlsplit(self.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    @property
    def target(self) -> str:
        """The base URL a replay is sent to (``base_url``, or the URL's scheme and host)."""
        if self.base_url and self.url.startswith(self.base_url + "/"):
            return self.base_url
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def json(self) -> Any:
        """The response body as JSON; a body that is not JSON is a :class:`TargetError`.

        Every body the spec shows is JSON (spec, introduction: "Request and response bodies are
        JSON"), so a target that answers HTML (a gateway's error page) is not speaking the
        interface at all, and the message says what came instead.
        """
        try:
            return bounded_json.loads(self.response_body)
        except bounded_json.JsonTooLarge as error:
            raise TargetError(
                f"the target answered {self.method} {self.url} with HTTP {self.status} and a "
                f"JSON body the suite does not read: {error.msg}"
            ) from None
        except (UnicodeDecodeError, json.JSONDecodeError):
            content_type = self.response_header("content-type") or "no Content-Type"
            start = self.response_body[:60].decode("utf-8", "replace")
            what = f"{start!r}" if self.response_body else "an empty body"
            raise TargetError(
                f"the target answered {self.method} {self.url} with HTTP {self.status} and "
                f"{what} ({content_type}) where a JSON body was expected"
            ) from None

    # --- showing -------------------------------------------------------------------------------

    def render(self) -> str:
        """The exchange as text for a report: request line, headers, signing string, bodies.

        Secrets are masked: national identity numbers in X-PSU-IDENTITY (``mask_identity``),
        and the certificate in TPP-Signature-Certificate is shortened. No private key is ever
        part of an exchange.
        """
        lines = [f">>> {self.method} {self.url}"]
        lines += [f"{name}: {_shown_value(name, value)}" for name, value in self.request_headers]
        if self.signing_string is not None:
            lines += ["", "Signing string:"]
            lines += [
                f"    {_shown_signing_line(line)}" for line in self.signing_string.split("\n")
            ]
        lines += ["", _shown_body(self.request_body), ""]
        reason = httpx.codes.get_reason_phrase(self.status)
        lines.append(f"<<< HTTP {self.status} {reason} ({self.elapsed * 1000:.1f} ms)".rstrip())
        lines += [f"{name}: {_shown_value(name, value)}" for name, value in self.response_headers]
        lines += ["", _shown_body(self.response_body)]
        if self.retries:
            waits = ", ".join(
                f"HTTP {retry.status} Retry-After {retry.response_header('retry-after')}"
                for retry in self.retries
            )
            lines += ["", f"(answered after {len(self.retries)} throttled attempt(s): {waits})"]
        for refused in self.token_refreshes:
            lines += [
                "",
                "(sent again with a fresh access token: the first answer refused the token as "
                "expired)",
                f"<<< HTTP {refused.status} {httpx.codes.get_reason_phrase(refused.status)} "
                f"({refused.elapsed * 1000:.1f} ms), the first answer",
            ]
            lines += [
                f"{name}: {_shown_value(name, value)}" for name, value in refused.response_headers
            ]
            lines += ["", _shown_body(refused.response_body)]
        return "\n".join(lines)

    def reproduce_command(
        self,
        *,
        target: str | None = None,
        profile: str | Path | None = None,
        cert: str | Path | None = None,
        key: str | Path | None = None,
        data_file: str | Path | None = None,
        mask_identities: bool = True,
        program: str | None = None,
    ) -> str:
        """The ``conformance call`` line that replays this exchange (each word ``shlex.quote``d).

        A request signed by the client's own signer is replayed with a fresh signature, so the
        headers the signer makes (Digest, Signature, TPP-Signature-Certificate, X-Request-ID,
        Date) are left to ``call``; ``cert``/``key``/``profile`` name the identity to sign with
        (by default the run's own files, :attr:`replay_with`; the default test identity when the
        run had none); the TLS client certificate and key of the run and the CA its
        server certificate was checked against follow as ``--tls-cert``, ``--tls-key`` and
        ``--tls-ca``. Only paths appear, never a key's content or password. A request that was
        unsigned, or signed by a deliberately broken signer, is replayed byte for byte with
        ``--no-sign`` and every header as sent. Default headers the exchange lacked are removed
        with ``-H 'Name:'``.

        The body goes in ``--data-json`` as sent (even when it is malformed on purpose), or in
        ``--data FILE`` when ``data_file`` is given (the caller writes ``request_body`` there;
        needed for a body that is not UTF-8). With ``mask_identities`` an X-PSU-IDENTITY value
        becomes ``$PSU_IDENTITY``, so a report carries no identity number; set that variable to
        replay. ``program`` starts the command (default :func:`replay_program`: as this run's
        ``conformance`` can be started again from here).
        """
        words: list[str] = ["call", self.method, self.path]
        words += ["--target", target or self.target]
        words += self._identity_words(profile, cert, key)
        fresh_signature = self.signer == STANDARD_SIGNER
        if fresh_signature:
            digest = self.request_header("digest") or ""
            if digest.upper().startswith("SHA-512="):
                words += ["--digest", "sha-512"]
        else:
            words.append("--no-sign")
        quoted = [shlex.quote(word) for word in words]
        quoted += self._header_words(fresh_signature, mask_identities)
        quoted += self._body_words(data_file)
        return " ".join([replay_program() if program is None else program, *quoted])

    def _identity_words(
        self, profile: str | Path | None, cert: str | Path | None, key: str | Path | None
    ) -> list[str]:
        """``--profile``, ``--cert``, ``--key`` (given, else the run's) and the run's TLS files."""
        recorded = dict(self.replay_with)
        profile = profile if profile is not None else recorded.get("profile")
        cert = cert if cert is not None else recorded.get("cert")
        key = key if key is not None else recorded.get("key")
        words: list[str] = []
        if profile is not None:
            words += ["--profile", str(profile)]
        if cert is not None:
            words += ["--cert", str(cert)]
        if key is not None:
            words += ["--key", str(key)]
        for name in ("tls-cert", "tls-key", "tls-ca"):  # TLS: client certificate, server CA
            if recorded.get(name):
                words += [f"--{name}", recorded[name]]
        return words

    def _header_words(self, fresh_signature: bool, mask_identities: bool) -> list[str]:
        """The ``-H`` arguments, quoted; an identity number as ``$PSU_IDENTITY`` when masked."""
        quoted: list[str] = []
        for name, value in self._replayed_headers(fresh_signature):
            if value is not None and mask_identities and name.lower() in _IDENTITY_HEADERS:
                quoted += ["-H", f'"{name}: ${{{_ENV_PSU_IDENTITY}}}"']
            else:
                quoted += ["-H", shlex.quote(_header_argument(name, value))]
        return quoted

    def _body_words(self, data_file: str | Path | None) -> list[str]:
        """``--data FILE`` when given, else the body as sent in ``--data-json``, quoted."""
        if data_file is not None:
            return ["--data", shlex.quote(str(data_file))]
        if not self.request_body:
            return []
        try:
            text = self.request_body.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                "the request body is not UTF-8: pass data_file and write request_body there"
            ) from None
        return ["--data-json", shlex.quote(text)]

    def _replayed_headers(self, fresh_signature: bool) -> list[tuple[str, str | None]]:
        """The -H arguments: headers as sent minus what ``call`` adds itself, plus removals."""
        generated = GENERATED_HEADERS - self.caller_headers if fresh_signature else frozenset()
        skipped = _TRANSPORT_HEADERS | generated | (self.profile_headers - self.caller_headers)
        replayed: list[tuple[str, str | None]] = []
        for name, value in self.request_headers:
            lower = name.lower()
            if lower in skipped:
                continue
            if lower == "accept" and value == JSON_MEDIA_TYPE:
                continue
            if lower == "content-type" and value == JSON_MEDIA_TYPE and self.request_body:
                continue
            replayed.append((name, value))
        present = {name.lower() for name, _ in self.request_headers}
        removed = [
            name for name, lower in _call_defaults(bool(self.request_body)) if lower not in present
        ]
        replayed += [(name, None) for name in removed]
        return replayed


def _call_defaults(has_body: bool) -> list[tuple[str, str]]:
    """The default headers every request gets (``TargetClient``, hence ``conformance call``)."""
    defaults = [("X-Request-ID", "x-request-id"), ("Accept", "accept")]
    if has_body:
        defaults.append(("Content-Type", "content-type"))
    return defaults


def _header_argument(name: str, value: str | None) -> str:
    """``-H`` syntax (curl's): ``Name: value``; ``Name:`` removes; ``Name;`` sends it empty."""
    if value is None:
        return f"{name}:"
    if value == "":
        return f"{name};"
    return f"{name}: {value}"


def _first(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers if key.lower() == wanted), None)


def _shown_value(name: str, value: str) -> str:
    lower = name.lower()
    if lower in _IDENTITY_HEADERS:
        return mask_identity(value)
    keep = _SHORTENED.get(lower)
    if keep is not None and len(value) > keep:
        return value[:keep] + "…"
    return value


def _shown_signing_line(line: str) -> str:
    name, colon, value = line.partition(":")
    if not colon:
        return line
    return f"{name}: {_shown_value(name, value.strip())}"


def _shown_body(body: bytes) -> str:
    if not body:
        return "(no body)"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return f"({len(body)} bytes, not UTF-8 text)"
    try:
        return json.dumps(bounded_json.loads(text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        return text
