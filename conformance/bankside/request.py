"""One request to an operation, as a value: built from a valid base, changed one thing at a time.

Runners never assemble headers or paths by hand: a :class:`OperationRequest` knows its operation,
fills the path from the profile (its overrides of the "not shown" paths, spec 4.1), adds the
headers spec 4.2 requires of that operation (the signer adds Digest, Signature and
TPP-Signature-Certificate, spec 5), and sends through the worker's one client. A mutation
(:func:`apply_mutation`) or a runner's own change returns a new value, so a base request built
once can be sent several ways.
"""

from __future__ import annotations

import copy
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from conformance.bankside.client import DEFAULT_AUTH

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile
    from conformance.scenario import Mutation

__all__ = [
    "NOK_REDIRECT_HEADER",
    "NO_BODY",
    "OperationRequest",
    "Psu",
    "Target",
    "apply_mutation",
    "sent_beyond_required",
    "standard_headers",
]


class Target(Protocol):
    """What building and sending a request needs (a RunContext, or the DataFactory)."""

    @property
    def contract(self) -> Contract: ...

    @property
    def profile(self) -> TargetProfile: ...

    @property
    def client(self) -> TargetClient: ...


class _NoBody:
    def __repr__(self) -> str:
        return "NO_BODY"


#: ``OperationRequest.body`` of a request without a body (``None`` would be the JSON null).
NO_BODY: Any = _NoBody()


@dataclass(frozen=True)
class Psu:
    """The PSU a request is made for (spec 5 item 5), as the target knows it.

    ``psu_id`` is the PSU-ID (a UUID, spec 4.2); ``customer_number`` the identifier used in SCA
    in the test environment (spec 5 item 7); a corporate PSU also has ``corporate_id``
    (PSU-Corporate-ID, spec 7 rule 3). ``national_id`` is the X-PSU-IDENTITY alternative.
    PSU-Context is sent for a corporate PSU always (spec 7 rule 3) and for a private one only with
    ``context``: on payment creation it asks for single-SCA initiation (spec 4.2), which a payment
    meant for a signing basket must not do. ``ip_address`` None sends no PSU-IP-Address (spec 8
    counts transaction details calls without it).
    """

    psu_id: str | None
    customer_number: str | None = None
    corporate_id: str | None = None
    corporate: bool = False
    national_id: str | None = None
    ip_address: str | None = "198.51.100.24"
    context: bool = False

    def headers(self, operation: Operation) -> dict[str, str]:
        """The PSU headers ``operation`` lists (required or optional), for this PSU."""
        listed = _listed(operation)
        headers: dict[str, str] = {}
        if self.psu_id is not None and "psu-id" in listed:
            headers["PSU-ID"] = self.psu_id
        elif self.national_id is not None and "x-psu-identity" in listed:
            headers["X-PSU-IDENTITY"] = self.national_id
        if "psu-ip-address" in listed and self.ip_address is not None:
            headers["PSU-IP-Address"] = self.ip_address
        if "psu-context" in listed and (self.corporate or self.context):
            headers["PSU-Context"] = "CORPORATE" if self.corporate else "PRIVATE"
        if self.corporate and self.corporate_id is not None and "psu-corporate-id" in listed:
            headers["PSU-Corporate-ID"] = self.corporate_id
        return headers


#: Where a failed SCA is to return (Berlin Group; the platform's contracts list it): sent beside
#: TPP-Redirect-URI when the profile names ``nok_redirect_uri``. Spec 4.2 does not name it.
NOK_REDIRECT_HEADER = "TPP-Nok-Redirect-URI"

#: The headers that say who the PSU is (replaced together by :meth:`OperationRequest.as_psu`).
_PSU_IDENTITY_HEADERS = frozenset(
    {"psu-id", "x-psu-identity", "psu-context", "psu-corporate-id", "psu-ip-address"}
)


def _listed(operation: Operation) -> frozenset[str]:
    return frozenset(
        name.lower() for name in (*operation.required_headers, *operation.optional_headers)
    )


def redirect_headers(profile: TargetProfile) -> dict[str, str]:
    """Where the PSU returns after SCA (spec 5 item 6): TPP-Redirect-URI, and beside it
    TPP-Nok-Redirect-URI where the profile names ``nok_redirect_uri`` (where a failed SCA is to
    return; not in spec 4.2: the platform's)."""
    headers = {"TPP-Redirect-URI": profile.redirect_uri}
    nok = profile.lifecycle.nok_redirect_uri
    if nok is not None:
        headers[NOK_REDIRECT_HEADER] = nok
    return headers


def sent_beyond_required(operation: Operation, profile: TargetProfile) -> tuple[str, ...]:
    """The optional headers sent on ``operation`` as if required: where the spec does not show
    its header set, the required TPP headers of its nearest stated operation
    (``Operation.also_sent``), so that a bank that requires them as there accepts the request
    and one that does not ignores them; none where the profile's ``[required_headers]`` names
    the bank's set for it."""
    if operation.id in profile.required_headers:
        return ()
    return operation.also_sent


def standard_headers(
    operation: Operation, profile: TargetProfile, psu: Psu | None
) -> dict[str, str]:
    """The headers a well-behaved TPP sends on ``operation`` (spec 4.2), signer's aside.

    Required TPP headers (and those :func:`sent_beyond_required` adds) get the profile's values
    (x-accept-fix of spec 9, TPP-Redirect-URI, and beside it TPP-Nok-Redirect-URI where the
    profile names ``nok_redirect_uri``), a fresh TPP-Session-ID; the PSU headers come from
    ``psu``, with the profile's PSU-IP-Address and PSU-User-Agent where it names them (``[psu]
    ip_address``, ``user_agent``). An operation that requires PSU-ID without a PSU given is a
    programming error in the runner.
    """
    required = frozenset(name.lower() for name in profile.required_for(operation))
    sent = required | frozenset(name.lower() for name in sent_beyond_required(operation, profile))
    headers: dict[str, str] = {}
    if "x-accept-fix" in sent:
        headers["x-accept-fix"] = profile.x_accept_fix
    if "tpp-session-id" in sent:
        headers["TPP-Session-ID"] = str(uuid.uuid4())
    if "tpp-redirect-uri" in sent:
        headers.update(redirect_headers(profile))
    if psu is not None:
        headers.update(psu.headers(operation))
        if "psu-context" in required and "PSU-Context" not in headers:
            # the bank requires the context here ([required_headers]): the PSU's own
            headers["PSU-Context"] = "CORPORATE" if psu.corporate else "PRIVATE"
        if "PSU-IP-Address" in headers and profile.psu_ip_address is not None:
            headers["PSU-IP-Address"] = profile.psu_ip_address  # the bank's accepted address
        if profile.psu_user_agent is not None and "psu-user-agent" in _listed(operation):
            headers["PSU-User-Agent"] = profile.psu_user_agent
    elif "psu-id" in required:
        raise ValueError(f"{operation.id} requires PSU-ID: build its request with a PSU")
    return headers


@dataclass(frozen=True)
class OperationRequest:
    """A request to ``operation``: path values, query, headers and a JSON (or raw) body.

    ``headers`` are sent on top of the client's defaults; a ``None`` value removes a header
    (a default one too). ``content`` (raw bytes) replaces the JSON ``body`` when given.
    ``method`` and ``path`` override the operation's (wrong method, unknown path).
    """

    operation: Operation
    path_values: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    query: tuple[tuple[str, Any], ...] = ()
    headers: tuple[tuple[str, str | None], ...] = ()
    body: Any = NO_BODY
    content: bytes | None = None
    method: str | None = None
    path: str | None = None

    # --- building ------------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        ctx: Target,
        operation: Operation | str,
        *,
        psu: Psu | None = None,
        path_values: Mapping[str, str] | None = None,
        query: Mapping[str, Any] | Sequence[tuple[str, Any]] = (),
        body: Any = NO_BODY,
        headers: Mapping[str, str | None] | None = None,
    ) -> OperationRequest:
        """The valid request: standard headers for ``psu`` plus ``headers`` on top."""
        op = ctx.contract.operations[operation] if isinstance(operation, str) else operation
        chosen: dict[str, str | None] = dict(standard_headers(op, ctx.profile, psu))
        if headers:
            chosen.update(headers)
        pairs = tuple(query.items()) if isinstance(query, Mapping) else tuple(query)
        return cls(
            operation=op,
            path_values=MappingProxyType(dict(path_values or {})),
            query=pairs,
            headers=tuple(chosen.items()),
            body=body,
        )

    def with_header(self, name: str, value: str | None) -> OperationRequest:
        """This request with header ``name`` set to ``value`` (None: not sent at all)."""
        kept = tuple((key, val) for key, val in self.headers if key.lower() != name.lower())
        return replace(self, headers=(*kept, (name, value)))

    def without_header(self, name: str) -> OperationRequest:
        return self.with_header(name, None)

    def as_psu(self, psu: Psu) -> OperationRequest:
        """This request sent for another PSU: every PSU identity header replaced (spec 4.2)."""
        kept = tuple(
            (key, val) for key, val in self.headers if key.lower() not in _PSU_IDENTITY_HEADERS
        )
        return replace(self, headers=(*kept, *psu.headers(self.operation).items()))

    def header(self, name: str) -> str | None:
        return next((val for key, val in self.headers if key.lower() == name.lower()), None)

    def with_query(self, name: str, value: Any | None) -> OperationRequest:
        """This request with query parameter ``name`` set (None: removed)."""
        kept = tuple((key, val) for key, val in self.query if key != name)
        return replace(self, query=kept if value is None else (*kept, (name, value)))

    def with_path_value(self, name: str, value: str) -> OperationRequest:
        return replace(self, path_values=MappingProxyType({**self.path_values, name: value}))

    def with_body(self, body: Any) -> OperationRequest:
        return replace(self, body=body, content=None)

    def with_content(self, content: bytes, content_type: str | None = None) -> OperationRequest:
        """A raw body (malformed on purpose); ``content_type`` replaces application/json."""
        changed = replace(self, content=content, body=NO_BODY)
        return changed.with_header("Content-Type", content_type) if content_type else changed

    # --- sending -------------------------------------------------------------------------------

    def target_path(self, profile: TargetProfile) -> str:
        """The path sent: the override, or the profile's template filled (spec 4.1)."""
        if self.path is not None:
            return self.path
        return profile.render_path(self.operation, **self.path_values)

    def digests_empty_body(self, profile: TargetProfile) -> bool:
        """Whether the signer sends a Digest although there is no body: where the operation
        requires the header (spec 4.2 lists Digest for E13, a GET; a bank's own set,
        ``[required_headers]``), and on a bodiless POST, PUT or PATCH (starting an
        authorisation: E2, PA, CA). Spec 5 item 4 asks for Digest where there is a body and
        says nothing of a request without one, and E2's required headers are "not shown": a
        bank that wants Digest on every state-changing request gets the digest of the empty
        body, which any bank that checks a Digest it was sent finds right."""
        has_body = self.content is not None or self.body is not NO_BODY
        if has_body:
            return False
        required = {name.lower() for name in profile.required_for(self.operation)}
        method = (self.method or profile.method_for(self.operation)).upper()
        return "digest" in required or method in _STATE_CHANGING

    def send(self, ctx: Target, *, auth: httpx.Auth | Any = DEFAULT_AUTH) -> Exchange:
        """Send through the worker's client (signed unless ``auth`` says otherwise)."""
        if auth is DEFAULT_AUTH and self.digests_empty_body(ctx.profile):
            auth = _empty_body_signer(ctx.client)
        kwargs: dict[str, Any] = {}
        if self.content is not None:
            kwargs["content"] = self.content
        elif self.body is not NO_BODY:
            kwargs["json"] = self.body
            if self.body is None:  # the JSON null itself
                kwargs = {"content": b"null"}
        return ctx.client.request(
            self.method or ctx.profile.method_for(self.operation),
            self.target_path(ctx.profile),
            params=[
                (ctx.profile.query_name(self.operation.id, key), val) for key, val in self.query
            ]
            or None,
            headers=list(self.headers),
            auth=auth,
            **kwargs,
        )


#: The methods whose bodiless requests carry the digest of the empty body.
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH"})

_EMPTY_BODY_SIGNERS: weakref.WeakKeyDictionary[TargetClient, httpx.Auth] = (
    weakref.WeakKeyDictionary()
)


def _empty_body_signer(client: TargetClient) -> httpx.Auth:
    """The client's own signer, digesting an empty body too (one per client)."""
    signer = _EMPTY_BODY_SIGNERS.get(client)
    if signer is None:
        signer = _EMPTY_BODY_SIGNERS[client] = client.make_signer(digest_empty_body=True)
    return signer


# --- mutations ----------------------------------------------------------------------------------


def apply_mutation(
    request: OperationRequest, mutation: Mutation, *, fresh_items: Sequence[Any] = ()
) -> OperationRequest:
    """``request`` with ``mutation`` applied (scenario.ACTIONS); the base is left unchanged.

    ``fresh_items`` serve a ``resize`` of an array whose items must be distinct (paymentIds:
    real, created ids): they are used in order before repeating the first item.
    """
    value = mutation.json_value
    name = str(mutation.pointer[0]) if mutation.pointer else ""
    if mutation.target == "header":
        return request.with_header(name, None if mutation.action == "remove" else str(value))
    if mutation.target == "query":
        if mutation.action == "remove":
            return request.with_query(name, None)
        return request.with_query(name, _query_text(value))
    if mutation.target == "path":
        return request.with_path_value(name, _query_text(value))
    body = copy.deepcopy(request.body)
    pointer = list(mutation.pointer)
    if mutation.action == "set-alone":
        return request.with_body(_alone(_mutate(body, pointer, "set", value, ()), pointer))
    return request.with_body(_mutate(body, pointer, mutation.action, value, fresh_items))


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _mutate(
    body: Any, pointer: list[str | int], action: str, value: Any, fresh: Sequence[Any]
) -> Any:
    if not pointer:
        return _at_target(body, action, value, fresh)
    *parents, last = pointer
    node = body
    for part in parents:
        node = _child(node, part, create=action == "set")
    if action == "remove":
        if isinstance(node, dict):
            node.pop(str(last), None)
        elif isinstance(node, list) and isinstance(last, int) and last < len(node):
            del node[last]
        return body
    if action == "set":
        if isinstance(node, list) and isinstance(last, int):
            while len(node) <= last:
                node.append(None)
            node[last] = value
        else:
            node[str(last)] = value
        return body
    current = (
        node[last] if isinstance(node, list) and isinstance(last, int) else node.get(str(last))
    )
    replaced = _at_target(current, action, value, fresh)
    if isinstance(node, list) and isinstance(last, int):
        node[last] = replaced
    else:
        node[str(last)] = replaced
    return body


def _alone(body: Any, pointer: list[str | int]) -> Any:
    """``body`` whose innermost array on ``pointer`` keeps only the item the pointer names."""
    indexed = [place for place, part in enumerate(pointer) if isinstance(part, int)]
    if not indexed:
        return body
    place = indexed[-1]
    index = pointer[place]
    assert isinstance(index, int)
    if place == 0:
        return [body[index]]
    parent = body
    for part in pointer[: place - 1]:
        parent = _child(parent, part, create=False)
    key = pointer[place - 1]
    if isinstance(parent, list) and isinstance(key, int):
        parent[key] = [parent[key][index]]
    else:
        parent[str(key)] = [parent[str(key)][index]]
    return body


def _child(node: Any, part: str | int, *, create: bool) -> Any:
    if isinstance(node, list):
        return node[int(part)]
    key = str(part)
    if key not in node or not isinstance(node[key], dict | list):
        if not create:
            raise KeyError(f"the base body has no {key!r} to change")
        node[key] = {}
    return node[key]


def _at_target(current: Any, action: str, value: Any, fresh: Sequence[Any]) -> Any:
    """``resize`` and ``duplicate`` act on the array itself; ``set`` replaces it."""
    if action == "set":
        return value
    if action == "remove":
        return None
    items = list(current) if isinstance(current, list) else []
    if action == "duplicate":
        return [*items, items[0]] if items else items
    size = int(value)
    if size <= len(items):
        return items[:size]
    pool = [item for item in fresh if item not in items]
    while len(items) < size:
        items.append(pool.pop(0) if pool else (items[0] if items else None))
    return items
