"""What the application does to every request before a handler sees it: routing (``routing``),
authentication of the TPP and PSU (``auth``, spec 4.2 and 5), the checks of the TPP's
certificates banks make beyond spec 5 (``certificates``: revocation, type, the QWAC's roles and
its pairing with the seal), validation against the contract (``validation``), the spec 7 error
bodies (``errors``), object-level ownership (``ownership``) and the bearer token of a profile's
``[oauth]`` (``tokens``).

The modules are independent of one another; each builds on ``reference_server.api`` and the
model. The application (``reference_server.app``) runs them in order; services and handlers use
the validation and ownership helpers.
"""
