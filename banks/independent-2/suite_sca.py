#!/usr/bin/env python3
"""The suite's [sca] command for this bank, written with its profile (not part of the bank): runs
the bank's own sca_complete.py on the link, as the PSU CONFORMANCE_SCA_CUSTOMER_NUMBER names,
denying when CONFORMANCE_SCA_ACTION is "cancel", and prints where the bank sends the PSU back.
It exits 0 when the SCA ended as asked (FINALISED, or FAILED for a denial)."""
import os
import subprocess
import sys
from pathlib import Path

deny = os.environ.get("CONFORMANCE_SCA_ACTION") == "cancel"
command = [sys.executable, str(Path(__file__).with_name("sca_complete.py")), sys.argv[-1]]
command.append(os.environ.get("CONFORMANCE_SCA_CUSTOMER_NUMBER", ""))
if deny:
    command.append("--deny")
done = subprocess.run(command, capture_output=True, text=True)
words = done.stdout.split()
outcome, back = (words[0], words[-1]) if len(words) >= 2 else ("", "")
if outcome != ("FAILED" if deny else "FINALISED"):
    sys.exit(f"the SCA ended {done.stdout.strip() or done.stderr.strip() or 'without an answer'}")
print(back)
