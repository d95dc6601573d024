"""The sealed record of a run (``conformance run --seal``) and its check (``conformance verify``).

``conformance run --seal CERT --seal-key KEY`` keeps every exchange of the run, masked
(:mod:`conformance.report.exchange_record`), and at its end :mod:`~conformance.evidence.record`
writes ``<reports>/evidence/``: ``compliance.json``, the exchanges, the profile, ``verdicts.json``
(each scenario's verdict, and the traffic judge's verdict on each exchange:
:mod:`~conformance.evidence.rejudge`), and ``manifest.json``, which names the digest of every one
of those files, the suite and spec versions, the contract's digest and the previous record's
digest; :mod:`~conformance.evidence.sealing` signs the manifest with a detached JWS whose header
carries the certificate chain (``seal.jws``). :mod:`~conformance.evidence.verify` checks all of it
again.
"""
