"""Kernels forked from the pre-imported server (grader/kernels/forkserver.py) against cold ones.

A student's code must not be able to tell them apart (same user, capabilities, limits, files,
network, environment, Python state), and a forked kernel must carry nothing of any other
kernel (not what it held, not its random state) and nothing of the grader's: a graded kernel's
environment says CH4_GRADING=1 and holds no key (the judge alone draws inputs). Both directions
run real sandboxed kernels."""

import hashlib
import json
import os
import select
from pathlib import Path

import pytest
from ch4protocol import GRADING_ENV
from helpers import kernel_session

from grader import REPO
from grader.kernels import forkserver, manager, sandbox

pytestmark = pytest.mark.xdist_group("sandbox-limits")

PROBE = f"""
import json, os, re, resource, signal, socket, sys
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
fds = {{}}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[int(fd)] = os.readlink(f"/proc/self/fd/{{fd}}")
    except OSError:  # the descriptor that listed the folder
        pass
print(json.dumps({{
    "status": {{key: status[key].split() for key in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff",
                                                  "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")}},
    "cwd": os.getcwd(), "path": sys.path, "argv0": sys.argv[0], "argv_rest": sys.argv[3:],
    "flags": repr(sys.flags), "env": dict(os.environ),
    "root": sorted(os.listdir("/")), "tmp": sorted(n for n in os.listdir("/tmp") if not n.startswith("ch4-kernel-")),
    "net": [name for _, name in socket.if_nameindex()], "host": socket.gethostname(),
    "limits": [resource.getrlimit(r) for r in (resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE)],
    "umask": os.umask(0o022), "sigchld": str(signal.getsignal(signal.SIGCHLD)),
    "session_leader": os.getsid(0) == os.getpid(), "tty": os.isatty(0),
    "fd_kinds": sorted({{re.sub(r"[0-9]+", "N", f.split(":")[0] if ":" in f else os.path.dirname(f))
                         for f in fds.values() if f.startswith(("socket:", "anon_inode:", "/tmp/.ipython/"))}}),
    "repo_visible": os.path.exists({str(REPO / "solutions")!r}),
    "grader_modules": sorted(m for m in sys.modules if m == "grader" or m.startswith("grader.")),
    "main": sys.modules["__main__"].__name__, "proc_owner": os.stat("/proc/self/mem").st_uid,
}}))
"""

# Where the grading key used to travel, set in the grader's environment as a stale variable would be.
OLD_KEY_ENV = "CH4_GRADING_SEED"

# Every run of 64 hex digits in the kernel's own readable memory, as SHA-256 digests (a key is one).
SCAN = """
import hashlib, json, re
runs = set()
with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
    for line in maps:
        where, perms = line.split()[:2]
        start, end = (int(x, 16) for x in where.split("-"))
        if "r" not in perms or end - start > 2**30:
            continue
        try:
            mem.seek(start)
            chunk = mem.read(end - start)
        except (OSError, ValueError, OverflowError):
            continue
        runs.update(hashlib.sha256(m).hexdigest() for m in re.findall(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", chunk))
print(json.dumps(sorted(runs)))
"""


def require_fork() -> None:
    if os.geteuid() != 0:
        pytest.skip("forked kernels are used as root only; elsewhere kernels start cold")
    assert forkserver.available(), f"as root with the full sandbox the fork server must be used: {sandbox.describe()}"


def run(code: str, key: str, monkeypatch) -> tuple[dict | list, manager.SandboxKernelManager]:
    """`code` in a sandboxed kernel started as a worker starts one (CH4_GRADING=1), with `key` in
    the grader's own environment."""
    monkeypatch.setenv(GRADING_ENV, "1")
    monkeypatch.setenv(OLD_KEY_ENV, key)
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    session = kernel_session(code)
    try:
        return json.loads(session.stdout), session.km
    except json.JSONDecodeError:
        pytest.fail(f"the kernel printed no result: {session.errors[-3000:]}")


def restart_server() -> None:
    """Stop the fork server (it ends on end-of-file): the next kernel starts one with the
    environment as it is now."""
    old = forkserver.ForkServer._process
    if old is not None:
        old.stdin.close()
        old.wait(timeout=30)


def test_a_forked_kernel_looks_exactly_like_a_cold_one(monkeypatch):
    require_fork()
    key = os.urandom(32).hex()
    forked, km = run(PROBE, key, monkeypatch)
    assert isinstance(km.provisioner, manager.ForkProvisioner)
    with monkeypatch.context() as cold_only:
        cold_only.setattr(forkserver, "available", lambda: False)
        cold, km = run(PROBE, key, monkeypatch)
    assert not isinstance(km.provisioner, manager.ForkProvisioner)
    differ = {key: (cold[key], forked.get(key)) for key in cold if cold[key] != forked.get(key)}
    assert not differ, f"a student could tell a forked kernel from a cold one by: {differ}"
    # and what both must be, in case both went wrong the same way
    assert forked["status"]["Uid"] == [str(sandbox.NOBODY)] * 4 and forked["status"]["CapEff"] == ["0" * 16]
    assert forked["status"]["NoNewPrivs"] == ["1"] and forked["net"] == ["lo"] and not forked["repo_visible"]
    assert forked["env"][GRADING_ENV] == "1" and forked["grader_modules"] == []
    assert OLD_KEY_ENV not in forked["env"] and key not in json.dumps(forked["env"]), (
        "the grader's key reached a kernel"
    )


def test_a_forked_kernel_has_nothing_of_the_graders_open(monkeypatch):
    """A cold kernel inherits the grader's stdin, stdout and stderr (ipykernel keeps copies of
    them); a forked one has /dev/null there, and none of the server's pipes or files."""
    require_fork()
    code = """
import json, os
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
print(json.dumps(fds))
"""
    fds, _ = run(code, os.urandom(32).hex(), monkeypatch)
    captured = {fds["1"], fds["2"]}  # ipykernel's own pipes, which it put in place of stdout and stderr
    assert fds["0"] == "/dev/null" and all(target.startswith("pipe:") for target in captured), fds
    own = ("socket:", "anon_inode:", "/tmp/.ipython/")  # ZeroMQ, asyncio, IPython's history
    foreign = {fd for fd in fds.values() if fd not in captured | {"/dev/null"} and not fd.startswith(own)}
    assert not foreign, f"the kernel holds descriptors it did not open: {foreign}"


def test_a_forked_kernel_holds_nothing_of_another_kernel_or_of_the_graders_key(monkeypatch):
    """The server is started with a key in the grader's environment; a first kernel holds a value
    of its own. A second kernel forked from the same server scans all its readable memory: it
    finds the value it holds itself (so the scan sees what is there), not the first kernel's,
    not the key; and it draws other random numbers."""
    require_fork()
    key, first_value, second_value = (os.urandom(32).hex() for _ in range(3))
    monkeypatch.setenv(OLD_KEY_ENV, key)
    restart_server()
    code = f"import json, numpy as np\nheld = {first_value!r}\nprint(json.dumps([held[:8], np.random.rand()]))"
    (seen, first_random), _ = run(code, key, monkeypatch)
    assert seen == first_value[:8]
    server = forkserver.ForkServer._process.pid
    (_, second_random), _ = run(code.replace(first_value, second_value), key, monkeypatch)
    assert forkserver.ForkServer._process.pid == server, "each kernel started its own server: nothing was saved"
    assert second_random != first_random, "two kernels drew the same numbers: the server's random state leaked"
    runs, _ = run(f"held = {second_value!r}\n" + SCAN, key, monkeypatch)
    assert forkserver.ForkServer._process.pid == server
    digest = lambda value: hashlib.sha256(value.encode()).hexdigest()  # noqa: E731
    assert digest(second_value) in runs, "the scan must find the kernel's own value, or it proves nothing"
    assert digest(first_value) not in runs, "an earlier kernel's value is in this kernel's memory"
    assert digest(key) not in runs, "the grader's key is in a kernel's memory"


def test_the_server_is_started_without_the_graders_environment(monkeypatch):
    require_fork()
    monkeypatch.setenv("CH4_TEST_SECRET", "not-for-kernels")
    monkeypatch.setenv(GRADING_ENV, "1")
    monkeypatch.setenv(OLD_KEY_ENV, "f" * 64)
    restart_server()  # a server starts now, with these variables set
    code = "import json, os; print(json.dumps([open('/proc/self/environ').read(), dict(os.environ)]))"
    (initial, env), _ = run(code, "f" * 64, monkeypatch)
    assert "not-for-kernels" not in initial + json.dumps(env) and "f" * 64 not in initial + json.dumps(env)
    assert env[GRADING_ENV] == "1", "a graded kernel is told so, through its own environment file"
    server_env = forkserver.ForkServer._process and open(f"/proc/{forkserver.ForkServer._process.pid}/environ").read()
    assert server_env and "not-for-kernels" not in server_env and "f" * 64 not in server_env
    # It starts with what a cold graded kernel starts with, no more: its children show it as theirs.
    names = {line.partition("=")[0] for line in server_env.split("\0") if line}
    fixed = {"PATH", "HOME", "TMPDIR", "MPLCONFIGDIR", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "JPY_PARENT_PID", "PWD"}
    assert fixed <= names <= fixed | set(sandbox.PASSED_ENV), sorted(names)


@pytest.mark.parametrize("expected", ["the host's own", "another process's"])
def test_the_server_starts_no_kernel_outside_the_sandbox_it_was_shown(tmp_path, expected):
    """The sandbox is named by a pid: should that pid ever be another process (the placeholder
    gone, the pid reused), the server's child must not start a kernel in its namespaces."""
    require_fork()
    (tmp_path / forkserver.ENV_FILE).write_text("{}")  # a kernel that began would read and remove it
    host = {name: os.stat(f"/proc/self/ns/{name}").st_ino for name, _ in forkserver.NAMESPACES}
    namespaces = host if expected == "the host's own" else {name: 1 for name in host}
    request = {
        "folder": str(tmp_path), "sandbox_pid": os.getpid(), "namespaces": namespaces, "argv": [],
        "uid": sandbox.NOBODY, "cgroups": [], "max_file": sandbox.MAX_FILE, "nproc": None,
    }  # fmt: skip
    pidfd = forkserver.ForkServer.fork(request)
    try:
        assert select.select([pidfd], [], [], 30)[0], "the server's child is still running"
    finally:
        os.close(pidfd)
    assert (tmp_path / forkserver.ENV_FILE).exists(), "a kernel started in namespaces it was not shown"


def test_a_kernel_slow_to_end_after_its_notebook_does_not_fail_the_notebook():
    """A killed sandbox can take longer to end than the 5 s the provisioner first waits (a loaded
    machine: an honest answer scored 0 with 'nbgrader 无法评分：TimeoutError'). kill() returns
    then instead of raising; the manager and wait() wait for the end."""
    import asyncio
    import threading

    ended, end = os.pipe()  # readable once the kernel has ended, like the kernel's pidfd
    timer = threading.Timer(6, os.write, (end, b"x"))

    class SlowToEnd:
        pidfd = ended

        def poll(self):
            return -9 if select.select([ended], [], [], 0)[0] else None

        def kill(self):
            timer.start()

    provisioner = manager.ForkProvisioner(kernel_id="slow", kernel_spec=None)
    provisioner.process = SlowToEnd()
    try:
        asyncio.run(provisioner.kill())
        assert provisioner.process.poll() is None, "the test's kernel ended too soon to prove anything"
    finally:
        timer.join()
        os.close(ended)
        os.close(end)


def test_a_forked_kernels_initial_environment_is_a_cold_ones(monkeypatch):
    require_fork()
    code = "import json; print(json.dumps(open('/proc/self/environ').read()))"
    forked, _ = run(code, os.urandom(32).hex(), monkeypatch)
    with monkeypatch.context() as cold_only:
        cold_only.setattr(forkserver, "available", lambda: False)
        cold, _ = run(code, os.urandom(32).hex(), monkeypatch)
    assert sorted(forked.split("\0")) == sorted(cold.split("\0"))


def judge_probe(cache: Path) -> dict:
    """PROBE run as a verdict by a judge process (`verdict._run_judge`) with the compiled-programs
    folder `cache` bound as the grader binds it, its output as the verdict's message."""
    from grader.judging import verdict

    body = (
        "import contextlib, io\n_out = io.StringIO()\nwith contextlib.redirect_stdout(_out):\n"
        f"    exec({PROBE!r})\nraise AssertionError(_out.getvalue())\n"
    )
    test = {"id": "probe", "points": 1, "body": body, "hidden": False}
    lines, cut = verdict._run_judge([test], {}, "ab" * 16, {"probe": 120}, cache)
    assert cut is None and "probe" in lines, f"the judge gave no verdict: {cut}"
    return json.loads(lines["probe"]["message"])


def test_a_forked_judge_is_confined_as_a_cold_one_and_judges_the_same(monkeypatch, tmp_path):
    """The judge holds the key and draws the hidden inputs: forked from the server it must be
    as confined as `python -m ch4judge` in the sandbox, hold nothing the server had open or set,
    and give the same verdicts."""
    require_fork()
    from grader.judging import verdict
    from proof import answers

    started, start = [], forkserver.start_judge
    monkeypatch.setattr(forkserver, "start_judge", lambda *a: started.append(a) or start(*a))
    cache = verdict.new_cache(tmp_path)
    forked = judge_probe(cache)
    assert started, "the judge was not forked"
    with monkeypatch.context() as cold_only:
        cold_only.setattr(forkserver, "available", lambda: False)
        cold = judge_probe(cache)
    same = (
        "status",
        "cwd",
        "env",
        "root",
        "tmp",
        "net",
        "limits",
        "fd_kinds",
        "repo_visible",
        "grader_modules",
        "proc_owner",
        "tty",
        "session_leader",
        "umask",
    )
    differ = {key: (cold[key], forked[key]) for key in same if cold[key] != forked[key]}
    assert not differ, f"a forked judge differs from a cold one in: {differ}"
    assert forked["status"]["Uid"] == [str(sandbox.NOBODY)] * 4 and forked["status"]["CapEff"] == ["0" * 16]
    assert forked["net"] == ["lo"] and not forked["repo_visible"] and forked["grader_modules"] == []
    assert (sandbox.kernel_env(verdict.JUDGE_ENV) | {"PWD": "/tmp"}).items() <= forked["env"].items(), forked["env"]
    assert "ab" * 16 not in json.dumps(forked), "the key is in the judge's environment or files"
    # the same verdicts, on a wrong answer's programs as on the reference's
    wrong = next(e.answer for e in answers.entries("safe_norm") if e.kind == "wrong")
    for entry in (answers.reference_answer("safe_norm"), wrong):
        results = {}
        for mode in ("forked", "cold"):
            with monkeypatch.context() as choice:
                choice.setattr(forkserver, "available", (lambda: True) if mode == "forked" else (lambda: False))
                results[mode] = answers.quick_score("safe_norm", entry, secret="cd" * 16)
        assert results["forked"] == results["cold"], results
