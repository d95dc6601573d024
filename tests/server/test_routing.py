"""The router of the reference-server-only routes: static paths first, templates, 405 data."""

from __future__ import annotations

import pytest

from reference_server.api import Call, Response, Route
from reference_server.pipeline.routing import Router, compile_template


def handler(call: Call) -> Response:
    return Response.empty()


def test_static_and_template_routes() -> None:
    router = Router(
        [
            Route("GET", "/sca/{authorisationId}", handler),
            Route("POST", "/sca/{authorisationId}", handler),
            Route("GET", "/sca/done", handler),
        ]
    )
    assert router.match("GET", "/sca/done").path_params == {}  # type: ignore[union-attr]
    found = router.match("post", "/sca/a%2Fb")
    assert found is not None and found.path_params == {"authorisationId": "a/b"}
    assert router.match("DELETE", "/sca/x") is None
    assert router.allowed_methods("/sca/x") == ("GET", "POST")
    assert router.allowed_methods("/sca/x/y") == ()


def test_duplicate_routes_are_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        Router([Route("GET", "/a", handler), Route("get", "/a", handler)])


def test_template_matches_one_segment_per_parameter() -> None:
    template = compile_template("/v1/{a}/x/{b}")
    assert template.match("/v1/1/x/2") == {"a": "1", "b": "2"}
    assert template.match("/v1/1/2/x/3") is None
    assert template.match("/v1/1/x/2/") is None
