"""The SCA step against the reference server: its HTML page filled in through the suite's own
client (``[sca] mode = "reference"``, the default)."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urljoin

from conformance.bankside.sca.base import ScaOutcome, ScaRedirectBroken

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient

__all__ = ["ReferenceSca"]

#: Redirects followed on the bank's side before the TPP-Redirect-URI is reached.
_MAX_HOPS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


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
    own redirects and stop at the first one leading to the TPP-Redirect-URI (or to the
    TPP-Nok-Redirect-URI, where the profile sends one: a failed SCA may return there), which is
    returned and never fetched. The exchanges are recorded like every other.
    """

    def __init__(
        self, client: TargetClient, redirect_uri: str, *, nok_redirect_uri: str | None = None
    ) -> None:
        self.client = client
        self.redirect_uri = redirect_uri
        self.landings = tuple(uri for uri in (redirect_uri, nok_redirect_uri) if uri)

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
            if location.startswith(self.landings):
                return ScaOutcome(approved=approve, redirect_url=location)
            answer = self.client.request(
                "GET", location, headers={"Accept": "text/html"}, auth=None
            )
        raise ScaRedirectBroken(f"the SCA flow at {link} did not return to {self.redirect_uri}")
