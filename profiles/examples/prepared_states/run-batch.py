#!/usr/bin/env python3
"""The batch hook of prepared-states.toml: runs the bank's batch processing (spec 3) and exits 0
when it has run. Here the bank is the reference server playing the profile, whose
``POST /_control/batch`` runs one batch now; a real bank's hook would call its own trigger, or
wait until its next scheduled run has passed (within ``CONFORMANCE_DEADLINE`` seconds).

The suite gives the target's URL in ``CONFORMANCE_TARGET``.
"""

import os
import sys
import urllib.request

target = os.environ["CONFORMANCE_TARGET"].rstrip("/")
request = urllib.request.Request(f"{target}/_control/batch", data=b"{}", method="POST")
request.add_header("Content-Type", "application/json")
deadline = float(os.environ.get("CONFORMANCE_DEADLINE", "60"))
with urllib.request.urlopen(request, timeout=deadline) as answer:
    sys.exit(0 if answer.status == 200 else 1)
