"""What several test modules need (not a test module; CONTRIBUTING: a test module never imports
another one): the grading command and what it writes, Debian's PostgreSQL and a Dask cluster
started as an instructor starts them, one sandboxed kernel session, and Chromium.

The session-wide servers (one PostgreSQL server, one grading cluster per pytest worker) are the
fixtures in tests/conftest.py, built from the context managers here.
"""

import asyncio
import builtins
import contextlib
import csv
import hashlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import ch4judge
import nbformat
import numpy as np
import psutil
import pytest
from ch4protocol import EXPORT_HELPER_NAMES, derive_seed, free_names, sizes_key, sizes_seed
from jupyter_servers import free_port

from grader import REPO, messages
from grader.cluster import engine
from grader.judging import verdict
from grader.kernels import manager
from proof import answers

# —— the grading command and what it writes ——


def student_pins():
    """tools/student_pins.py (what `make pins` runs; a script, not a package): `left_out`, `without`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("student_pins", REPO / "tools" / "student_pins.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grade_cli(submitted, out, *extra, jobs=2, timeout=900, **run) -> subprocess.CompletedProcess:
    """`python -m grader grade SUBMITTED --out OUT --jobs 2 EXTRA...` from the repository root."""
    return subprocess.run(
        grade_command(submitted, out, *extra, jobs=jobs),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        **run,
    )


def grade_command(submitted, out, *extra, jobs=2) -> list[str]:
    return [sys.executable, "-m", "grader", "grade", str(submitted), "--out", str(out), "--jobs", str(jobs)] + [
        str(e) for e in extra
    ]


def score_table_line(stdout: str, student: str) -> str:
    """The line of the score table the grading command printed for `student`."""
    return next(line for line in stdout.splitlines() if line.startswith(student + " "))


def read_csv(out: Path) -> dict:
    """grades.csv as {(student_id, assignment): its row}; a submission with two rows fails."""
    with open(Path(out) / "grades.csv", encoding="utf-8") as handle:
        rows = [((r["student_id"], r["assignment"]), r) for r in csv.DictReader(handle)]
    keys = [key for key, _ in rows]
    assert len(set(keys)) == len(keys), f"grades.csv counts a submission twice: {sorted(keys)}"
    return dict(rows)


def scores(out: Path) -> dict:
    """grades.csv as {(student_id, assignment): (score, max_score)}."""
    return {key: (float(r["score"]), float(r["max_score"])) for key, r in read_csv(out).items()}


def checksums(folder: Path) -> dict:
    """{relative path: sha256} of every file under `folder` (a symbolic link counts by its target's text)."""
    folder = Path(folder)
    return {
        str(p.relative_to(folder)): hashlib.sha256(
            str(p.readlink()).encode() if p.is_symlink() else p.read_bytes()
        ).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def gradebook_rows(url: str) -> dict:
    """Every stored submission in a gradebook: {(student, assignment): [{test: (auto_score,
    manual_score)} for each submission row]}. A list longer than one is a submission counted twice."""
    from nbgrader.api import Gradebook, SubmittedAssignment

    from grader import course

    rows = {}
    with Gradebook(url, course.COURSE_ID) as gb:
        for s in gb.db.query(SubmittedAssignment):
            grades = {g.name: (g.auto_score, g.manual_score) for nb in s.notebooks for g in nb.grades}
            rows.setdefault((s.student.id, s.assignment.name), []).append(grades)
    return rows


# —— servers: Debian's PostgreSQL, a Dask cluster ——


def _postgres_bin() -> Path:
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parts[-3]))
    if not versions:
        pytest.fail("PostgreSQL is not installed: apt-get install postgresql (Debian's server is what the test uses)")
    return versions[-1].parent


class Postgres:
    """A running server: `database(name)` makes an empty database and gives its SQLAlchemy URL."""

    def __init__(self, run, bin_dir: Path, port: int, folder: Path):
        self._run, self._bin, self.port, self.folder = run, bin_dir, port, folder

    def database(self, name: str) -> str:
        self._run(str(self._bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "grader", name)
        return f"postgresql+psycopg://grader@127.0.0.1:{self.port}/{name}"


@contextlib.contextmanager
def postgres():
    """A PostgreSQL server of its own, in a temporary folder; yields a `Postgres`. As root the
    server runs as user postgres (it refuses to run as root). It is this process's child and dies
    with it (`setpriv --pdeathsig`): a killed test run leaves no server behind (`pg_ctl start`
    detached it, and one stayed after every SIGKILLed `make test`)."""
    bin_dir, port = _postgres_bin(), free_port()
    folder = Path(tempfile.mkdtemp(prefix="ch04-pg-"))
    as_server = ["--reuid", "postgres", "--regid", "postgres", "--init-groups"] if os.geteuid() == 0 else []
    if as_server:
        shutil.chown(folder, "postgres", "postgres")
    data = folder / "data"

    def run(*command):
        done = subprocess.run(["setpriv", *as_server, "--", *command], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "grader", "-A", "trust", "--no-sync")
    options = ["-p", str(port), "-k", str(folder), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]
    with open(folder / "server.log", "wb") as log:
        server = subprocess.Popen(
            ["setpriv", *as_server, "--pdeathsig", "KILL", "--", str(bin_dir / "postgres"), "-D", str(data), *options],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        ready = [str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]
        while subprocess.run(ready).returncode != 0:
            assert server.poll() is None and time.monotonic() < deadline, (folder / "server.log").read_text()[-3000:]
            time.sleep(0.2)
        yield Postgres(run, bin_dir, port, folder)
    finally:
        server.send_signal(signal.SIGQUIT)  # PostgreSQL's immediate shutdown
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int = 2):
    """`python -m grader scheduler` and `python -m grader worker` with `workers` processes, over
    mutual TLS with certificates of their own in `folder/tls` (grader/cluster/engine.py starts them as an
    instructor would); yields an `engine.Cluster`: (address, tls, worker), where `tls` is what
    a client passes as `grade.grade(..., tls=)` or `--tls`."""
    try:
        with engine.scheduler_with_workers(folder, workers) as running:
            yield running
    except engine.EngineError as err:
        pytest.fail(str(err))


def worker_processes(grader_worker) -> list[psutil.Process]:
    return engine.worker_processes(grader_worker.pid)


def busy_workers(grader_worker) -> list[psutil.Process]:
    """The worker processes running a sandboxed kernel right now (a submission in flight)."""
    busy = []
    for process in worker_processes(grader_worker):
        with contextlib.suppress(psutil.NoSuchProcess):
            if any("bwrap" in " ".join(c.cmdline()) for c in process.children(recursive=True)):
                busy.append(process)
    return busy


def settle(cluster: engine.Cluster, workers: int = 2, timeout: float = 180) -> None:
    """Wait until the cluster has `workers` worker processes again (a killed one is restarted by
    its nanny) and none of them runs a kernel: a test that shares the cluster finds it as new."""
    deadline = time.monotonic() + timeout
    while len(worker_processes(cluster.worker)) < workers or busy_workers(cluster.worker):
        assert time.monotonic() < deadline, "the shared grading cluster did not settle"
        time.sleep(0.5)


# —— one sandboxed kernel session ——


@dataclass
class Session:
    stdout: str  # what the code printed
    errors: str  # the traceback, if it raised
    km: manager.SandboxKernelManager
    alive: bool  # whether the kernel was alive once the code finished (or died)


def kernel_session(code: str, timeout: float = 120) -> Session:
    """Start a SandboxKernelManager kernel, run `code` (for at most `timeout` seconds), shut the kernel down."""
    return asyncio.run(_session(code, timeout))


async def _session(code: str, timeout: float) -> Session:
    km = manager.SandboxKernelManager(kernel_name="python3")
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    printed, errors = [], []
    try:
        await kc.wait_for_ready(timeout=60)
        msg_id = kc.execute(code)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and await km.is_alive():
            try:
                msg = await kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                printed.append(msg["content"]["text"])
            if msg["msg_type"] == "error":
                errors.append("\n".join(msg["content"]["traceback"]))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        alive = await km.is_alive()
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
    return Session("".join(printed), "".join(errors), km, alive)


def saved_answer(path) -> str | None:
    """The answer cell of a notebook Jupyter saves; None while the server is still writing the
    file (it truncates it first, so a read in between sees an empty or partial notebook)."""
    try:
        return answers.answer_cell(nbformat.read(path, as_version=4)).source
    except nbformat.reader.NotJSONError:
        return None


# —— Chromium, for the browser checks ——

CHROMIUM = Path("/usr/bin/chromium")


def chromium() -> Path:
    """Debian's Chromium, which `make setup` installs: a failure on CI without it, a loud skip elsewhere."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: make setup installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium): THE BROWSER TESTS DID NOT RUN")
    return CHROMIUM


def only_requests_to(prefix: str, outside: list):
    """A Playwright route handler: requests that start with `prefix` go through; any other is
    aborted and its URL kept in `outside` (a page must need nothing from elsewhere)."""

    def route(request_route):
        if request_route.request.url.startswith(prefix):
            request_route.continue_()
        else:
            outside.append(request_route.request.url)
            request_route.abort()

    return route


# What the removed answering rules refused, in an honest answer: valid Python 3.12+ that reaches the
# kernel as written (tests/test_intake.py) and runs there (tests/test_student_view.py).
HONEST_UNUSUAL = """
import os
import sys


class Registry:
    kinds = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Registry.kinds.append(cls.__name__)


class Save(Registry):
    pass


def describe(value):
    match value:
        case {"kind": str(kind)}:
            return kind
        case _:
            return getattr(jnp, "_src", None) and type(value).__name__
"""


# —— what the judge alone knows: the hidden inputs of a student ——


class _Recording:
    """A NumPy Generator that keeps every array it draws (the hidden inputs)."""

    def __init__(self, generator, drawn: list):
        self._generator, self._drawn = generator, drawn

    def __getattr__(self, name):
        method = getattr(self._generator, name)

        def draw(*args, **kwargs):
            value = method(*args, **kwargs)
            if name in ("uniform", "normal", "standard_normal", "dirichlet") and np.size(value) >= 16:
                self._drawn.append(np.asarray(value, np.float32))
            return value

        return draw


def significant_digits(number: str) -> str:
    """The digits of a printed number that make it specific: its mantissa's, leading and trailing
    zeros aside (1.136 recurs by chance on a page of numbers; 0.261820 is 26182)."""
    return number.lower().partition("e")[0].replace(".", "").strip("0")


def float_leaves(value):
    """The floating-point arrays and numbers in `value`, nested in tuples, lists and dicts."""
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from float_leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from float_leaves(item)
    elif isinstance(value, (float, np.floating, np.ndarray)) and np.issubdtype(np.asarray(value).dtype, np.floating):
        yield np.asarray(value)


class _Unrun:
    """A program the verdict looks up but cannot run. Before its first call it answers what it
    can, so that the verdict goes on to that call: an attribute or an entry is itself, it equals
    anything and orders before nothing (the rest, e.g. NumPy's comparisons, stops the verdict).
    Its call keeps the arrays it is given (what the hidden test made of its draws: scaled,
    normalised, joined) and stops the verdict."""

    def __init__(self, drawn: list):
        self._drawn = drawn

    def __getattr__(self, name):
        return self

    def __getitem__(self, index):
        return self

    def __eq__(self, other):
        return True

    def __lt__(self, other):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    __hash__ = object.__hash__

    def __iter__(self):
        raise AssertionError("not run here")  # a method check iterates one: stop there

    def __call__(self, *args, **kwargs):
        # not one number repeated: a zero vector is no secret, and 0.0 is on every page
        self._drawn += [a.astype(np.float32) for a in float_leaves((args, kwargs)) if a.size >= 2 and np.ptp(a) > 0]
        raise AssertionError("not run here")


class _Unexported(ch4judge.Programs):
    """Every program a verdict names is there, none of them runs."""

    def __init__(self, drawn: list):
        super().__init__({})
        self._drawn = drawn

    def __contains__(self, name):
        return True

    def __getitem__(self, name):
        return _Unrun(self._drawn)

    def reason(self, name):
        return ""


def hidden_inputs(assignment: str, key: str) -> list[np.ndarray]:
    """The random arrays the judge draws for a student's hidden tests, and the arrays each test
    gives the first program it calls (made from them): each hidden verdict run here up to that
    call, or a question about a program `_Unrun` cannot answer, with a recording generator."""
    drawn = []
    real = np.random.default_rng
    np.random.default_rng = lambda seed=None: _Recording(real(seed), drawn)
    try:
        for test in verdict.test_cells(assignment):
            if not test["hidden"]:
                continue
            names = {
                "programs": lambda *args: _Unexported(drawn),
                "seed_for": lambda t: derive_seed(key, t),
                "sizes_for": lambda t: real(sizes_seed(sizes_key(key), t)),  # sizes, not inputs: not recorded
            }
            space = ch4judge.namespace(test["body"], names)
            space.update(dict.fromkeys(EXPORT_HELPER_NAMES, lambda *a, **k: None))
            # as the judge does: the student's names the export part mentions exist, as None
            space.update({n: None for n in free_names(test["body"]) if n not in space and not hasattr(builtins, n)})
            try:
                ch4judge.run_body(test["body"], space, "<hidden inputs>")
            except (AssertionError, TypeError, ValueError):
                pass  # the first program it runs, or a question the program cannot answer: all before is recorded
    finally:
        np.random.default_rng = real
    assert drawn, f"no hidden input of {assignment} recorded: the check would prove nothing"
    return drawn


NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a program's or an operation's name (atan2, sin2_save)


def unexplained_numbers(message: str, body: str) -> list[str]:
    """The digits left in a hidden test's message once the course's own text is taken out: the test
    body's and the kit's string pieces and its title, then names. Any left is a number the judge
    computed, perhaps from a hidden input or from what the answer returned on one (a hidden
    message carries none: kit/ch4messages.py, `Hidden`)."""
    hidden = ch4judge.Hidden(body, ch4judge.kit_pieces())
    # a test stopped at its time limit says the limit: the course's constant (grader/course.py)
    timed_out = re.escape(messages.test_timed_out("TEST", 0)).replace("TEST", r"\S+").replace(r"\ 0\ ", r"\ [\d.]+\ ")
    rest = re.sub(timed_out, "", message)
    for text in [hidden.title, *hidden.pieces]:  # the longest first
        if text:
            rest = rest.replace(text, "")
    rest = NAME.sub("", rest)
    return re.findall(r"\d+", rest)
