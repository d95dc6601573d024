"""Fixtures of the reference server tests: one server per session (port 0, in a thread), a cheap
per-test reset, a signed client whose every answer is checked against the contract, and the
server's logged exceptions re-raised in the test that caused them.

``server`` (session-scoped, the modules of ``CORE_MODULES``), ``app`` (its application, reset
before each test: store emptied, clock back to real time), ``client`` (a signed ``httpx.Client``:
a fresh X-Request-ID and a Digest on every request, every answer validated against the schema of
its operation and status, the server's self-check of its bodies), ``client_factory`` (other
signers and identities), ``full_server`` (session-scoped, every resource module) and ``world``
on it (the payment side), ``faulty_server(*faults)`` (a separate server with faults on) and
``make_client(url, contract, ...)``. Outside these fixtures
``reference_server.transport.http.start`` runs a server on port 0 in a thread (``server.url``,
``server.app``, ``server.stop()``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from conformance.contract import Contract, load_contract
from conformance.signing import SignatureAuth, TppIdentity, default_identity
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start

if TYPE_CHECKING:
    from server.payment_support import Psu, World

#: The resource modules these tests exercise (the core and the sandbox); the payment side's
#: modules are tested by their own tests, so that one half's work in progress cannot break the
#: other's. ``test_app.py`` builds the server with every module once.
CORE_MODULES = (
    "control",
    "sandbox_accounts",
    "sandbox_agreements",
    "sandbox_cards",
    "sandbox_customers",
    "sandbox_fill",
)


def core_app(**kwargs: Any) -> Application:
    return Application(modules=CORE_MODULES, **kwargs)


class ErrorCapture(logging.Handler):
    """Collects the server's ERROR log records (unhandled exceptions in handlers)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def drain(self) -> list[logging.LogRecord]:
        records, self.records = self.records, []
        return records


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="session")
def server_errors() -> Iterator[ErrorCapture]:
    capture = ErrorCapture()
    logger = logging.getLogger("reference_server")
    logger.addHandler(capture)
    yield capture
    logger.removeHandler(capture)


@pytest.fixture(scope="session")
def server(server_errors: ErrorCapture) -> Iterator[RunningServer]:
    running = start(core_app())
    yield running
    running.stop()


@pytest.fixture
def app(server: RunningServer, server_errors: ErrorCapture) -> Iterator[Application]:
    """The session server's application, reset before the test; a server-side exception logged
    during the test fails it with the server's traceback."""
    server.app.reset()
    server_errors.drain()
    yield server.app
    records = server_errors.drain()
    if records:
        formatter = logging.Formatter()
        details = "\n".join(formatter.format(record) for record in records)
        pytest.fail(f"the server logged an error during the test:\n{details}")


@pytest.fixture(scope="session")
def identity() -> TppIdentity:
    return default_identity()


def check_against_contract(contract: Contract, response: httpx.Response) -> None:
    """Every answer of a contract operation whose status the contract documents with a schema
    must validate against it (the server's debug self-check of its own bodies)."""
    request = response.request
    matched = contract.match(request.method, request.url.path)
    if matched is None:
        return
    operation, _ = matched
    documented = operation.responses.get(response.status_code)
    if documented is None:
        assert response.status_code >= 400, (
            f"{operation.id} answered {response.status_code}, which the contract does not list"
        )
        return
    response.read()
    if documented.schema is None or not response.content:
        return
    body = response.json()
    errors = list(contract.validator(documented.schema).iter_errors(body))
    assert not errors, (
        f"{operation.id} {response.status_code} body does not fit the contract: "
        + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    )


class FreshRequestId(httpx.Auth):
    """Wraps a signer: gives every request its own X-Request-ID (spec 4.2: unique per call)
    before it is signed, unless the test set one."""

    requires_request_body = True

    def __init__(self, signer: httpx.Auth) -> None:
        self.signer = signer

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if "x-request-id" not in request.headers:
            request.headers["X-Request-ID"] = str(uuid.uuid4())
        yield from self.signer.auth_flow(request)


def make_client(
    base_url: str,
    contract: Contract,
    *,
    auth: httpx.Auth | None = None,
    identity: TppIdentity | None = None,
    headers: dict[str, str] | None = None,
    checked: bool = True,
) -> httpx.Client:
    """A client that signs as ``identity`` (or with ``auth``) and, when ``checked``, checks
    every answer against the contract on arrival."""
    if auth is None:
        # Digest on every request, bodiless ones included: spec 4.2 requires it on E13 (a GET).
        auth = SignatureAuth(
            (identity or default_identity()).signing_credentials(), digest_empty_body=True
        )
    return httpx.Client(
        base_url=base_url,
        auth=FreshRequestId(auth),
        headers=headers or {},
        verify=False,  # plain HTTP on loopback; skips loading CA bundles (slow) per client
        event_hooks={
            "response": [lambda response: check_against_contract(contract, response)]
            if checked
            else []
        },
        timeout=10.0,
    )


@pytest.fixture(scope="session")
def session_client(server: RunningServer, contract: Contract) -> Iterator[httpx.Client]:
    with make_client(server.url, contract) as signed:
        yield signed


@pytest.fixture
def client(session_client: httpx.Client, app: Application) -> httpx.Client:
    """The signed client on a freshly reset server."""
    return session_client


@pytest.fixture
def client_factory(
    server: RunningServer, app: Application, contract: Contract
) -> Iterator[Callable[..., httpx.Client]]:
    """Clients with another signer or identity on the session server (closed after the test)."""
    made: list[httpx.Client] = []

    def factory(**kwargs: Any) -> httpx.Client:
        made.append(make_client(server.url, contract, **kwargs))
        return made[-1]

    yield factory
    for item in made:
        item.close()


@pytest.fixture
def faulty_server(
    contract: Contract,
) -> Iterator[Callable[..., tuple[RunningServer, httpx.Client]]]:
    """Start a server with faults switched on (stopped after the test) and a signed client."""
    started: list[tuple[RunningServer, httpx.Client]] = []

    def factory(*faults: str, **kwargs: Any) -> tuple[RunningServer, httpx.Client]:
        running = start(core_app(faults=faults))
        kwargs.setdefault("checked", False)
        started.append((running, make_client(running.url, contract, **kwargs)))
        return started[-1]

    yield factory
    for running, signed in started:
        signed.close()
        running.stop()


@pytest.fixture(scope="session")
def full_server() -> Iterator[RunningServer]:
    """A server with every resource module (the payment side's), once per session."""
    running = start(Application())
    yield running
    running.stop()


@pytest.fixture
def world(
    full_server: RunningServer, server_errors: ErrorCapture, contract: Contract
) -> Iterator[World]:
    """A payment world on the shared full server (``payment_support.World``): the tests of
    payments, baskets, consents and the SCA flow share it; a module may define its own."""
    from server import payment_support  # it imports this module: on use

    yield from payment_support.world_on(full_server, server_errors, contract)


@pytest.fixture
def psu(world: World) -> Psu:
    """A new sandbox PSU of that world (``payment_support.Psu``)."""
    return world.new_psu()
