"""Kernels for `make check`, forked from a process that has already imported ipykernel and JAX.

A cold kernel spends about a second of CPU starting Python and importing ipykernel and JAX, for
every notebook. `python -m ch4validate` starts one fork server instead, which imports them once
and forks a child per kernel; the child then runs ipykernel exactly as `python -m
ipykernel_launcher` would. There is nothing to protect here (these kernels run the student's own
code for the student), so unlike the grader's fork server (grader/kernels/forkserver.py) there is no
sandbox: only the start-up is shared, and a forked kernel computes what a cold one computes.

Linux only (pidfd); elsewhere ch4validate starts kernels the usual way.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import threading
import traceback
import uuid
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

# What every kernel imports, once, in the server. Besides the libraries, what JAX imports the first
# time a process needs it: the MHLO dialect (any MLIR context: exporting, reading a program) and
# SciPy's Cython BLAS and LAPACK, where JAX's CPU LAPACK kernels take their routines from (lowering a
# call of an exported program, as every checked kernel and judge does, or any linear algebra):
# 0.1-0.15 s of CPU in each process.
PRELOAD = ("ipykernel.kernelapp", "ipykernel.ipkernel", "jax", "jax.numpy", "numpy", "jaxlib.mlir.dialects.mhlo",
           "scipy.linalg.cython_blas", "scipy.linalg.cython_lapack")  # fmt: skip
PRELOAD_ENV: dict[str, str] = {}  # what importing them set in the environment (JAX sets a few variables)


def serve() -> None:
    """Fork a kernel per request line ({"argv", "env", "cwd"}) until the pipe closes."""
    serve_forks(_run_kernel)


def serve_forks(start_child, preload=PRELOAD, receive=None, warm=None) -> None:
    """The fork server's loop (also grader/kernels/forkserver.py's): import `preload` once, then for each
    request line fork a child that runs `start_child(request)` and reply with its pid.
    `receive(request)`, when given, adds what else arrives with a request (file descriptors in
    request["fds"], which the server closes once the child has them). `warm()`, when given, runs
    once after the imports: work every child would otherwise repeat."""
    before = dict(os.environ)
    for name in preload:
        importlib.import_module(name)
    PRELOAD_ENV.update({k: v for k, v in os.environ.items() if before.get(k) != v})
    if warm is not None:
        warm()
    requests, replies = os.fdopen(0, "rb", buffering=0), os.fdopen(1, "wb", buffering=0)
    replies.write(b"ready\n")
    for line in lines(requests):
        reap()  # the client opened a pidfd for every earlier child before sending this request
        request = json.loads(line)
        if receive is not None:
            receive(request)
        child = os.fork()
        if child == 0:
            try:
                start_child(request)
            except BaseException:
                traceback.print_exc()  # to the client's stderr
            finally:
                os._exit(127)
        for fd in request.get("fds", ()):
            os.close(fd)
        replies.write(json.dumps({"pid": child}).encode() + b"\n")


def lines(stream):
    """The lines of an unbuffered binary stream, without their newline."""
    buffer = b""
    while chunk := stream.read(65536):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line


def reap() -> None:
    """Collect every child that has ended, without waiting."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _run_kernel(request: dict) -> None:
    server = os.getppid()
    _die_with_parent()  # a check stopped by Ctrl+C leaves no kernel behind, busy or not
    if os.getppid() != server:
        os._exit(0)  # the server is already gone
    os.setsid()  # its own process group, as jupyter_client gives a cold kernel: interrupts reach it alone
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # the server's stdout is its reply pipe; the student reads verdicts, not kernel notes
    os.dup2(null, 2)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"], PWD=request["cwd"])
    import numpy

    numpy.random.seed()  # the legacy global generator was seeded once, in the server
    launcher = Path(importlib.util.find_spec("ipykernel_launcher").origin)
    sys.argv = [str(launcher), *request["argv"]]
    sys.path[0] = ""  # what `python -m` gives a cold kernel; the launcher removes it, IPython adds the cwd
    import runpy

    runpy.run_path(str(launcher), run_name="__main__")
    os._exit(0)


def _die_with_parent() -> None:
    """SIGKILL this process when its parent, the fork server, ends (Linux's PR_SET_PDEATHSIG). The
    server ends when its pipe closes: when ch4validate and its workers have ended, however."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


class ForkServer:
    """This process's fork server, started on first use and again if it died. Started before
    ch4validate forks its workers, one server serves them all (the lock is shared with them)."""

    _lock = multiprocessing.get_context("fork").Lock() if sys.platform == "linux" else threading.Lock()
    _process: subprocess.Popen | None = None
    _owner = 0  # the pid that started it

    @classmethod
    def start(cls) -> None:
        with cls._lock:
            cls._running()

    @classmethod
    def _running(cls) -> subprocess.Popen:
        # Only the process that started the server may poll it (a worker forked from it is not its
        # parent: its poll() would call the server dead).
        if cls._process is None or (cls._owner == os.getpid() and cls._process.poll() is not None):
            cls._process, cls._owner = cls._start(), os.getpid()
        return cls._process

    @classmethod
    def fork(cls, request: dict) -> tuple[int, int]:
        """A new kernel's pid and a pidfd for it."""
        with cls._lock:
            process = cls._running()
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            reply = process.stdout.readline()
            if not reply:
                cls._process = None
                raise RuntimeError("the fork server stopped")
            pid = json.loads(reply)["pid"]
            return pid, os.pidfd_open(pid)  # before the next request lets it be reaped

    @staticmethod
    def _start() -> subprocess.Popen:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # no threads in the server: fork() copies only the caller
        process = subprocess.Popen(
            [sys.executable, "-c", "from ch4fork import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            start_new_session=True,  # Ctrl+C in the terminal is ch4validate's to handle, not the server's
        )  # fmt: skip
        if process.stdout.readline() != b"ready\n":
            process.kill()
            raise RuntimeError("the fork server did not start")
        return process


class ForkedKernel:
    """What jupyter_client's provisioner expects of a kernel process, for a forked one (a pidfd)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, pidfd: int):
        self.pid, self.pidfd = pid, pidfd

    def poll(self) -> int | None:
        return 0 if select.select([self.pidfd], [], [], 0)[0] else None

    def wait(self, timeout: float | None = None) -> int:
        select.select([self.pidfd], [], [], timeout)
        return 0

    def send_signal(self, signum: int) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def close(self) -> None:
        os.close(self.pidfd)


class ForkProvisioner(LocalProvisioner):
    """Starts the kernel through the fork server instead of a new Python."""

    async def launch_kernel(self, cmd: list[str], **kwargs):
        if not cmd or Path(cmd[0]).resolve() != Path(sys.executable).resolve() or "ipykernel_launcher" not in cmd:
            return await super().launch_kernel(cmd, **kwargs)  # another Python: start it the usual way
        request = {
            "argv": cmd[cmd.index("ipykernel_launcher") + 1 :],
            "env": kwargs.get("env") or dict(os.environ),
            "cwd": str(Path(kwargs.get("cwd") or os.getcwd()).resolve()),
        }
        pid, pidfd = await asyncio.to_thread(ForkServer.fork, request)
        self.process = ForkedKernel(pid, pidfd)
        self.pid = self.pgid = pid
        return self.connection_info

    async def wait(self) -> int | None:
        process = self.process
        status = await super().wait()
        if process is not None:
            process.close()
        return status


class ForkKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels come from the fork server (when the kernel is Python's)."""

    async def _async_pre_start_kernel(self, **kw):
        if self.provisioner is None and self.kernel_name in ("python3", ""):
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", None) or str(uuid.uuid4())
            self.provisioner = ForkProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)


def available() -> bool:
    return sys.platform == "linux" and hasattr(os, "pidfd_open")
