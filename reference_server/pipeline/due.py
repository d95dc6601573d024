"""The reference server's answer to a broken requirement, read from the requirement's
:class:`~conformance.contract.requirements.AnswerDue` (``Contract.requirement``): the one place
where the server turns "this request breaks requirement R" into a status and a code, so that it
answers what the scenarios and the traffic judge hold a bank to (issue 39: a requirement is a
value).

- The status is the server's own choice where the requirement allows several (the spec states
  that the request is refused, not with which status: ``assumptions.md``), and the first status
  due otherwise. A choice outside what is due is a server bug; :func:`refuse` answers what is due
  instead, and ``tests/server/test_answers_due.py`` finds every such choice.
- The code is the one due where the requirement names one (a ``rules.json`` row's
  ``expectedCode``, E2's ``RESOURCE_UNKNOWN``), else the server's choice.
- A fault (``reference_server/faults``) that plays a wrong answer says so with ``fault_status``:
  the only way a refusal leaves what is due.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from conformance.contract.catalogue import UNKNOWN_ID
from reference_server.api import ApiError, TppMessage

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from conformance.contract import Contract, Operation
    from conformance.contract.requirements import AnswerDue

__all__ = ["answer", "due", "refuse", "unknown_id"]

#: The status the server answers a refusal with when the requirement leaves any 4xx open.
_ANY_REFUSAL = 400


def due(
    contract: Contract, requirement: str, operation: Operation | str | None, place: str = ""
) -> AnswerDue:
    """The answer ``requirement`` makes due on ``operation`` (its id, or None for one judged on
    every operation) at ``place`` (a header's name); ``KeyError`` or ``LookupError`` when the
    contract has no such requirement or it makes no answer due (a flow)."""
    operation_id = operation if isinstance(operation, str) else getattr(operation, "id", "")
    return contract.requirement(requirement, operation_id or "", place).expected


def answer(answer_due: AnswerDue, status: int | None, code: str) -> tuple[int, str]:
    """The status and code the server answers when ``answer_due`` is due: ``status`` (its
    choice) where it is due, else the first status due; the code due where one is named, else
    ``code``."""
    statuses = answer_due.statuses
    if status is None or (statuses and status not in statuses):
        status = statuses[0] if statuses else _ANY_REFUSAL
    return status, answer_due.code or code


def refuse(
    answer_due: AnswerDue,
    message: str,
    *,
    code: str,
    status: int | None = None,
    path: str | None = None,
    tpp_code: str | None = None,
    messages: Iterable[TppMessage] = (),
    headers: Iterable[tuple[str, str]] = (),
    links: Mapping[str, Any] | None = None,
    fault_status: int | None = None,
) -> ApiError:
    """The :class:`ApiError` answering a request that broke a requirement whose answer due is
    ``answer_due`` (:func:`due`): the status and code :func:`answer` makes of it, ``status``
    and ``code`` being the server's choices where the requirement leaves one; ``fault_status``,
    when a fault plays a wrong answer, replaces the status."""
    chosen_status, chosen_code = answer(answer_due, status, code)
    if fault_status is not None:
        chosen_status = fault_status
    return ApiError(
        chosen_status,
        chosen_code,
        message,
        path=path,
        tpp_code=tpp_code,
        messages=messages,
        headers=headers,
        links=links,
    )


def unknown_id(
    contract: Contract,
    operation: Operation | str | None,
    message: str,
    *,
    code: str = "RESOURCE_UNKNOWN",
    path: str | None = None,
) -> ApiError:
    """404 for an id in the path that names no resource this caller may see
    (``ROB-unknown-id``: 404 on every operation, E2's stated ``RESOURCE_UNKNOWN``)."""
    return refuse(due(contract, UNKNOWN_ID, operation), message, code=code, status=404, path=path)
