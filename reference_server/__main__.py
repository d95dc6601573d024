"""``python -m reference_server``: run the reference server (see :mod:`reference_server.cli`)."""

import sys

from reference_server.cli import main

sys.exit(main())
