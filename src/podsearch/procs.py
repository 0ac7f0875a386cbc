"""Child processes that do not outlive the process that forked them.

Whoosh's multi-process index writer forks workers that wait on a queue for work from the parent. If the
parent is killed (``kill -9``, the OOM killer), nothing ever arrives: the workers wait forever, orphaned.
After :func:`bind_children_to_me`, every child this process forks is killed when the process dies: on
Linux the kernel sends it SIGKILL (``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread in the child checks
every half second whether its parent is still there.

The kernel's signal is tied to the *thread* that forked: Whoosh forks from the thread that writes the
index, which is the only thread when it forks (see ``engines/whoosh``'s ``_bulk_writer``).
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
POLL_SECONDS = 0.5

_registered = False
_guard = threading.Lock()
_forking_pid = 0  # set in the parent just before each fork; the child reads its copy
_prctl: object = None  # libc's prctl, looked up in the parent (nothing is loaded in a freshly forked child)


def bind_children_to_me() -> None:
    """From now on, children forked by this process die with it (idempotent)."""
    global _registered, _prctl
    with _guard:
        if not _registered:
            _prctl = _find_prctl()
            os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
            _registered = True


def _before_fork() -> None:
    global _forking_pid
    _forking_pid = os.getpid()


def _after_fork_in_child() -> None:
    parent = _forking_pid
    if not _die_with_parent():
        threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()
    # The parent may have died between the fork and the line above: then no signal will come.
    if os.getppid() != parent:
        os._exit(1)


def _find_prctl() -> object:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        log.info("prctl is not available: forked children watch for their parent instead")
        return None


def _die_with_parent() -> bool:
    """Ask the kernel for SIGKILL when the parent dies; False where that is not available."""
    if _prctl is None:
        return False
    return _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0  # type: ignore[operator]


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)
