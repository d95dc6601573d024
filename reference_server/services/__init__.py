"""Behaviour that handlers share and that outlives one request: the SCA flow (``sca_flow``), the
simulated batch runs of payments (``payment_batch``), what a consent gives access to
(``consent_access``), a private customer's agreement (``private_engagement``), the data a
production-like bank already holds (``existing_data``) and the states its profile names in
``[prepared]`` (``prepared_states``).

Services sit below the resource handlers and above the request pipeline; they read and write
the model, never a socket, and import no handler module.
"""
