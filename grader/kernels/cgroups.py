"""A kernel's cgroups (v1 or v2): where the pids and memory controllers are mounted, the files
that set a cap, and removing a group once its processes are gone. The `Box` of
grader/kernels/sandbox.py makes one group per kernel with these."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path


def hierarchies() -> dict[str, tuple[Path, int]]:
    """{controller: (hierarchy root, cgroup version)} for the pids and memory controllers mounted here."""
    found = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, where, kind, options = line.split()[:4]
        if kind == "cgroup":
            offered = options.split(",")
        elif kind == "cgroup2":
            try:
                offered = (Path(where) / "cgroup.controllers").read_text().split()
            except OSError:
                continue
        else:
            continue
        # A controller serves one hierarchy: bound to a v1 one, v2's cgroup.controllers omits it.
        for controller in ("pids", "memory"):
            if controller in offered:
                found.setdefault(controller, (Path(where), 1 if kind == "cgroup" else 2))
    return found


def limit_files(controller: str, version: int, value: int) -> list[tuple[str, str]]:
    """The files that set a cap: the first is the cap itself, the rest are extras some kernels lack."""
    if controller == "pids":
        return [("pids.max", str(value))]
    if version == 1:
        return [("memory.limit_in_bytes", str(value)), ("memory.memsw.limit_in_bytes", str(value))]
    # v2: no swap either, and running out of memory kills the whole kernel, not one thread.
    return [("memory.max", str(value)), ("memory.swap.max", "0"), ("memory.oom.group", "1")]


def remove(group: Path, wait: float = 30) -> None:
    """Remove a kernel's cgroup once it is empty, killing whatever is still in it. Usually the
    kernel's PID namespace has done that already, but a thousand dying forks take seconds."""
    deadline, killed = time.monotonic() + wait, 0.0
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # EBUSY: processes are still leaving
            if time.monotonic() > deadline:
                print(f"sandbox: could not remove cgroup {group}", file=sys.stderr)
                return
        if time.monotonic() - killed > 1:  # not every round: killing a thousand pids is work too
            killed = time.monotonic()
            for pid in _read(group / "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.05)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
