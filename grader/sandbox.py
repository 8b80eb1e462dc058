"""Student kernels run with least privilege: bubblewrap namespaces plus an unprivileged user.

`SandboxKernelManager` is a jupyter_client KernelManager; `autograde_preprocessors()` puts it
into nbgrader's Execute step. Each kernel gets:

* its own mount namespace holding only what Python needs, read-only: /usr, the Python install,
  the course venv and kit/ (ch4check). solutions/, the gradebook, the course folder and other
  students' work do not exist in it;
* a private folder (connection file and ZeroMQ sockets) and a size-limited /tmp, the only
  places it can write;
* no network (its own empty network namespace; the kernel talks over Unix sockets), its own
  PID/IPC/UTS namespaces, a new session (no terminal to inject into), no capabilities;
* user nobody (65534) when the grader runs as root, so even a mount mistake exposes only
  world-readable files; limits on file size and process count.

`probe()` says whether this works here. Where it does not, grading goes on unsandboxed, loudly:
a warning on every run and an `unsandboxed` flag on every row of grades.csv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import ch4check
from ch4check import SEED_ENV
from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute

from grader import REPO

NOBODY = 65534
TMP_SIZE = 512 * 2**20  # bytes of /tmp inside the sandbox
MAX_FILE = 256 * 2**20  # bytes of any file the kernel writes
MAX_PROCS = 4096  # per user: stops a fork bomb, leaves room for XLA's threads
KIT = Path(ch4check.__file__).parent  # what exercise test cells import
PASSED_ENV = ("JAX_PLATFORMS", "MPLBACKEND", SEED_ENV, "LANG", "LC_ALL")


def _as_root() -> bool:
    return os.geteuid() == 0


def command(folder: Path, env: dict[str, str]) -> list[str]:
    """The bubblewrap prefix that runs a kernel command inside the sandbox."""
    prefixes = {Path(sys.prefix), Path(sys.base_prefix), KIT}
    binds = []
    # bwrap makes missing parent folders 0700, which user nobody could not enter: make them first.
    for parent in sorted({p for path in prefixes | {folder} for p in path.parents if p != Path("/")}):
        binds += ["--perms", "0755", "--dir", str(parent)]
    for path in sorted(prefixes):
        binds += ["--ro-bind", str(path), str(path)]
    for path in ("/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime"):
        binds += ["--ro-bind-try", path, path]
    setenv = []
    for key in PASSED_ENV:
        if key in env:
            setenv += ["--setenv", key, env[key]]
    cmd = [
        "prlimit", f"--fsize={MAX_FILE}", f"--nproc={MAX_PROCS}", "--",
        "bwrap", "--die-with-parent", "--new-session",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev",
        # /tmp first: the venv, the repository or the kernel's folder may live under it.
        "--size", str(TMP_SIZE), "--perms", "1777", "--tmpfs", "/tmp",
        *binds,
        "--bind", str(folder), str(folder),
        "--chdir", str(folder),
        "--clearenv",
        "--setenv", "PATH", f"{Path(sys.prefix) / 'bin'}:/usr/bin",
        "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "JPY_PARENT_PID", "1",  # our parent is the namespace init: no poller, no banner
        *setenv,
    ]  # fmt: skip
    if _as_root():
        # bwrap run by root keeps uid 0 inside; setpriv then becomes nobody, for good.
        cmd += ["--", "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]  # fmt: skip
    else:
        cmd += ["--unshare-user", "--cap-drop", "ALL", "--"]
    return cmd


@lru_cache(maxsize=1)
def probe() -> str | None:
    """None when sandboxed kernels work here, else one line saying why not."""
    for tool in ("bwrap", "prlimit") + (("setpriv",) if _as_root() else ()):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install bubblewrap util-linux)"
    script = (
        "import json, os, socket, sys; print(json.dumps({'uid': os.getuid(), "
        "'net': [n for _, n in socket.if_nameindex()], 'repo': os.path.exists(sys.argv[1])}))"
    )
    with tempfile.TemporaryDirectory(prefix="ch4-probe-") as folder:
        _own(Path(folder))
        done = subprocess.run(
            [*command(Path(folder), {}), sys.executable, "-c", script, str(REPO / "solutions")],
            capture_output=True,
            text=True,
            timeout=60,
        )
    if done.returncode != 0:
        return f"bubblewrap could not start Python here ({(done.stderr.strip().splitlines() or ['?'])[-1][:200]})"
    seen = json.loads(done.stdout)
    if seen["repo"] or seen["net"] != ["lo"] or (_as_root() and seen["uid"] != NOBODY):
        return f"the sandbox is not isolated here (saw {seen})"
    return None


def describe() -> str:
    why = probe()
    if why is None:
        who = f"user nobody ({NOBODY})" if _as_root() else "a user namespace"
        return f"sandbox: bubblewrap, {who}, no network, read-only system, private /tmp"
    return f"WARNING: student kernels run WITHOUT a sandbox: {why}"


def _own(folder: Path) -> None:
    if _as_root():
        os.chown(folder, NOBODY, NOBODY)
    folder.chmod(0o700)


class SandboxKernelManager(AsyncKernelManager):
    """A kernel in bubblewrap, reached over Unix sockets in its own private folder."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.sandbox_folder = Path(tempfile.mkdtemp(prefix="ch4-kernel-"))
        _own(self.sandbox_folder)
        self.transport = "ipc"
        self.ip = str(self.sandbox_folder / "zmq")
        self.connection_file = str(self.sandbox_folder / "connection.json")

    @property
    def kernel_spec(self):
        spec = super().kernel_spec
        if spec is not None:
            # The kernel is in its own session and PID namespace: a signal to our process group
            # would not reach it, so interrupts (cell time-outs) travel as messages.
            spec.interrupt_mode = "message"
        return spec

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        if _as_root():
            os.chown(self.connection_file, NOBODY, NOBODY)

    def format_kernel_cmd(self, extra_arguments=None):
        return command(self.sandbox_folder, dict(os.environ)) + super().format_kernel_cmd(extra_arguments)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self.sandbox_folder, ignore_errors=True)


class SandboxExecute(Execute):
    """nbgrader's Execute step with sandboxed kernels (nbgrader passes its own manager class
    as an argument, which configuration cannot override)."""

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxKernelManager
        super().__init__(*args, **kwargs)


def autograde_preprocessors() -> list:
    """nbgrader's autograde steps, with Execute sandboxed."""
    from nbgrader.converters import Autograde

    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    return [SandboxExecute if step is Execute else step for step in steps]
