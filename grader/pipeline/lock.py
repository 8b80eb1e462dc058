"""One run at a time writes an OUT_DIR (#52 item 6: the double start).

Two grading runs started on the same class and OUT_DIR both graded everything and both wrote the
gradebook, grades.csv and the report. Now a run holds OUT_DIR/.grading.lock from before its first
write to after its last (`held`), and a second run, or `grader report` on the same folder, stops at
once with one line: who holds it, since when, and what to do. It stops rather than waits: the first
run may take an hour and the second would then only find every submission unchanged; a terminal
that waits silently looks hung. Its exit code is 75 (EX_TEMPFAIL, sysexits.h: try again later).

The lock is the kernel's (flock): a run that dies, even killed outright, releases it, so no stale
lock is ever left to remove by hand. The file itself only says who holds it.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import socket
from pathlib import Path

from grader.i18n import _

LOCK = ".grading.lock"  # in OUT_DIR
EXIT_BUSY = 75  # EX_TEMPFAIL


class Busy(Exception):
    """Another run holds OUT_DIR: one line for the instructor, exit code EXIT_BUSY."""


@contextlib.contextmanager
def held(out: Path, command: str = "grade"):
    """Hold OUT_DIR (made if missing) for this process, or raise Busy with who holds it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by child processes
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or _("another process")
            raise Busy(
                _("another run is writing {out} ({holder}); wait for it to finish, then run this again").format(
                    out=out, holder=holder
                )
            ) from None
        since = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
        holder = _("grader {command}, pid {pid} on {host}, since {since}").format(
            command=command, pid=os.getpid(), host=socket.gethostname(), since=since
        )
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
