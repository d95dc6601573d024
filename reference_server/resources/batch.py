"""The simulated batch processing (spec 3, spec 9 1.16.0) as the server's hooks and a control.

- before every contract operation, the batch catches up with the server clock
  (:func:`reference_server.services.payment_batch.catch_up`): every run of ``BATCH_RUN_TIMES``
  that fell due since the last request is executed, so ``POST /_control/clock {"advance":
  "P1D"}`` means five runs at the next request;
- ``POST /_control/batch`` (reference-server only, loopback, unsigned) runs one batch now and
  answers ``{"ranAt", "moved": [{"paymentId", "from", "to"}]}``.
"""

from __future__ import annotations

from reference_server.api import Call, Response, Route, ServerState
from reference_server.services.payment_batch import catch_up, run_batch

__all__ = ["ROUTES", "on_request", "run_now"]


def on_request(app: ServerState) -> None:
    """Catch up with the runs that fell due since the last contract request."""
    catch_up(app)


def run_now(call: Call) -> Response:
    """``POST /_control/batch``: the runs that fell due first, then one extra run now."""
    catch_up(call.app)
    moment = call.app.clock.now()
    moves = run_batch(call.app, moment)
    return Response.json(
        200,
        {
            "ranAt": moment.isoformat(),
            "moved": [
                {"paymentId": payment_id, "from": old, "to": new} for payment_id, old, new in moves
            ],
        },
    )


ROUTES = (Route("POST", "/_control/batch", run_now),)
