"""Student kernels run with least privilege: bubblewrap namespaces plus an unprivileged user.

A `Box` is one kernel's (or judge's) sandbox: the bubblewrap command and its cgroups (made with
grader/kernels/cgroups.py). The kernel manager that starts kernels in boxes is in
grader/kernels/manager.py. Each kernel gets:

* its own mount namespace holding only what Python needs, read-only: /usr, the Python install,
  the course venv and kit/ (ch4check). solutions/, the gradebook, the course folder and other
  students' work do not exist in it;
* two writable places, both size-capped tmpfs and gone when the kernel stops: /tmp (its
  working folder and HOME) and a small private folder the grader can reach too (connection
  file and ZeroMQ sockets);
* no network (its own empty network namespace; the kernel talks over Unix sockets), its own
  PID/IPC/UTS namespaces, a new session (no terminal to inject into), no capabilities;
* user nobody (65534) when the grader runs as root, so even a mount mistake exposes only
  world-readable files;
* its own pids and memory cgroups (v1 or v2): a fork flood or a huge array stops that kernel
  only (the kernel is killed on running out of memory; /tmp counts towards its memory). Each
  file it writes is capped too.

What holds depends on the machine. As root with writable cgroups (this course's containers):
all of the above. Without root, bubblewrap runs in a user namespace: the namespaces and /tmp
hold, but the private folder is an ordinary folder on the host disk (files capped at MAX_FILE
each, not in total), cgroups are usually not writable, so there is no memory cap and the
process cap is the user's RLIMIT_NPROC, shared with every kernel and the grader. The kernel's
cgroups sit at the top of each hierarchy, so a limit set on the grader's own cgroup does not
bind them. A grader killed outright (SIGKILL) leaves its kernels' cgroups and mounts behind; a
box is named after the process that made it (grader/kernels/scratch.py), so the next run removes
those of dead processes (`reap_orphans`).

As root with every cap, the kernel process is not started by this command but forked from a
pre-imported server and moved into the sandbox the command built (grader/kernels/forkserver.py); what
the kernel gets is the same.

`probe()` says whether the sandbox works here and `limits()` which caps hold; `describe()` says
both in one line, naming any cap that is missing. Where the sandbox does not work, grading goes
on unsandboxed, loudly: a warning on every run and an `unsandboxed` flag on every row of
grades.csv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import weakref
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import ch4protocol
from ch4protocol import GRADING_ENV, SIZES_ENV

from grader import REPO
from grader.i18n import _
from grader.kernels import cgroups, scratch

NOBODY = 65534
MiB = 2**20
TMP_SIZE = 512 * MiB  # bytes of /tmp inside the sandbox
FOLDER_SIZE = 8 * MiB  # bytes of the private folder: a connection file and a few sockets
MAX_FILE = 256 * MiB  # bytes of any file the kernel writes
MAX_PIDS = 1024  # processes and threads per kernel (pids cgroup): stops a fork bomb, fits XLA's threads
MAX_MEMORY = 4096 * MiB  # per kernel (memory cgroup), /tmp included: 2 jobs fit a 24 GiB machine
MAX_PROCS = 4096  # per user, only where there is no pids cgroup: then all kernels share it
KIT = Path(ch4protocol.__file__).parent  # what exercise test cells import
PASSED_ENV = ("JAX_PLATFORMS", "MPLBACKEND", GRADING_ENV, SIZES_ENV, "LANG", "LC_ALL")
# Runs first: puts its own process (and so the whole sandbox) into the cgroups named before "--".
ENTER_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def _as_root() -> bool:
    return os.geteuid() == 0


def kernel_env(env: dict[str, str]) -> dict[str, str]:
    """The whole environment of a sandboxed process: fixed settings and PASSED_ENV from `env`."""
    fixed = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin",
        "HOME": "/tmp", "TMPDIR": "/tmp", "MPLCONFIGDIR": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(KIT),  # the kit, bound read-only in the sandbox, from whichever checkout grades
        "JPY_PARENT_PID": "1",  # our parent is the namespace init: no poller, no banner
    }  # fmt: skip
    return fixed | {key: env[key] for key in PASSED_ENV if key in env}


def command(
    folder: Path,
    env: dict[str, str],
    cgroups: Sequence[Path] = (),
    nproc: int | None = MAX_PROCS,
    shared: Path | None = None,
) -> list[str]:
    """The prefix that runs a kernel command inside the sandbox, in `cgroups` (folders), with
    `nproc` processes per user (None: no such limit, a pids cgroup caps them instead). `shared`:
    a second writable folder, one that outlives the sandbox (a judge's compiled programs)."""
    prefixes = {Path(sys.prefix), Path(sys.base_prefix), KIT}
    writable = [folder] + ([shared] if shared else [])
    binds = []
    # bwrap makes missing parent folders 0700, which user nobody could not enter: make them first.
    for parent in sorted({p for path in prefixes | set(writable) for p in path.parents if p != Path("/")}):
        binds += ["--perms", "0755", "--dir", str(parent)]
    for path in sorted(prefixes):
        binds += ["--ro-bind", str(path), str(path)]
    for path in ("/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime"):
        binds += ["--ro-bind-try", path, path]
    setenv = [arg for key, value in kernel_env(env).items() for arg in ("--setenv", key, value)]
    enter = ["sh", "-c", ENTER_CGROUPS, "sh", *(str(g / "cgroup.procs") for g in cgroups), "--"] if cgroups else []
    cmd = [
        *enter,
        "prlimit", f"--fsize={MAX_FILE}", *([f"--nproc={nproc}"] if nproc else []), "--",
        "bwrap", "--die-with-parent", "--new-session",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev",
        # /tmp first: the venv, the repository or the kernel's folder may live under it.
        "--size", str(TMP_SIZE), "--perms", "1777", "--tmpfs", "/tmp",
        *binds,
        *(arg for path in writable for arg in ("--bind", str(path), str(path))),
        "--chdir", "/tmp",  # not the private folder: that one is the grader's, and small
        "--clearenv",
        *setenv,
    ]  # fmt: skip
    if _as_root():
        # bwrap run by root keeps uid 0 inside; setpriv then becomes nobody, for good.
        cmd += ["--", "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]  # fmt: skip
    else:
        cmd += ["--unshare-user", "--cap-drop", "ALL", "--"]
    return cmd


# ---------------------------------------------------------------------------------------------
# Per-kernel limits: a tmpfs private folder and cgroups (grader/kernels/cgroups.py)

BOX_PREFIX = "ch4-kernel"  # a box's folder in the temporary folder, and its cgroups: BOX_PREFIX-<process tag>-…


class Box:
    """One kernel's private folder (a size-capped tmpfs, as root) and cgroups (process and memory
    caps). `require`: the limits that must hold ("tmpfs", "pids", "memory"), else it raises; None
    tries them all and keeps what works (the probe). close() removes everything, killing leftovers."""

    def __init__(
        self, require=None, memory: int | None = None, pids: int | None = None, shared: Path | None = None
    ) -> None:
        # Named after this process (reap_orphans): its cgroups take the same name.
        self.folder = scratch.process_folder(BOX_PREFIX)
        self.shared = shared  # bound writable too, and left in place (see command)
        self.cgroups: dict[str, Path] = {}
        self.held: dict[str, str] = {}  # limit -> how it is enforced
        # Runs once: on close(), when the Box is collected, or when the grader exits.
        self.close = weakref.finalize(self, _close, self.folder, self.cgroups, self.held)
        try:
            self._setup(require, memory or MAX_MEMORY, pids or MAX_PIDS)
        except BaseException:
            self.close()
            raise

    def _setup(self, require, memory: int, pids: int) -> None:
        steps = {
            "tmpfs": self._mount,
            "pids": lambda: self._cgroup("pids", pids),
            "memory": lambda: self._cgroup("memory", memory),
        }
        for limit, step in steps.items():
            if require is None or limit in require:
                try:
                    self.held[limit] = step()
                except (OSError, KeyError, subprocess.CalledProcessError):
                    if require is not None:
                        raise
        if "tmpfs" not in self.held:
            give_to_sandbox(self.folder)

    def _mount(self) -> str:
        options = f"size={FOLDER_SIZE},nr_inodes=256,mode=0700,uid={NOBODY},gid={NOBODY},nosuid,nodev,noexec"
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "ch4-kernel", str(self.folder)],
                       check=True, capture_output=True)  # fmt: skip
        return "tmpfs"

    def _cgroup(self, controller: str, value: int) -> str:
        root, version = cgroups.hierarchies()[controller]
        if version == 2:
            (root / "cgroup.subtree_control").write_text(f"+{controller}")  # lets children use it
        group = root / self.folder.name
        group.mkdir(exist_ok=True)  # v2: one cgroup serves both controllers
        self.cgroups[controller] = group  # from now on close() removes it
        (cap, text), *extras = cgroups.limit_files(controller, version, value)
        (group / cap).write_text(text)
        for file, text in extras:
            if (group / file).exists():
                (group / file).write_text(text)
        return f"{controller} cgroup v{version}"

    def command(self, env: dict[str, str]) -> list[str]:
        groups = list(dict.fromkeys(self.cgroups.values()))  # v2: one folder for both controllers
        return command(self.folder, env, groups, nproc=None if "pids" in self.held else MAX_PROCS, shared=self.shared)


def _close(folder: Path, groups: dict[str, Path], held: dict[str, str]) -> None:
    for group in dict.fromkeys(groups.values()):
        cgroups.remove(group)
    if "tmpfs" in held:
        # Lazy: a socket still open in the grader must not keep the mount (and this folder) alive.
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


def reap_orphans() -> list[Path]:
    """Remove what the boxes of processes that no longer exist left behind: a grader killed with
    SIGKILL runs no cleanup, so its tmpfs mounts, cgroups and folders would stay. A box of a live
    process, another grader's included, is left alone. Returns the folders removed."""
    reaped = scratch.orphaned(BOX_PREFIX)
    mounts = {line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()}
    for folder in reaped:
        groups = {c: root / folder.name for c, (root, _) in cgroups.hierarchies().items()}
        held = {"tmpfs": "tmpfs"} if str(folder) in mounts else {}
        _close(folder, {c: g for c, g in groups.items() if g.exists()}, held)
    return reaped


# ---------------------------------------------------------------------------------------------
# Does it work here?


@lru_cache(maxsize=1)
def _probe() -> tuple[str | None, dict[str, str]]:
    for tool in ("bwrap", "prlimit") + (("setpriv", "mount", "umount") if _as_root() else ()):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install bubblewrap util-linux)", {}
    script = (
        "import json, os, socket, sys; print(json.dumps({'uid': os.getuid(), "
        "'net': [n for _, n in socket.if_nameindex()], 'repo': os.path.exists(sys.argv[1])}))"
    )
    box = Box()  # every limit that can be set here
    for _attempt in range(2):
        try:
            cmd = [*box.command({}), sys.executable, "-c", script, str(REPO / "solutions")]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        finally:
            box.close()
        if done.returncode != 125 or not box.cgroups:
            break
        # 125: its cgroups were made but cannot be entered. Sandbox without them (describe() says so).
        box = Box(require=[limit for limit in box.held if limit == "tmpfs"])
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["?"])[-1][:200]
        return f"bubblewrap could not start Python here ({why})", {}
    seen = json.loads(done.stdout)
    if seen["repo"] or seen["net"] != ["lo"] or (_as_root() and seen["uid"] != NOBODY):
        return f"the sandbox is not isolated here (saw {seen})", {}
    return None, dict(box.held)


def probe() -> str | None:
    """None when sandboxed kernels work here, else one line saying why not."""
    return _probe()[0]


def limits() -> dict[str, str]:
    """The per-kernel limits that hold here: {"tmpfs"|"pids"|"memory": how}, e.g. "pids cgroup v1"."""
    return dict(_probe()[1])


def describe() -> str:
    why = probe()
    if why is not None:
        return _("WARNING: student kernels run WITHOUT a sandbox: {reason}").format(reason=why)
    who = _("user nobody ({uid})").format(uid=NOBODY) if _as_root() else _("a user namespace")
    held = limits()
    caps = {
        "pids": (
            _("{count} processes").format(count=MAX_PIDS),
            _("no per-kernel process cap ({count} shared by all kernels)").format(count=MAX_PROCS),
        ),
        "memory": (_("{size} MiB memory").format(size=MAX_MEMORY // MiB), _("no memory cap")),
        "tmpfs": (
            _("{size} MiB private folder").format(size=FOLDER_SIZE // MiB),
            _("the kernel's private folder is on the host disk"),
        ),
    }
    have = ", ".join(f"{text} ({held[limit]})" for limit, (text, _lacking) in caps.items() if limit in held)
    lack = ", ".join(text for limit, (_having, text) in caps.items() if limit not in held)
    line = _("sandbox: bubblewrap, {who}, no network, read-only system, {size} MiB /tmp").format(
        who=who, size=TMP_SIZE // MiB
    )
    return (
        line
        + (_("; per kernel: {caps}").format(caps=have) if have else "")
        + (_("; WARNING: {missing}").format(missing=lack) if lack else "")
    )


def give_to_sandbox(folder: Path) -> None:
    """`folder` becomes the sandboxed user's, and only theirs."""
    if _as_root():
        os.chown(folder, NOBODY, NOBODY)
    folder.chmod(0o700)
