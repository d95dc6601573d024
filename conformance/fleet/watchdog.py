"""A bank's run that outlives its fleet runner stops itself (security-5.md L4).

Each bank's ``conformance run`` is started in a process group of its own (so that its deadline
stops it whole, with the bundled server it may start), and so out of reach of whatever stops the
runner: after ``kill -9`` of the runner it would go on with no deadline. The runner therefore
names itself to the child in :data:`PARENT_ENV`; the child's run reads it (and takes it out of
its environment, so that its own children do not read it) and watches its parent: once it is
gone (the child re-parented), the child's whole process group gets SIGTERM (the run then stops
as interrupted, its bundled server with it), and SIGKILL after a grace period.

Polling the parent's pid was chosen over ``PR_SET_PDEATHSIG``: that is Linux-only (through
``ctypes``), and it fires when the parent *thread* ends, which the runner's pool of threads does
whenever a worker thread is retired. A pidfile the next fleet run cleans up would leave the
orphan running until then.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import MutableMapping

__all__ = ["PARENT_ENV", "POLL_SECONDS", "watch_parent"]

#: The environment variable in which the fleet runner gives a bank's run its pid.
PARENT_ENV = "CONFORMANCE_FLEET_PARENT"
#: Seconds between two looks at the parent.
POLL_SECONDS = 1.0
#: Seconds between the SIGTERM to the orphaned group and the SIGKILL.
GRACE_SECONDS = 10.0


def watch_parent(
    environ: MutableMapping[str, str] | None = None,
    *,
    poll: float = POLL_SECONDS,
    grace: float = GRACE_SECONDS,
) -> threading.Thread | None:
    """Watch the fleet runner :data:`PARENT_ENV` names (taken out of ``environ``) in a daemon
    thread; None when no runner is named (a run not started by the fleet)."""
    environ = os.environ if environ is None else environ
    named = environ.pop(PARENT_ENV, None)
    if named is None or not named.strip().isdecimal():
        return None
    parent = int(named)
    thread = threading.Thread(
        target=_watch, args=(parent, poll, grace), name="conformance-fleet-watchdog", daemon=True
    )
    thread.start()
    return thread


def _watch(parent: int, poll: float, grace: float) -> None:
    while os.getppid() == parent:
        time.sleep(poll)
    # our own group only when we lead it (the fleet starts each run in a session of its own);
    # else this process alone, never a group we happen to share with a shell
    leader = os.getpgrp() == os.getpid()
    for stop in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if leader:
                os.killpg(os.getpgrp(), stop)
            else:
                os.kill(os.getpid(), stop)
        time.sleep(grace)
