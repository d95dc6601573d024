#!/usr/bin/env python3
"""The suite's [sca] command for this bank, written with its profile (not part of the bank): runs
the bank's own sca_complete.py on the link, as the PSU CONFORMANCE_SCA_CUSTOMER_NUMBER names,
denying when CONFORMANCE_SCA_ACTION is "cancel"."""
import os
import subprocess
import sys
from pathlib import Path

command = [sys.executable, str(Path(__file__).with_name("sca_complete.py")), sys.argv[-1]]
if os.environ.get("CONFORMANCE_SCA_CUSTOMER_NUMBER"):
    command += ["--customer-number", os.environ["CONFORMANCE_SCA_CUSTOMER_NUMBER"]]
if os.environ.get("CONFORMANCE_SCA_ACTION") == "cancel":
    command.append("--deny")
sys.exit(subprocess.call(command))
