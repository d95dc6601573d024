"""``conformance discover``: a bank's profile drafted from what the bank answers (issue 31).

:func:`~conformance.discover.session.discover` probes the target with signed requests, each
decision group in a module of its own, in this order (a later one uses what an earlier one
found):

- :mod:`~conformance.discover.base_path`: where the interface answers (the preflight's probes,
  then shorter base URLs);
- :mod:`~conformance.discover.gateway`: headers a gateway demands that the contract does not
  list, read from its 4xx answers;
- :mod:`~conformance.discover.operations`: which operations exist, from agreeing evidence (a 2xx
  or a refusal about the request against 404/405/501 for the path), and whether the sandbox API
  is there;
- :mod:`~conformance.discover.products`: the NCBCT product identifier and the periodic service
  paths, from the candidates the platform's banks and NextGenPSD2 use;
- :mod:`~conformance.discover.sca`: where a payment's SCA starts and how it is done;
- :mod:`~conformance.discover.consent`: the consent model;
- :mod:`~conformance.discover.setup_fields`: the fields the sandbox creations require beyond the
  suite's, written as ``[setup] templates`` (each refusal naming one teaches it);
- :mod:`~conformance.discover.header_sets`: the required header sets where the spec shows none;
- :mod:`~conformance.discover.query_names`: the bank's names of AT's date parameters
  (``[query.AT]``).

Every probe carries the full header set of its operation (the suite's own request building,
``also_sent`` included), and a refusal that names a header the probe did not carry teaches it:
the prober sends it and asks again (:mod:`~conformance.discover.refusals`, which also tells a
refusal of the TPP itself, which stops discovery, from an answer about the request). What the
answers show that breaks a stated rule is a finding of the draft, never a key
(:mod:`~conformance.discover.breaks`).

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
