"""What a benchmark run costs: wall seconds and CPU core-seconds, counted for this process tree
through a cgroup of its own when one can be written (`cpuacct`, v1, or the unified hierarchy,
v2; every process it starts inherits it), else the whole machine's busy time from /proc/stat."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path


class CpuAccount:
    """CPU seconds of this process and every process it starts from now on, through a cgroup of
    its own; `None` from `open()` when no cgroup can be written here."""

    def __init__(self, group: Path, usage):
        self.group, self._usage = group, usage

    @classmethod
    def open(cls) -> CpuAccount | None:
        v1 = Path("/sys/fs/cgroup/cpuacct")
        v2 = Path("/sys/fs/cgroup")
        candidates = []
        if (v1 / "cpuacct.usage").exists():
            candidates.append((v1, lambda g: int((g / "cpuacct.usage").read_text()) / 1e9))
        if (v2 / "cgroup.controllers").exists():
            candidates.append((v2, cls._v2_usage))
        for root, usage in candidates:
            group = root / f"ch04-bench-{os.getpid()}"
            try:
                group.mkdir(exist_ok=True)
                (group / "cgroup.procs").write_text(str(os.getpid()))
                return cls(group, usage)
            except OSError:
                with contextlib.suppress(OSError):
                    group.rmdir()
        return None

    @staticmethod
    def _v2_usage(group: Path) -> float:
        stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6

    def seconds(self) -> float:
        return self._usage(self.group)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            (self.group.parent / "cgroup.procs").write_text(str(os.getpid()))
            self.group.rmdir()


_account: CpuAccount | None = None  # while a benchmark runs: its cgroup, when one could be made


def start() -> str:
    """Count this process tree from now on, if a cgroup can be made; says what is counted."""
    global _account
    _account = CpuAccount.open()
    return "this process tree (its cgroup)" if _account else "the whole machine (/proc/stat: others count too)"


def stop() -> None:
    global _account
    if _account is not None:
        _account.close()
        _account = None


def cpu_seconds() -> float:
    """This process tree's CPU seconds (its cgroup), or the whole machine's busy seconds."""
    return _account.seconds() if _account is not None else busy_seconds()


def busy_seconds() -> float:
    """Core-seconds this machine has spent busy since boot (every process, every core)."""
    with open("/proc/stat") as stat:
        ticks = [int(t) for t in stat.readline().split()[1:]]
    idle, iowait = ticks[3], ticks[4]
    return (sum(ticks) - idle - iowait) / os.sysconf("SC_CLK_TCK")


def measured(run) -> tuple[float, float]:
    """(wall seconds, CPU core-seconds: this process tree's, or the machine's) of calling run()."""
    wall, busy = time.perf_counter(), cpu_seconds()
    run()
    return time.perf_counter() - wall, cpu_seconds() - busy
