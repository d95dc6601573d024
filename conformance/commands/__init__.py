"""Sub-commands of the ``conformance`` CLI, one module each (see :mod:`conformance.cli`)."""
