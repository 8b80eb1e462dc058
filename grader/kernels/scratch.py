"""Folders named after the process that made them, and the removal of those a dead process left.

A grading process makes folders of its own in the temporary folder: each sandbox's private folder
(grader/kernels/sandbox.py), a worker's private course folder (grader/pipeline/worker.py), the
quick path's folder for its judges (grader/judging/quick.py). A process killed with SIGKILL runs
no cleanup, so each such folder is named `prefix-<pid>-<start time>-…` after the process that
made it (`process_folder`): the next run can tell what a dead process left (`orphaned`) from what
a live one, another grader's included, still uses, and removes only the former (`remove_orphaned`;
a sandbox's mounts and cgroups need more: `sandbox.reap_orphans`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def process_tag(pid: int | None = None) -> str | None:
    """`pid-starttime` of a live process (its start in clock ticks since boot: a reused pid gets
    another), this one by default; None when no process has that pid. Folders a process leaves
    in the temporary folder carry it, so that what a killed process left can be told apart."""
    pid = os.getpid() if pid is None else pid
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return f"{pid}-{stat.rpartition(')')[2].split()[19]}"


def process_folder(prefix: str) -> Path:
    """A new folder `prefix-<this process's tag>-…` in the temporary folder (see `orphaned`)."""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-{process_tag()}-"))


def orphaned(prefix: str) -> list[Path]:
    """The folders `prefix-<process tag>-…` in the temporary folder whose process no longer
    exists, and that this user may remove (root: every one)."""
    found = []
    for folder in sorted(Path(tempfile.gettempdir()).glob(f"{prefix}-*-*-*")):
        pid, start = folder.name.removeprefix(prefix + "-").split("-")[:2]
        if not (pid.isdigit() and start.isdigit()) or process_tag(int(pid)) == f"{pid}-{start}":
            continue
        if os.geteuid() == 0 or folder.stat().st_uid == os.geteuid():
            found.append(folder)
    return found


def remove_orphaned(prefix: str) -> list[Path]:
    """Remove the `orphaned` folders of `prefix` (killed processes run no cleanup); returns them."""
    reaped = orphaned(prefix)
    for folder in reaped:
        shutil.rmtree(folder, ignore_errors=True)
    return reaped
