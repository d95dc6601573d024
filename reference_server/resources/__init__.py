"""Resource modules: one per family of operations (and the reference-server-only controls).

Every module in this package whose name does not start with ``_`` is loaded by the application,
in name order. A module declares what it serves with module-level constants (see
``ARCHITECTURE.md`` "How a resource module declares its handlers"):

- ``OPERATIONS: Mapping[str, Handler]``: contract operation id → handler;
- ``ROUTES: tuple[Route, ...]``: routes outside the contract (``/_control/...``, ``/sca/...``);
- optionally ``on_request(app)`` (called before every contract operation) and ``on_reset(app)``;
- optionally ``bank_routes(bank)``: routes of the bank a profile describes (``--profile``), such
  as its own read of a basket's status.
"""

from __future__ import annotations

import pkgutil

__all__ = ["MODULES"]

#: Module names, discovered so that adding a resource module needs no edit elsewhere.
MODULES: tuple[str, ...] = tuple(
    sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
)
