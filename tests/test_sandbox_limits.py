"""Per-kernel limits of the sandbox: writable space, processes and memory are capped for each
kernel on its own, and nothing is left behind. Every test sets small caps, so none of them can
exhaust the machine. As root the limits must hold; elsewhere a missing one is skipped, by name."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import kernel_session

from grader import REPO
from grader.judging import verdict
from grader.kernels import cgroups, sandbox

pytestmark = pytest.mark.xdist_group("sandbox-limits")

MiB = sandbox.MiB
ENV = {"JAX_PLATFORMS": "cpu"}


def require(*wanted: str) -> None:
    if sandbox.probe() is not None:
        pytest.fail(f"no sandbox here: {sandbox.probe()}")
    missing = [limit for limit in wanted if limit not in sandbox.limits()]
    if missing and os.geteuid() == 0:
        pytest.fail(f"as root these limits should hold: {missing} ({sandbox.describe()})")
    if missing:
        pytest.skip(f"not enforced here: {missing}")


def mounted(path: Path) -> bool:
    return any(line.split()[1] == str(path) for line in Path("/proc/mounts").read_text().splitlines())


@pytest.fixture
def boxes():
    """Makes Boxes; afterwards checks that each left no cgroup, mount or folder behind."""
    made = []

    def make(**kwargs):
        made.append(sandbox.Box(require=sandbox.limits(), **kwargs))
        return made[-1]

    yield make
    for box in made:
        box.close()
        assert not mounted(box.folder) and not box.folder.exists(), box.folder
        assert not [g for g in box.cgroups.values() if g.exists()], box.cgroups


def run(box, code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    cmd = [*box.command(ENV), sys.executable, "-c", code, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


FILL = """
import errno, os, sys
def fill(folder, limit, size):
    \"\"\"Write files of `size` bytes into `folder` until `limit` bytes or an error; remove them.\"\"\"
    written, files, outcome = 0, [], "ok"
    try:
        while written < limit:
            files.append(os.path.join(folder, f"ch4-fill-{len(files)}"))
            with open(files[-1], "wb") as f:
                for _ in range(size // 2**20):
                    f.write(b"x" * 2**20)
                    f.flush()
                    written += 2**20
    except OSError as e:
        outcome = errno.errorcode[e.errno]
    for path in files:
        os.remove(path)
    return f"{written} {outcome}"
tmp_cap, folder_cap, file_cap = map(int, sys.argv[2:5])
print(os.getcwd())
print(fill(".", 2 * tmp_cap, 2**20 * 4))
print(fill("/tmp", 2 * file_cap, 2 * file_cap))
print(fill(sys.argv[1], 2 * folder_cap, 2**20))
"""


def test_writes_stop_at_their_caps_and_never_reach_the_host_disk(boxes, monkeypatch):
    require("tmpfs")
    monkeypatch.setattr(sandbox, "TMP_SIZE", 32 * MiB)
    monkeypatch.setattr(sandbox, "FOLDER_SIZE", 4 * MiB)
    monkeypatch.setattr(sandbox, "MAX_FILE", 8 * MiB)
    box = boxes()
    host = os.statvfs(box.folder)
    assert host.f_blocks * host.f_frsize == 4 * MiB, "the private folder is not the capped tmpfs"
    assert os.stat(box.folder).st_dev != os.stat(box.folder.parent).st_dev

    done = run(box, FILL, str(box.folder), str(32 * MiB), str(4 * MiB), str(8 * MiB))
    assert done.returncode == 0, done.stderr
    cwd, in_cwd, one_file, in_folder = [line.split() for line in done.stdout.splitlines()]
    assert cwd == ["/tmp"]  # the working folder is /tmp, a tmpfs of the sandbox's own
    # tmpfs rounds to pages: "stops at the cap" means within its last MiB.
    assert in_cwd[1] == "ENOSPC" and 31 * MiB <= int(in_cwd[0]) <= 32 * MiB, in_cwd
    assert one_file == [str(8 * MiB), "EFBIG"], one_file
    assert in_folder[1] == "ENOSPC" and 3 * MiB <= int(in_folder[0]) <= 4 * MiB, in_folder
    # What the kernel wrote went to the folder's tmpfs or its own /tmp, never to the host.
    assert not list(Path("/tmp").glob("ch4-fill-*")) and not list(box.folder.parent.glob("ch4-fill-*"))


FLOOD = """
import subprocess, sys, time
started = []
try:
    while len(started) < int(sys.argv[1]):
        started.append(subprocess.Popen(["sleep", "60"]))
except OSError as e:
    print("stopped:", e, flush=True)
print(len(started), flush=True)
time.sleep(60)
"""

NEIGHBOUR = """
import subprocess, sys
children = [subprocess.Popen(["sleep", "0.5"]) for _ in range(int(sys.argv[1]))]
print(sum(child.wait() == 0 for child in children))
"""


def test_a_process_flood_stops_at_its_own_cap_and_spares_a_neighbour(boxes):
    require("pids")
    flooded = boxes(pids=64)
    cmd = [*flooded.command(ENV), sys.executable, "-c", FLOOD, "128"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as flood:
        try:
            first = flood.stdout.readline()
            assert first.startswith("stopped"), first  # the cap ended the flood, not its own count
            started = int(flood.stdout.readline())
            assert 32 <= started < 64, started  # bwrap, Python and its threads take the rest
            assert int((flooded.cgroups["pids"] / "pids.current").read_text()) <= 64
            # The flood is still holding all its processes: a neighbour starts its own anyway.
            neighbour = run(boxes(pids=64), NEIGHBOUR, "48")
            assert neighbour.returncode == 0 and neighbour.stdout.split() == ["48"], neighbour.stderr
        finally:
            flood.kill()


HOG = """
import sys
import numpy as np
hog = []
for step in range(int(sys.argv[1])):
    hog.append(np.ones(64 * 2**20 // 8))  # touched, so really resident
    print(64 * (step + 1), flush=True)
print("done")
"""


def test_memory_beyond_the_cap_kills_the_process_and_below_is_fine(boxes):
    require("memory")
    box = boxes(memory=256 * MiB)
    hog = run(box, HOG, "16")  # 1 GiB
    assert hog.returncode != 0 and "done" not in hog.stdout, hog.stdout
    assert int(hog.stdout.split()[-1]) <= 256, hog.stdout
    under = run(box, HOG, "2")  # 128 MiB
    assert under.returncode == 0 and under.stdout.split()[-1] == "done", under.stderr


def test_jax_works_under_the_default_caps(boxes):
    require("pids", "memory")
    done = run(boxes(), "import jax; print(jax.jit(lambda x: x * 2)(1.0))", timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "2.0", done.stderr[-2000:]


def test_a_real_kernel_runs_in_tmp_and_leaves_nothing_behind():
    require("tmpfs", "pids", "memory")
    session = kernel_session("import os; print(os.getcwd())")
    printed, km = session.stdout, session.km
    assert session.alive and printed == "/tmp\n", (printed, session.errors)
    assert km.sandbox_folder.name.startswith("ch4-")
    assert not mounted(km.sandbox_folder) and not km.sandbox_folder.exists()
    assert not [g for g in km.box.cgroups.values() if g.exists()], km.box.cgroups


def test_a_real_kernel_out_of_memory_dies(monkeypatch):
    require("memory")
    monkeypatch.setattr(sandbox, "MAX_MEMORY", 256 * MiB)
    code = "import numpy as np\nhog = [np.ones(64 * 2**20 // 8) for _ in range(16)]\nprint('survived')"
    session = kernel_session(code, timeout=90)  # a kernel still alive then was not stopped by its cap
    printed, km = session.stdout, session.km
    assert not session.alive and "survived" not in printed, printed
    assert not [g for g in km.box.cgroups.values() if g.exists()], km.box.cgroups


def test_cgroup_v2_puts_both_caps_on_one_group(tmp_path, monkeypatch):
    """No machine here has pids and memory on cgroup v2: check the v2 wiring on a stand-in folder."""
    monkeypatch.setattr(cgroups, "hierarchies", lambda: {"pids": (tmp_path, 2), "memory": (tmp_path, 2)})
    monkeypatch.setattr(cgroups, "remove", shutil.rmtree)
    box = sandbox.Box(require=["pids", "memory"], pids=64, memory=256 * MiB)
    group = tmp_path / box.folder.name
    try:
        assert box.cgroups == {"pids": group, "memory": group}
        assert box.held == {"pids": "pids cgroup v2", "memory": "memory cgroup v2"}
        assert (group / "pids.max").read_text() == "64" and (group / "memory.max").read_text() == str(256 * MiB)
        cmd = box.command({})
        assert [arg for arg in cmd if arg.endswith("cgroup.procs")] == [str(group / "cgroup.procs")]
        assert not [arg for arg in cmd if arg.startswith("--nproc")]
    finally:
        box.close()
    assert not group.exists() and not box.folder.exists()


def test_cgroups_that_cannot_be_entered_leave_a_working_sandbox(monkeypatch):
    require("pids")
    monkeypatch.setattr(sandbox, "ENTER_CGROUPS", "exit 125")  # as if writing cgroup.procs failed
    sandbox._probe.cache_clear()
    try:
        assert sandbox.probe() is None and "pids" not in sandbox.limits() and "memory" not in sandbox.limits()
        assert "WARNING: no per-kernel process cap" in sandbox.describe()
    finally:
        sandbox._probe.cache_clear()  # the next caller probes again, with the real wrapper


def test_describe_names_what_holds_and_what_is_missing(monkeypatch):
    require()
    for limit, how in sandbox.limits().items():
        assert how in sandbox.describe(), (limit, sandbox.describe())
    monkeypatch.setattr(sandbox, "limits", lambda: {})
    line = sandbox.describe()
    assert "WARNING" in line and "no memory cap" in line and "no per-kernel process cap" in line, line


# The judge (verdict.judge: `python -m ch4judge` on the exported programs) runs in a Box of its own.


def _judge_cells(*bodies):
    from ch4protocol import VERDICT_MARKER

    cells = [(test, f"_p = programs({test!r}, {{}})\n{VERDICT_MARKER}\n{code}\n") for test, code in bodies]
    return lambda assignment: [{"id": t, "points": 1.0, "body": b, "hidden": False} for t, b in cells]


def test_a_verdict_beyond_the_judges_memory_cap_fails_alone_and_leaves_nothing(monkeypatch):
    """A judge that runs out of memory is killed by its own cap; the test it was on fails, a new
    judge takes the rest, and each judge's Box is gone afterwards."""
    from grader import messages
    from grader.judging import verdict

    require("memory")
    made = []
    monkeypatch.setattr(verdict, "JUDGE_MEMORY", 256 * MiB)
    monkeypatch.setattr(sandbox, "Box", lambda *a, _box=sandbox.Box, **k: made.append(_box(*a, **k)) or made[-1])
    hog = "hog = [np.ones(64 * 2**20 // 8) for _ in range(16)]  # 1 GiB, touched"
    cells = _judge_cells(("first", "pass"), ("hog", hog), ("last", "assert np.ones(2**20).sum() == 2**20"))
    monkeypatch.setattr(verdict, "test_cells", cells)
    results, refusals = verdict.judge("residuals", {}, "key", timeout=60)
    assert [(r.test, r.passed) for r in results] == [("first", True), ("hog", False), ("last", True)], results
    assert results[1].message == messages.JUDGE_DIED
    assert len(made) == 2 and all(box.held.get("memory") for box in made), [box.held for box in made]
    for box in made:
        assert not mounted(box.folder) and not box.folder.exists(), box.folder
        assert not [g for g in box.cgroups.values() if g.exists()], box.cgroups


def test_the_judges_compiled_programs_folder_is_a_judges_alone(boxes, tmp_path):
    """The folder the judges of one grading process share (verdict.new_cache) is bound writable
    into a judge's sandbox, and a kernel's sandbox holds nothing of it: it may keep constants a
    verdict compiled in. It outlives the judge's Box, which removes only its own folder."""
    require("tmpfs")
    cache = verdict.new_cache(tmp_path)
    look = "import os, sys; open(sys.argv[1] + '/entry', 'w').write('x'); print(os.listdir(sys.argv[1]))"
    judge, kernel = boxes(shared=cache), boxes()
    seen = run(judge, look, str(cache))
    assert seen.stdout.strip() == "['entry']", seen.stderr[-500:]
    hidden = run(kernel, look, str(cache))
    assert hidden.returncode != 0 and "No such file or directory" in hidden.stderr, hidden.stderr[-500:]
    judge.close()
    assert (cache / "entry").read_text() == "x"


ORPHAN = """
import sys, time
from grader.kernels import sandbox
box = sandbox.Box(require=sandbox.limits())
print(box.folder, *sorted(set(map(str, box.cgroups.values()))), flush=True)
time.sleep(600)
"""


def test_a_killed_graders_boxes_are_reaped_and_a_live_ones_are_not(boxes):
    """A grader killed with SIGKILL runs no cleanup: its box's tmpfs, cgroups and folder stay.
    The next grading run (reap_orphans) removes them, and leaves alone the box of a process that
    lives, and a folder named after a pid that now belongs to another process."""
    require("tmpfs")
    child = subprocess.Popen([sys.executable, "-c", ORPHAN], cwd=REPO, stdout=subprocess.PIPE, text=True)
    folder, *groups = map(Path, child.stdout.readline().split())
    child.kill()
    child.wait()
    child.stdout.close()
    assert mounted(folder) and folder.exists() and all(g.exists() for g in groups), "the kill left nothing to reap"
    mine = boxes()
    reused = Path(tempfile.mkdtemp(prefix=f"{sandbox.BOX_PREFIX}-{os.getpid()}-1-"))  # our pid, another start time
    reaped = sandbox.reap_orphans()
    assert folder in reaped and reused in reaped, reaped
    assert not mounted(folder) and not folder.exists() and not any(g.exists() for g in groups)
    assert not reused.exists()
    assert mine.folder not in reaped and mounted(mine.folder), "a live process's box was removed"


QUICK_FOLDER = """
import time
from grader.judging import quick
print(quick._cache().parent, flush=True)
time.sleep(600)
"""


def test_a_killed_quick_paths_folder_is_removed_by_the_next_one():
    """`python -m proof try` and the self-proof keep their judges' compiled programs in a folder
    named after their process; a killed one runs no cleanup, and the next quick path removes it
    (and not the folder of one that still runs)."""
    started = [
        subprocess.Popen([sys.executable, "-c", QUICK_FOLDER], cwd=REPO, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    killed, alive = (Path(p.stdout.readline().strip()) for p in started)
    started[0].kill()
    started[0].wait()
    try:
        assert killed.is_dir() and alive.is_dir(), (killed, alive)
        done = subprocess.run([sys.executable, "-c", QUICK_FOLDER.replace("time.sleep(600)", "")], cwd=REPO,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert not killed.exists(), f"{killed} outlived its killed process"
        assert alive.is_dir(), "a running quick path's folder was removed"
        assert not Path(done.stdout.strip()).exists(), "a quick path that ended left its folder"
    finally:
        for process in started:
            process.kill()
            process.wait()
            process.stdout.close()
        shutil.rmtree(alive, ignore_errors=True)  # killed too: nothing of it runs its cleanup
