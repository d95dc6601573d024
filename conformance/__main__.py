"""``python -m conformance`` is the same as the ``conformance`` console script."""

import sys

from conformance.cli import main

sys.exit(main())
