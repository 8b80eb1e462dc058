"""Student kernels and judges forked from a process that has already imported ipykernel and JAX.

A cold kernel spends about 0.8 s of CPU on the same work every time: starting Python, importing
ipykernel and JAX. A fork server (one per grading process) does that once, then forks one child
per kernel. The server never runs a student's code, and no kernel ever touches it or another
kernel. Each kernel still gets a fresh sandbox of its own (grader/kernels/sandbox.py):

1. the grader starts the sandbox command of a new `Box` around a placeholder: bubblewrap builds
   the namespaces, the read-only mount tree, the private /tmp and the cgroups exactly as for a
   cold kernel, and the placeholder says when it is ready;
2. the server forks; the child joins that sandbox's cgroups and namespaces (setns), forks the
   kernel into its PID namespace and waits for it;
3. the kernel reads its environment (its secret seed) from a file in its own private folder,
   caps its file size, drops to user nobody with no capabilities and no new privileges, checks
   that it did, and runs ipykernel exactly as `python -m ipykernel_launcher` would.

What a kernel inherits from the server is the memory of a process that imported libraries and
was told only paths and process ids: seeds never pass through it. The server is started with a
clean environment, so the grader's own variables are not in it either. It is used as root with
the full sandbox; anywhere else kernels start cold (`available()`).

A judge (kit/ch4judge.py, the verdicts) is forked the same way into a sandbox of its own
(`start_judge`): the grader hands the server the two ends of the judge's stdin and stdout pipes
over a Unix socket with the request, so the job and its key reach the judge through a pipe the
server never reads. The judge's environment is fixed and holds nothing secret.

The server's side needs nothing of the grader; the grader's side builds on grader/kernels/sandbox.py.
jupyter_client's side (the provisioner that starts a kernel through the server) is in
grader/kernels/manager.py.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import ch4fork
from ch4fork import serve_forks  # the server loop, shared with make check's own fork server

from grader.kernels import sandbox

# The server lives as long as a grading run: scipy.integrate too, which the ODE exercise's
# notebook and its judge import (0.3 s of CPU each), and the judge (every kernel imports it too,
# through kit/ch4check.py).
PRELOAD = (*ch4fork.PRELOAD, "scipy.integrate", "ch4judge")
ENV_FILE = "kernel-env.json"  # in the kernel's private folder; read and removed before it drops root
NAMESPACES = (("cgroup", os.CLONE_NEWCGROUP), ("ipc", os.CLONE_NEWIPC), ("uts", os.CLONE_NEWUTS),
              ("net", os.CLONE_NEWNET), ("pid", os.CLONE_NEWPID), ("mnt", os.CLONE_NEWNS))  # fmt: skip
UNSHARED = ("ipc", "uts", "net", "pid", "mnt")  # always new in a sandbox (cgroup only where the system can)
PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 4, 24, 38
PLACEHOLDER = ["sh", "-c", "echo ready; exec sleep infinity"]  # holds the sandbox open for the kernel
EXITED = "\0exit "  # a forked judge's last line on its stdout, from the process that waited for it: its exit code
_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value})")


# ---------------------------------------------------------------------------------------------
# The server: `python -c "from grader.kernels.forkserver import serve; serve(CHANNEL)"`, started by ForkServer.


def serve(channel: int) -> None:
    """Fork a kernel or a judge per request line until the grader closes the pipe (or dies); a
    judge's two pipe ends arrive over the Unix socket `channel`."""
    # No threads in the server (fork() copies only the caller): set before numpy loads OpenBLAS,
    # and not in the server's start environment, which its children show as theirs.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    sock = socket.socket(fileno=channel)

    def receive(request: dict) -> None:
        if request.get("judge"):
            request["fds"] = socket.recv_fds(sock, 1, 2)[1]

    def warm() -> None:
        import ch4judge

        ch4judge.kit_pieces()  # read from the kit's sources once (40 ms), not in every judge

    serve_forks(_enter_sandbox, PRELOAD, receive, warm)


def _enter_sandbox(request: dict) -> None:
    """In the server's child: join the sandbox, start the kernel in it, wait for it."""
    for procs in request["cgroups"]:
        Path(procs).write_text(str(os.getpid()))
    joined = [(os.open(f"/proc/{request['sandbox_pid']}/ns/{name}", os.O_RDONLY), flag) for name, flag in NAMESPACES]
    # The very namespaces the grader saw when the sandbox said it was ready (not those of a
    # process that took the pid since), and not ours: else no kernel.
    found = {name: os.fstat(fd).st_ino for (name, _), (fd, _) in zip(NAMESPACES, joined, strict=True)}
    if found != request["namespaces"] or any(found[n] == os.stat(f"/proc/self/ns/{n}").st_ino for n in UNSHARED):
        os._exit(124)
    for fd, flag in joined:  # the mount namespace last: its root becomes ours
        os.setns(fd, flag)
        os.close(fd)
    os.setsid()  # the kernel's session, with no terminal; as under bubblewrap, it does not lead it
    kernel = os.fork()  # the first process to enter the sandbox's PID namespace
    if kernel == 0:
        try:
            _run_judge(request) if request.get("judge") else _run_kernel(request)
        except BaseException:
            traceback.print_exc()  # to the grader's stderr, while it is not yet /dev/null
        finally:
            os._exit(126)
    for fd in request.get("fds", ())[:1]:
        os.close(fd)  # the judge's stdin is the judge's alone
    _, status = os.waitpid(kernel, 0)
    code = os.waitstatus_to_exitcode(status)
    if request.get("judge"):
        os.write(request["fds"][1], f"{EXITED}{code}\n".encode())
    os._exit(code & 0xFF)


def _run_kernel(request: dict) -> None:
    env_file = Path(request["folder"]) / ENV_FILE
    env = json.loads(env_file.read_text())
    env_file.unlink()
    null = os.open("/dev/null", os.O_RDWR)
    _confine(request, env, stdin=null, stdout=null, stderr=null)
    import numpy

    numpy.random.seed()  # the legacy global generator was seeded once, in the server
    launcher = Path(importlib.util.find_spec("ipykernel_launcher").origin)
    sys.argv = [str(launcher), *request["argv"]]  # sys.path[0] is "", as for a cold kernel: the launcher removes it
    import runpy

    runpy.run_path(str(launcher), run_name="__main__")
    os._exit(0)


def _run_judge(request: dict) -> None:
    """`python -m ch4judge` in the sandbox: the job on stdin, a line per verdict on stdout."""
    _confine(request, request["env"], *request["fds"], stderr=os.open("/dev/null", os.O_RDWR))
    for key, value in ch4fork.PRELOAD_ENV.items():
        os.environ.setdefault(key, value)  # a cold judge imports JAX first thing, and JAX sets these
    import ch4judge

    with open(0, encoding="utf-8", closefd=False) as stdin, open(1, "w", encoding="utf-8", closefd=False) as stdout:
        ch4judge.judge(json.load(stdin), out=stdout)
    os._exit(0)


def _confine(request: dict, env: dict, stdin: int, stdout: int, stderr: int) -> None:
    """What bubblewrap and setpriv give a cold process, for a forked one: its three streams and
    nothing else of the server's, the caps, user nobody, /tmp, exactly `env`, no grader module."""
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # nothing of the server's: its pipes, its files
    resource.setrlimit(resource.RLIMIT_FSIZE, (request["max_file"],) * 2)
    if request["nproc"]:
        resource.setrlimit(resource.RLIMIT_NPROC, (request["nproc"],) * 2)
    _drop_privileges(request["uid"])
    os.chdir("/tmp")
    os.environ.clear()
    os.environ.update(env, PWD="/tmp")  # PWD: what bubblewrap's --chdir sets for a cold process
    for name in [m for m in sys.modules if m == "grader" or m.startswith("grader.")]:
        del sys.modules[name]


def _drop_privileges(uid: int) -> None:
    """setpriv's --reuid --regid --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs,
    then a check of the result: a kernel that is not exactly that never starts."""
    last_cap = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last_cap + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # leaving uid 0 clears the permitted, effective and ambient sets
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_DUMPABLE, 1)  # as after exec: its own /proc files are its own (leaving root cleared it)
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    expected = {
        "Uid": f"{uid}\t{uid}\t{uid}\t{uid}", "Gid": f"{uid}\t{uid}\t{uid}\t{uid}", "Groups": "",
        "CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16, "CapAmb": "0" * 16,
        "NoNewPrivs": "1",
    }  # fmt: skip
    if any(status.get(key, "").strip() != value for key, value in expected.items()):
        os._exit(125)


# ---------------------------------------------------------------------------------------------
# The grader's side


def available() -> bool:
    """Forked kernels need root (to join namespaces) and the full sandbox."""
    return os.geteuid() == 0 and sandbox.probe() is None and set(sandbox.limits()) == {"tmpfs", "pids", "memory"}


class ForkServer:
    """This process's fork server, started on first use and again if it died."""

    _lock = threading.Lock()
    _process: subprocess.Popen | None = None
    _channel: socket.socket | None = None  # passes a judge's pipe ends to the server

    @classmethod
    def fork(cls, request: dict, fds: tuple[int, ...] = ()) -> int:
        """A new kernel's or judge's process (the server's child that waits for it) as a pidfd;
        `fds` go to the child (a judge's stdin and stdout ends)."""
        with cls._lock:
            if cls._process is None or cls._process.poll() is not None:
                cls._process, cls._channel = cls._start()
            cls._process.stdin.write(json.dumps(request).encode() + b"\n")
            cls._process.stdin.flush()
            if fds:
                socket.send_fds(cls._channel, [b"."], list(fds))
            reply = cls._process.stdout.readline()
            if not reply:
                cls._process = None
                raise RuntimeError("the fork server stopped")
            return os.pidfd_open(json.loads(reply)["pid"])  # before the next request lets it be reaped

    @staticmethod
    def _start() -> tuple[subprocess.Popen, socket.socket]:
        # Exactly a cold kernel's start environment (bubblewrap's --chdir sets PWD): a forked child
        # keeps its parent's /proc/self/environ, whatever os.environ becomes.
        env = sandbox.kernel_env(dict(os.environ)) | {"PWD": "/tmp"}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with theirs:
            process = subprocess.Popen(
                [sys.executable, "-c", f"from grader.kernels.forkserver import serve; serve({theirs.fileno()})"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd="/tmp", pass_fds=[theirs.fileno()],
            )  # fmt: skip
        if process.stdout.readline() != b"ready\n":
            process.kill()
            raise RuntimeError("the fork server did not start")
        return process, ours


class ForkedKernel:
    """What jupyter_client's provisioner expects of a kernel process, for a forked kernel: its
    life is the server child's (a pidfd); killing it kills its sandbox, and the kernel with it."""

    stdin = stdout = stderr = None

    def __init__(self, pidfd: int, placeholder: subprocess.Popen):
        self.pidfd, self.placeholder, self.pid = pidfd, placeholder, placeholder.pid

    def poll(self) -> int | None:
        return -signal.SIGKILL if select.select([self.pidfd], [], [], 0)[0] else None

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, signum: int) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signum)
        except ProcessLookupError:
            pass
        if signum == signal.SIGKILL:
            self.placeholder.kill()  # its PID namespace ends, and every process in it

    def close(self) -> None:
        self.placeholder.kill()
        self.placeholder.wait()
        self.placeholder.stdout.close()
        os.close(self.pidfd)


def _placeholder(box) -> subprocess.Popen:
    """The sandbox of `box`, built by its command around a process that holds it open."""
    return subprocess.Popen(
        box.command({}) + PLACEHOLDER, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )


def _request(box, placeholder: subprocess.Popen) -> dict:
    """What the server's child needs to enter the sandbox, once the placeholder says it is ready."""
    if placeholder.stdout.readline() != b"ready\n":
        raise RuntimeError("the sandbox did not start")
    inner = Path(f"/proc/{placeholder.pid}/task/{placeholder.pid}/children").read_text().split()[0]
    return {
        "folder": str(box.folder), "sandbox_pid": int(inner), "uid": sandbox.NOBODY,
        "namespaces": {name: os.stat(f"/proc/{inner}/ns/{name}").st_ino for name, _ in NAMESPACES},
        "cgroups": [str(g / "cgroup.procs") for g in dict.fromkeys(box.cgroups.values())],
        "max_file": sandbox.MAX_FILE, "nproc": None if "pids" in box.held else sandbox.MAX_PROCS,
    }  # fmt: skip


def _end(placeholder: subprocess.Popen) -> None:
    placeholder.kill()
    placeholder.wait()
    placeholder.stdout.close()


def start_judge(box, env: dict[str, str]) -> ForkedJudge:
    """`python -m ch4judge` forked into `box`'s sandbox with exactly `env`: what verdict.py
    would start cold, with the same stdin, stdout and exit code."""
    placeholder = _placeholder(box)
    job_in, job_out = os.pipe()
    lines_in, lines_out = os.pipe()
    try:
        pidfd = ForkServer.fork({**_request(box, placeholder), "judge": True, "env": env}, fds=(job_in, lines_out))
    except BaseException:
        for fd in (job_out, lines_in):
            os.close(fd)
        _end(placeholder)
        raise
    finally:
        os.close(job_in)
        os.close(lines_out)
    return ForkedJudge(pidfd, placeholder, job_out, lines_in)


class ForkedJudge(ForkedKernel):
    """A forked judge as the Popen verdict.py reads: stdin, stdout (the verdict lines), kill(),
    wait() and returncode (from the line its waiting process writes last); `cpu_root`: the
    process that waits for it, whose children's CPU is the judge's."""

    def __init__(self, pidfd: int, placeholder: subprocess.Popen, stdin: int, stdout: int):
        super().__init__(pidfd, placeholder)
        fdinfo = Path(f"/proc/self/fdinfo/{pidfd}").read_text()
        self.cpu_root = int(next(line.split()[1] for line in fdinfo.splitlines() if line.startswith("Pid:")))
        self.stdin = open(stdin, "w", encoding="utf-8")  # noqa: SIM115 - closed by the reader, as Popen's
        self._stdout = open(stdout, encoding="utf-8")  # noqa: SIM115 - closed in wait()
        self.returncode: int | None = None

    @property
    def stdout(self):
        for line in self._stdout:
            if line.startswith(EXITED):
                self.returncode = int(line[len(EXITED) :])
            else:
                yield line

    def wait(self) -> int:
        select.select([self.pidfd], [], [])
        if self.returncode is None:  # killed before its waiting process could say how it ended
            self.returncode = -signal.SIGKILL
        self._stdout.close()
        self.close()
        return self.returncode
