"""The application: module discovery and declaration, dispatch without HTTP, validation helpers."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from reference_server.api import ApiError, Call, Headers, Request, Response, Route
from reference_server.app import Application
from reference_server.pipeline.validation import is_json_media_type
from reference_server.resources import MODULES
from server.conftest import CORE_MODULES

SANDBOX_OPERATIONS = {
    "E3", "E4", "E5", "E6", "E7", "E9", "E10", "E11", "E12", "E13", "E14", "E15",
    "SA", "SCA", "SCU", "SAG", "SDF", "SI",
}  # fmt: skip


def request(method: str, path: str, body: bytes = b"", **headers: str) -> Request:
    return Request(method, path, path, {}, Headers(headers.items()), body)


def test_core_modules_serve_every_sandbox_operation() -> None:
    app = Application(modules=CORE_MODULES)
    assert set(app.handlers) == SANDBOX_OPERATIONS
    assert app.router.allowed_methods("/_control/clock") == ("GET", "POST")


def test_every_module_is_discovered_and_loads_together() -> None:
    """The whole server (core, sandbox and payment side) starts: no clashing handlers or routes."""
    assert set(CORE_MODULES) <= set(MODULES)
    app = Application()
    assert set(app.handlers) >= SANDBOX_OPERATIONS


@pytest.fixture
def hook_module() -> Iterator[types.ModuleType]:
    """A resource module declared the documented way, injected for one test."""
    module = types.ModuleType("reference_server.resources._hooks_under_test")
    module.calls = []  # type: ignore[attr-defined]

    def echo(call: Call) -> Response:
        return Response.json(200, {"params": dict(call.path_params), "query": dict(call.query)})

    def refuse(call: Call) -> Response:
        raise ApiError(409, "CONFLICT", "no", path="x")

    module.OPERATIONS = {"SDF": refuse}  # type: ignore[attr-defined]
    module.ROUTES = (Route("GET", "/_test/{name}", echo, loopback_only=False),)  # type: ignore[attr-defined]
    module.on_request = lambda app: module.calls.append("request")  # type: ignore[attr-defined]
    module.on_reset = lambda app: module.calls.append("reset")  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_module_declarations_are_honoured(hook_module: types.ModuleType) -> None:
    app = Application(modules=("_hooks_under_test",))
    routed = app.dispatch(
        Request(
            "GET",
            "/_test/a%20b",
            "/_test/a%20b?q=1",
            {"q": ("1",)},
            Headers(),
            b"",
            ("10.0.0.1", 1),
        )
    )
    assert routed.status == 200
    assert routed.document == {"params": {"name": "a b"}, "query": {"q": "1"}}
    app.reset()
    assert hook_module.calls == ["reset"]
    refused = app.dispatch(request("POST", "/v1/sandbox/data-fill"))
    assert refused.status == 400  # authentication runs before the handler
    assert hook_module.calls == ["reset", "request"]


def test_two_handlers_for_one_operation_fail_at_start(hook_module: types.ModuleType) -> None:
    with pytest.raises(ValueError, match="SDF"):
        Application(modules=("_hooks_under_test", "sandbox_fill"))


def test_dispatch_never_raises_and_answers_json() -> None:
    app = Application(modules=CORE_MODULES)
    for method, path in (("GET", "/"), ("PATCH", "/v1/sandbox/customers"), ("GET", "/v1/payments")):
        response = app.dispatch(request(method, path))
        assert response.status in (404, 405)
        assert response.content_type == "application/json"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("application/json", True),
        ("application/json;charset=UTF-8", True),
        ('application/json; charset="utf-8"', True),
        ("application/vnd.api+json", True),
        ("application/json; charset=latin-1", False),
        ("text/json", False),
        ("text/plain", False),
        ("multipart/form-data", False),
    ],
)
def test_json_media_types(value: str, expected: bool) -> None:
    assert is_json_media_type(value) is expected
