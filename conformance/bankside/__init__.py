"""The bank side of a run: what talks to the target under test.

``client`` is the signed httpx client that records every exchange, with ``retry`` (429/503 waited
out with Retry-After, requests paced to the profile's ``rate_limit``), ``tls`` (the trusted CAs,
the client certificate of mutual TLS, another QWAC for ``TargetClient.over_tls_as``) and
``oauth`` (the bearer token of ``[oauth]``, refreshed when an answer refuses it); ``request`` is
an operation's request and its mutations; ``sca/`` the SCA step, one module per strategy;
``setup_data/`` the data a scenario needs, created on the target (or the states the profile's
``[prepared]`` names); ``hooks`` the profile's ``[hooks]`` (the bank's batch run); ``bundled``
the bundled reference server with the run's identities (and ``ReplayServer``, what ``conformance
serve`` needs for the replays); ``preflight`` the probe before a run (a wrong base path found
with the base URL that answers; the answer times); ``concurrency`` the workers and scenarios in
flight, chosen by where the target is.

(Not called ``target/``: build tools and many global git excludes treat a folder of that name as
build output, so a new module there could silently stay out of a commit.)
"""
