"""The profile's hooks (``[hooks]``): commands the suite runs at the bank's side, where a rule can
only be judged once the bank did something the interface cannot ask for.

``batch``: the bank's batch processing run (spec 3: "The sandbox advances payments (except
periodic ones) through a simulated batch processing run five times a day"). The command triggers
a run, or waits until one has run, and exits 0 when it has; it gets ``batch_timeout`` seconds (the
deadline) and the target's URL in ``CONFORMANCE_TARGET``. A command that fails or overruns its
deadline blocks the scenario (set-up the bank did not complete), never passes it.
"""

from __future__ import annotations

import os
import shlex
import subprocess

from conformance.checks import SetUpFailure

__all__ = ["ENV_DEADLINE", "ENV_TARGET_URL", "run_batch_hook"]

#: The variables a hook finds in its environment.
ENV_TARGET_URL = "CONFORMANCE_TARGET"
ENV_DEADLINE = "CONFORMANCE_DEADLINE"


def run_batch_hook(command: tuple[str, ...], *, base_url: str, timeout: float) -> None:
    """Run the batch hook ``command`` and wait for it; :class:`SetUpFailure` (blocked) when it
    cannot be run, fails, or is still running after ``timeout`` seconds."""
    shown = shlex.join(command)
    environment = {
        **os.environ,
        ENV_TARGET_URL: base_url,
        ENV_DEADLINE: f"{timeout:g}",
    }
    try:
        finished = subprocess.run(
            list(command),
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise _refused(f"the batch hook {command[0]!r} was not found") from None
    except PermissionError:
        raise _refused(f"the batch hook {command[0]!r} is not executable") from None
    except subprocess.TimeoutExpired:
        raise _refused(f"the batch hook {shown} did not finish within {timeout:g} s") from None
    if finished.returncode != 0:
        detail = (finished.stderr or finished.stdout).strip().splitlines()[-1:] or [""]
        raise _refused(
            f"the batch hook {shown} failed with exit code {finished.returncode}: {detail[0]}"
        )


def _refused(what: str) -> SetUpFailure:
    return SetUpFailure(
        f"Set-up failed: {what}",
        spec="spec 3",
        sent=None,
        expected="the profile's [hooks] batch runs the bank's batch processing and exits 0",
    )
