"""``conformance discover``: a bank's profile drafted from what the bank answers (issue 31).

:func:`~conformance.discover.session.discover` probes the target with signed requests, each
decision group in a module of its own, in this order (a later one uses what an earlier one
found):

- :mod:`~conformance.discover.base_path`: where the interface answers (the preflight's probes,
  then shorter base URLs);
- :mod:`~conformance.discover.gateway`: headers a gateway demands that the contract does not
  list, read from its 4xx answers;
- :mod:`~conformance.discover.operations`: which operations exist (404 against 400/401/405) and
  whether the sandbox API is there;
- :mod:`~conformance.discover.products`: the NCBCT product identifier and the periodic service
  paths, from the candidates the platform's banks and NextGenPSD2 use;
- :mod:`~conformance.discover.sca`: where a payment's SCA starts and how it is done;
- :mod:`~conformance.discover.consent`: the consent model;
- :mod:`~conformance.discover.setup_fields`: the fields the sandbox creations require beyond the
  suite's, written as ``[setup] templates``;
- :mod:`~conformance.discover.header_sets`: the required header sets where the spec shows none.

Each decision is a :class:`~conformance.discover.evidence.Decision`: the profile key, the value
decided (or none, with the default and why), and the exchanges that decided it. The requests go
through :class:`~conformance.discover.probe.Prober` (the suite's signed client; a target that
does not answer is a line, not an error); :mod:`~conformance.discover.session` runs the groups,
each guarded, and cleans up. :mod:`~conformance.discover.draft` writes the decisions as a
profile with a comment on every key (TOML text: :mod:`~conformance.discover.toml_text`);
:mod:`~conformance.discover.check` lists where a profile says otherwise (``--check``), through
the one comparison of :mod:`~conformance.discover.keys`. What a probe made (a payment, a
consent) is taken away again by :mod:`conformance.bankside.cleanup`.
"""
