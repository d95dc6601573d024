"""The header by which the self-check tags each request with the scenario that sent it.

Not part of the interface under test. Only the self-check's recording run uses it: the suite
sends it when tracing is on (``conformance.bankside.trace``), and the reference server started
with ``--switch-trace`` reads it, removes it before anything else sees the request, and records
which fault switches that request reached (``reference_server.faults.trace``). It is here, in
one of the two kernels both trees import, so that both read the one name.
"""

from __future__ import annotations

__all__ = ["SETUP_TAG_PREFIX", "TRACE_HEADER"]

#: The request header that carries the tag: a scenario id, or ``setup:<key>`` for a request
#: made while the worker's shared set-up data ``key`` was made.
TRACE_HEADER = "X-Conformance-Trace"
#: The prefix of a tag that names shared set-up data rather than a scenario.
SETUP_TAG_PREFIX = "setup:"
