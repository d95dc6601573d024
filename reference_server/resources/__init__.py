"""Resource modules: one per family of operations (and the reference-server-only controls).

Every module in this package whose name does not start with ``_`` is loaded by the application,
in name order; no registration elsewhere. A module declares what it serves with module-level
names:

- ``OPERATIONS: Mapping[str, Handler]``: contract operation id → handler, a function
  ``(Call) -> Response`` (``reference_server.api``);
- ``ROUTES: tuple[Route, ...]``: routes outside the contract (``/_control/...``, ``/sca/...``),
  unsigned and not validated by the contract; ``loopback_only=True`` (the default) refuses other
  callers with 403. There ``call.query`` holds the first raw value of each query parameter and
  ``call.body`` the parsed JSON body (a form post reads ``call.request.body`` itself);
- optionally ``on_request(app)`` (called before every contract operation) and ``on_reset(app)``
  (after ``/_control/reset``);
- optionally ``bank_routes(bank)``: routes of the bank a profile describes (``--profile``), such
  as its own read of a basket's status or its token endpoint.

An operation without a handler answers 501; two handlers for one id, or two routes with the same
method and path, fail at start-up. ``_common`` (the sandbox modules' lookups) is private to the
package.
"""

from __future__ import annotations

import pkgutil

__all__ = ["MODULES"]

#: Module names, discovered so that adding a resource module needs no edit elsewhere.
MODULES: tuple[str, ...] = tuple(
    sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
)
