"""Judging live or recorded traffic between a TPP's app and a bank: every exchange checked as it
passes (the request against spec 4.2, spec 5 and the body's schema and cross-field rules; the
answer against the statuses, schemas and spec 7 rules of its operation; what the state of earlier
exchanges allows), each finding blamed on the side that broke the rule and graded must or should
as in a run.

``judge`` holds the :class:`~conformance.traffic.judge.TrafficJudge`; ``proxy`` the reverse proxy
of ``conformance proxy``; ``har`` and ``exchange_log`` read recorded traffic for
``conformance judge``; ``reports`` writes a run's reports of the judged exchanges.
"""

from conformance.traffic.model import BANK, TPP, JudgedExchange

__all__ = ["BANK", "TPP", "JudgedExchange"]
