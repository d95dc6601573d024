"""The SCA step of spec 5 item 6, chosen by the profile: the reference server's page filled in, a
person at a terminal, or a command; for a bank whose SCA is decoupled (``[sca] approach``), the
same PSU's decision followed by polling the authorisation's ``scaStatus`` until it ends.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import IO, TYPE_CHECKING, Protocol
from urllib.parse import urlencode, urljoin

from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    SetUpFailure,
    check_json_body,
    check_sca_redirect,
    json_document,
)
from conformance.errors import ConformanceError

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.exchange import Exchange
    from conformance.profile import ScaSettings, TargetProfile

__all__ = [
    "FINAL_SCA_STATUSES",
    "CommandSca",
    "DecoupledSca",
    "ManualSca",
    "ReferenceSca",
    "ScaError",
    "ScaOutcome",
    "ScaRedirectBroken",
    "ScaStep",
    "require_sca_link",
    "sca_blocked",
    "sca_failure",
    "sca_link",
    "sca_step_for",
]

#: Redirects followed on the bank's side before the TPP-Redirect-URI is reached.
_MAX_HOPS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class ScaError(ConformanceError):
    """The SCA step could not be completed: the page, the command or the terminal failed."""


class ScaRedirectBroken(ScaError):
    """The target's side of the redirect failed: its page, its form, or the way back to the
    TPP-Redirect-URI (spec 5 item 6). A verdict on the target, not a failure of the suite."""


@dataclass(frozen=True)
class ScaOutcome:
    """How the redirect ended: ``redirect_url`` is where the PSU was sent back to (the
    TPP-Redirect-URI with the bank's query), None when the step does not learn it."""

    approved: bool
    redirect_url: str | None = None


class ScaStep(Protocol):
    """Takes a PSU through one SCA redirect (spec 5 item 6)."""

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        """Authenticate (``approve``) or cancel at ``link`` as the customer ``customer_number``
        (spec 5 item 7: the sandbox customer's customerNumber is the SCA identifier)."""
        ...


# --- the reference server's page -----------------------------------------------------------------


@dataclass
class _Form:
    action: str = ""
    method: str = "get"
    fields: dict[str, str] | None = None
    buttons: dict[str, list[str]] | None = None


class _FormParser(HTMLParser):
    """The first ``<form>`` of a page: its action, method, inputs and submit buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.form: _Form | None = None
        self._inside = False
        self._done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.form is None:
            self.form = _Form(values.get("action", ""), values.get("method", "get").lower(), {}, {})
            self._inside = True
            return
        if not self._inside or self.form is None or "name" not in values:
            return
        kind = values.get("type", "text" if tag == "input" else "submit").lower()
        assert self.form.fields is not None and self.form.buttons is not None
        if tag == "button" or kind == "submit":
            self.form.buttons.setdefault(values["name"], []).append(values.get("value", ""))
        elif tag in ("input", "select", "textarea") and kind not in ("checkbox", "radio"):
            self.form.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._inside:
            self._inside = False
            self._done = True


def _read_form(html: str) -> _Form | None:
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    return parser.form


class ReferenceSca:
    """Completes SCA on the reference server's HTML page, through the suite's own client.

    GET the scaRedirect link (unsigned: it is the PSU's browser, not the TPP, that goes there),
    POST its form with ``customerNumber`` and ``action`` (approve or cancel), follow the bank's
    own redirects and stop at the first one leading to the TPP-Redirect-URI, which is returned
    and never fetched. The exchanges are recorded like every other.
    """

    def __init__(self, client: TargetClient, redirect_uri: str) -> None:
        self.client = client
        self.redirect_uri = redirect_uri

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        page = self.client.request("GET", link, headers={"Accept": "text/html"}, auth=None)
        if page.status != 200:
            raise ScaRedirectBroken(f"the SCA page {link} answered HTTP {page.status}, not 200")
        form = _read_form(page.response_body.decode("utf-8", "replace"))
        if form is None or form.fields is None or form.buttons is None:
            raise ScaRedirectBroken(f"the SCA page {link} has no form to fill in")
        fields = dict(form.fields)
        if customer_number is not None:
            fields["customerNumber"] = customer_number
        wanted = "approve" if approve else "cancel"
        fields["action"] = wanted
        action = urljoin(page.url, form.action or page.url)
        answer = self.client.request(
            form.method.upper() if form.method in ("get", "post") else "POST",
            action,
            content=urlencode(fields).encode("ascii"),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "text/html",
            },
            auth=None,
        )
        for _ in range(_MAX_HOPS):
            if answer.status not in _REDIRECTS:
                raise ScaRedirectBroken(
                    f"the SCA form at {action} answered HTTP {answer.status}, not a redirect "
                    "back to the TPP-Redirect-URI"
                )
            location = urljoin(answer.url, answer.response_header("location") or "")
            if location.startswith(self.redirect_uri):
                return ScaOutcome(approved=approve, redirect_url=location)
            answer = self.client.request(
                "GET", location, headers={"Accept": "text/html"}, auth=None
            )
        raise ScaRedirectBroken(f"the SCA flow at {link} did not return to {self.redirect_uri}")


# --- a person at the terminal --------------------------------------------------------------------


def _open_terminal() -> IO[str]:
    return open("/dev/tty", "r+", encoding="utf-8")


class ManualSca:
    """Prints the link on the terminal (``/dev/tty``, past pytest's capture) and waits for Enter.

    A person completes SCA in a browser as the PSU. Without a terminal, or under pytest-xdist
    (several workers cannot share one person), the scenario is not applicable.
    """

    def __init__(
        self,
        *,
        terminal: Callable[[], IO[str]] = _open_terminal,
        environ: Mapping[str, str] | None = None,
        decoupled: bool = False,
    ) -> None:
        self.decoupled = decoupled
        self.terminal = terminal
        self.environ: Mapping[str, str] = os.environ if environ is None else environ

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        if self.environ.get("PYTEST_XDIST_WORKER"):
            raise NotApplicable(
                "manual SCA needs one interactive process: run without pytest-xdist (-n)"
            )
        try:
            stream = self.terminal()
        except OSError:
            raise NotApplicable("manual SCA needs a terminal, and none is attached") from None
        with stream:
            what = "APPROVE" if approve else "CANCEL"
            who = f" as customer {customer_number}" if customer_number else ""
            if self.decoupled:
                stream.write(
                    f"\n[conformance] In the bank's app, {what} the authorisation{who}; its "
                    f"status is at\n    {link}\nPress Enter when done. "
                )
            else:
                stream.write(
                    f"\n[conformance] Open this link and {what} the authorisation{who}:\n"
                    f"    {link}\nPress Enter when done. "
                )
            stream.flush()
            stream.readline()
        return ScaOutcome(approved=approve)


# --- a command -----------------------------------------------------------------------------------


class CommandSca:
    """Runs the profile's command with the link as its last argument and waits for it.

    The command also gets ``CONFORMANCE_SCA_ACTION`` (approve or cancel),
    ``CONFORMANCE_SCA_CUSTOMER_NUMBER`` and ``CONFORMANCE_REDIRECT_URI`` in its environment; the
    last line it prints that starts with the TPP-Redirect-URI is taken as the redirect back.
    """

    def __init__(self, command: str, redirect_uri: str, *, timeout: float = 300.0) -> None:
        self.command = shlex.split(command)
        self.redirect_uri = redirect_uri
        self.timeout = timeout

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        environment = {
            **os.environ,
            "CONFORMANCE_SCA_ACTION": "approve" if approve else "cancel",
            "CONFORMANCE_SCA_CUSTOMER_NUMBER": customer_number or "",
            "CONFORMANCE_REDIRECT_URI": self.redirect_uri,
        }
        try:
            finished = subprocess.run(
                [*self.command, link],
                env=environment,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise ScaError(f"the SCA command {self.command[0]!r} was not found") from None
        except subprocess.TimeoutExpired:
            raise ScaError(
                f"the SCA command {shlex.join(self.command)} did not finish within "
                f"{self.timeout:g} s"
            ) from None
        if finished.returncode != 0:
            detail = (finished.stderr or finished.stdout).strip().splitlines()[-1:] or [""]
            raise ScaError(
                f"the SCA command {shlex.join(self.command)} failed with exit code "
                f"{finished.returncode}: {detail[0]}"
            )
        back = [
            line.strip()
            for line in finished.stdout.splitlines()
            if line.strip().startswith(self.redirect_uri)
        ]
        return ScaOutcome(approved=approve, redirect_url=back[-1] if back else None)


def sca_step_for(profile: TargetProfile, client: TargetClient) -> ScaStep:
    """The SCA step the profile asks for (``[sca] mode``), polling when SCA is decoupled."""
    settings = profile.sca
    step: ScaStep
    if settings.mode == "manual":
        step = ManualSca(decoupled=settings.decoupled)
    elif settings.mode == "command":
        assert settings.command is not None  # the profile loader insists on it
        step = CommandSca(settings.command, profile.redirect_uri)
    else:
        step = ReferenceSca(client, profile.redirect_uri)
    if settings.decoupled:
        return DecoupledSca(step, client, settings)
    return step


# --- decoupled -----------------------------------------------------------------------------------

#: The scaStatus values after which nothing more happens (spec 3 lists them; FINALISED and FAILED
#: end an authorisation, EXEMPTED needs none).
FINAL_SCA_STATUSES = frozenset({"FINALISED", "FAILED", "EXEMPTED"})


class DecoupledSca:
    """Decoupled SCA: the PSU decides in the bank's app while the TPP polls ``scaStatus``.

    ``decide`` stands for the PSU: a person at the terminal, the profile's command (both get the
    ``scaStatus`` link), or against the reference server its SCA page, which plays the bank's
    app (``/sca/{id}``, the ``scaStatus`` link without ``/status``). The status link is then
    read, signed as the TPP, every ``poll_interval`` seconds until the status is final; one that
    is still open after ``poll_timeout`` seconds ends the step with a :class:`ScaError`.
    """

    def __init__(
        self,
        decide: ScaStep,
        client: TargetClient,
        settings: ScaSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.decide = decide
        self.client = client
        self.interval = settings.poll_interval
        self.timeout = settings.poll_timeout
        self.sleep = sleep

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        app_link = link.removesuffix("/status") if isinstance(self.decide, ReferenceSca) else link
        self.decide.complete(app_link, customer_number=customer_number, approve=approve)
        deadline = time.monotonic() + self.timeout
        while True:
            status = self._status(link)
            if status in FINAL_SCA_STATUSES:
                return ScaOutcome(approved=status != "FAILED")
            if time.monotonic() + self.interval > deadline:
                raise ScaError(
                    f"the decoupled authorisation at {link} was still {status} after "
                    f"{self.timeout:g} s ([sca] poll_timeout)"
                )
            self.sleep(self.interval)

    def _status(self, link: str) -> str:
        answer = self.client.request("GET", link, headers={"Accept": "application/json"})
        document = json_document(answer) if answer.status == 200 else None
        status = document.get("scaStatus") if isinstance(document, Mapping) else None
        if not isinstance(status, str):
            raise ScaRedirectBroken(
                f"the scaStatus link {link} answered HTTP {answer.status} without a scaStatus"
            )
        return status


# --- the link an answer gives ---------------------------------------------------------------------


def sca_link(document: object, settings: ScaSettings) -> str | None:
    """The link an answer gives the SCA step: ``scaRedirect`` (redirect), else ``scaStatus``
    (decoupled: the link polled; an SCA status record's ``self`` too), None when it has none."""
    if not isinstance(document, Mapping):
        return None
    links = document.get("_links")
    if not isinstance(links, Mapping):
        return None
    # An SCA status record's own ``self`` is the authorisation; a payment's is the payment.
    record = "scaStatus" in document
    names = ("scaStatus", "self") if record else ("scaStatus",)
    for name in names if settings.decoupled else ("scaRedirect",):
        link = links.get(name)
        href = link.get("href") if isinstance(link, Mapping) else None
        if isinstance(href, str) and href:
            return href
    return None


def require_sca_link(
    exchange: Exchange, settings: ScaSettings, *, spec: str = "spec 5 item 6"
) -> str:
    """The SCA link of a started authorisation; its absence fails the scenario.

    With a redirect that is spec 5 item 6's ``_links.scaRedirect``; with decoupled SCA the
    ``scaStatus`` link the TPP polls (the profile's choice, not the spec's).
    """
    if not settings.decoupled:
        return check_sca_redirect(exchange, spec=spec)
    link = sca_link(check_json_body(exchange, spec=spec), settings)
    if link is not None:
        return link
    raise ConformanceFailure(
        "the answer has no _links.scaStatus link to follow the decoupled SCA",
        spec=spec,
        sent=exchange,
        expected="decoupled SCA ([sca] approach): the answer carries _links.scaStatus "
        "(or self) for the TPP to poll",
    )


def sca_blocked(error: ScaError, exchanges: Sequence[Exchange]) -> SetUpFailure:
    """An SCA step that could not be completed on the suite's side (a command that failed, a
    decoupled authorisation nobody decided in time): the scenario is blocked, not failed."""
    return SetUpFailure(
        f"Set-up failed: SCA: {error.message}",
        spec="spec 5 item 6",
        sent=exchanges[-1] if exchanges else None,
        expected="the PSU completes SCA ([sca] in the profile)",
    )


def sca_failure(error: ScaRedirectBroken, exchanges: Sequence[Exchange]) -> ConformanceFailure:
    """A redirect that did not bring the PSU back as spec 5.6 says, as a failure of the target
    (the last exchange of the redirect is the one judged)."""
    last = exchanges[-1] if exchanges else None
    return ConformanceFailure(
        f"SCA redirect: {error.message}",
        spec="spec 5 item 6",
        sent=last,
        related=tuple(exchanges[-4:-1]),
        expected="the PSU completes SCA at the scaRedirect link and is sent back to the "
        "TPP-Redirect-URI",
    )
