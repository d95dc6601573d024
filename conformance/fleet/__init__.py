"""Many banks at once (``conformance fleet``): the platform's view of one code base serving many
banks, each with its own profile.

``outcome`` is the record a bank's run leaves beside its reports (``fleet-run.json``: how the
run ended, and why when it gave no verdict); ``run`` runs each bank's ``conformance run`` in its
own process group, a few at a time, each under a deadline; ``collect`` finds the runs under any
folders (a local fleet, a CI matrix's artefacts, a Kubernetes volume); ``merge`` puts them side
by side and over time (the matrix of banks × causes, each cause platform or bank, what is new,
fixed and persisting per bank); ``trend`` draws the trend pictures (SVG by hand); ``render``
writes the fleet report (``fleet.json``, ``fleet.md``, ``fleet.html``).
"""
