"""A class graded on a Dask cluster into a PostgreSQL gradebook gets the single-machine grades.

Real components, shared with tests/test_tampering.py (tests/conftest.py starts them once per
pytest worker): Debian's PostgreSQL, a Dask scheduler started with `python -m grader scheduler`,
and two worker processes started with `python -m grader worker`, all over mutual TLS with
certificates made for the run. The class (the reference and first wrong answer of the three
assignments that grade fastest, and an unreadable file: what is proven here does not depend on
the assignment, and every assignment goes through the whole pipeline in tests/test_selfproof.py)
is graded once on one machine (local cluster, SQLite) and once on the cluster (PostgreSQL) with
the same grading secret. The cluster run is interrupted twice: the
grading command itself is killed (SIGKILL) once three results are stored, and the same command
started again resumes while one worker is killed in the middle of a submission. Another run
loses its scheduler once its first submission is stored, and is finished by a re-run.
"""

import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
from helpers import busy_workers, dask_cluster, grade_cli, grade_command, gradebook_rows, read_csv, settle

from grader import REPO, course
from grader.cluster import certs
from grader.kernels import sandbox
from grader.pipeline import worker
from proof import answers, sample_classes

pytestmark = pytest.mark.xdist_group("cluster")  # the worker that owns the shared servers runs these
KILL_AFTER = 3  # results stored before the grading command is killed
CLASS = ("residuals", "stop_gradient", "clip_global_norm")  # a quarter of the seven's grading time


def journaled(out) -> set:
    """The submissions OUT_DIR's journal holds a whole line for (a line cut by a kill is none)."""
    path, keys = out / "course" / course.JOURNAL, set()
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        keys.add((entry["student"], entry["assignment"]))
    return keys


def left_by(pid: int) -> list[Path]:
    """The folders a worker process with this pid keeps in the temporary folder: its private
    course folder and its kernels' sandboxes (named after it)."""
    tmp = Path(tempfile.gettempdir())
    return [p for prefix in (worker.SCRATCH, sandbox.BOX_PREFIX) for p in tmp.glob(f"{prefix}-{pid}-*")]


def kill_a_worker_mid_submission(grader_worker, killed: list, stop: threading.Event):
    """Kill the first worker process seen running a sandboxed kernel (a submission in flight);
    `killed` gets its pid and the folders it had in the temporary folder."""
    while not stop.is_set():
        busy = busy_workers(grader_worker)
        if busy:
            busy[0].kill()
            killed.append((busy[0].pid, left_by(busy[0].pid)))  # what it leaves: a killed process cleans nothing
            return
        time.sleep(0.2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, postgres_server, grading_cluster):
    submitted = tmp_path_factory.mktemp("class")
    for assignment in CLASS:
        wrong = next(e for e in answers.entries(assignment) if e.kind == "wrong")
        sample_classes.write(
            submitted, "ref", assignment, sample_classes.answered(assignment, answers.reference_answer(assignment))
        )
        sample_classes.write(submitted, "wrong", assignment, sample_classes.answered(assignment, wrong.answer))
    sample_classes.write(submitted, "empty", CLASS[0], raw=b"")
    local, cluster_out = tmp_path_factory.mktemp("local"), tmp_path_factory.mktemp("cluster")
    done = grade_cli(submitted, local)
    assert done.returncode == 0, done.stderr[-3000:]
    (cluster_out / "course").mkdir()
    shutil.copy(local / "course" / "grading-secret", cluster_out / "course" / "grading-secret")  # same seeds
    url, cluster = postgres_server.database("scale_out"), grading_cluster
    on_cluster = ["--scheduler", cluster.address, "--tls", cluster.tls, "--db", url]
    settle(cluster)

    # 1. the grading command killed outright once KILL_AFTER results are stored (the unreadable
    # file is journaled before any task is sent)
    log = tmp_path_factory.mktemp("logs") / "killed-run.log"
    with open(log, "w") as sink:
        first = subprocess.Popen(grade_command(submitted, cluster_out, *on_cluster), cwd=REPO, stdout=sink, stderr=sink)
    deadline = time.monotonic() + 600
    while len(journaled(cluster_out)) < 1 + KILL_AFTER and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    first.kill()
    first.wait()
    stored = journaled(cluster_out)
    settle(cluster)  # the tasks it left running finish on the workers

    # 2. the same command again, while one worker is killed in the middle of a submission
    killed, stop = [], threading.Event()
    killer = threading.Thread(target=kill_a_worker_mid_submission, args=(cluster.worker, killed, stop))
    killer.start()
    try:
        resumed = grade_cli(submitted, cluster_out, *on_cluster)
    finally:
        stop.set()
        killer.join()
    settle(cluster)
    # 3. and once more, with nothing left to do
    again = grade_cli(submitted, cluster_out, *on_cluster)
    return {
        "submitted": submitted,
        "local": local,
        "cluster": cluster_out,
        "url": url,
        "first": (first.returncode, log.read_text(errors="replace"), stored),
        "resumed": resumed,
        "again": again,
        "killed": killed,
        "local_rows": gradebook_rows(course.sqlite_url(local / "course")),
        "cluster_rows": gradebook_rows(url),
        "dask": cluster,
    }


def test_a_killed_grading_command_resumes_where_it_stopped(runs):
    returncode, log, stored = runs["first"]
    assert returncode == -9 and len(stored) >= 1 + KILL_AFTER, f"not killed after {KILL_AFTER} results:\n{log}"
    total = len(read_csv(runs["local"]))
    assert len(stored) < total, "the run finished before it was killed"
    done = runs["resumed"]
    left = total - len(stored)
    reused = f"  {len(stored)} unchanged since the last run (results kept), 0 unreadable (0 with the reason), "
    assert reused + f"{left} to autograde" in done.stdout, done.stdout[-2000:]


def test_cluster_run_completes_despite_a_killed_worker(runs):
    done = runs["resumed"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert runs["killed"], "no worker was seen running a submission, so none was killed"
    assert "not graded" not in done.stdout


def test_what_the_killed_worker_left_is_gone_after_the_next_run(runs):
    """A worker process killed mid-submission runs no cleanup: its private course folder and its
    kernel's sandbox stay behind. The next grading run on the machine (or any other run there,
    which may come first) removes them: they carry the dead process's pid and start time."""
    [(pid, left_at_kill)] = runs["killed"]
    assert {p.name.split("-")[0] for p in left_at_kill} == {"ch04", "ch4"}, f"the killed worker left {left_at_kill}"
    assert not left_by(pid), left_by(pid)


def test_cluster_grades_equal_the_single_machine_grades(runs):
    assert read_csv(runs["cluster"]) == read_csv(runs["local"])
    assert any(float(r["score"]) < float(r["max_score"]) for r in read_csv(runs["local"]).values())


def test_postgres_gradebook_equals_the_single_machine_gradebook(runs):
    """Each submission stored once, with the scores a one-machine run stores, although a task was
    cut short by a killed worker and results by a killed command."""
    local, cluster = runs["local_rows"], runs["cluster_rows"]
    assert cluster == local
    assert {len(submissions) for submissions in cluster.values()} == {1}, "a submission was stored twice"
    # ref and wrong of each assignment, and the empty file: stored at 0 for a person to review
    assert set(cluster) == {(s, a) for s in ("ref", "wrong") for a in CLASS} | {("empty", CLASS[0])}


def test_rerun_on_the_cluster_grades_nothing_new(runs):
    again = runs["again"]
    assert again.returncode == 0 and ", 0 to autograde" in again.stdout, again.stdout[-2000:] + again.stderr[-2000:]
    assert read_csv(runs["cluster"]) == read_csv(runs["local"])


def test_the_gradebook_url_is_kept_for_formgrader_and_private(runs):
    record = runs["cluster"] / "course" / course.DB_URL_FILE
    assert record.read_text() == runs["url"]
    assert record.stat().st_mode & 0o077 == 0


def scheduler_process(address: str) -> psutil.Process:
    port = address.rsplit(":", 1)[1]
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if "distributed.cli.dask_scheduler" in command and port in command:
            return process
    raise AssertionError(f"no scheduler process listens on {address}")


def test_every_node_listens_on_its_address_over_tls_only(runs):
    """The scheduler and `grader worker`'s processes (its nannies, their workers) listen on the
    host they were given and only on their TLS addresses: no HTTP server, no other interface."""
    from distributed import Client, Security

    cluster = runs["dask"]
    settle(cluster)  # a worker killed by a test sharing the cluster is back
    ca, cert, key = (str(p) for p in certs.paths(cluster.tls, "client"))
    security = Security(require_encryption=True, tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key)
    with Client(cluster.address, security=security, timeout="10s") as client:
        workers = client.scheduler_info()["workers"]
    addresses = [cluster.address, *workers, *(w["nanny"] for w in workers.values())]
    assert len(workers) == 2 and all(a.startswith("tls://127.0.0.1:") for a in addresses), addresses
    grader_worker = psutil.Process(cluster.worker.pid)
    nodes = [scheduler_process(cluster.address), grader_worker, *grader_worker.children(recursive=True)]
    sockets = {(c.laddr.ip, c.laddr.port) for p in nodes for c in p.net_connections("inet") if c.status == "LISTEN"}
    assert sockets == {("127.0.0.1", int(a.rsplit(":", 1)[1])) for a in addresses}


def test_a_lost_scheduler_stops_the_run_cleanly_and_a_rerun_grades_the_rest(runs, tmp_path, grading_cluster):
    """The scheduler dies after the first submission is stored: the command ends with a one-line
    error and keeps what was stored; a re-run on another cluster grades only the rest, and the
    class ends with the single-machine grades."""
    out = tmp_path / "out"
    (out / "course").mkdir(parents=True)
    shutil.copy(runs["local"] / "course" / "grading-secret", out / "course" / "grading-secret")
    log = tmp_path / "first-run.log"
    (tmp_path / "logs").mkdir()
    with dask_cluster(tmp_path / "logs") as cluster, open(log, "w") as sink:
        command = grade_command(runs["submitted"], out, "--scheduler", cluster.address, "--tls", cluster.tls)
        first = subprocess.Popen(command, cwd=REPO, stdout=sink, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 600
        while not journaled(out) - {("empty", CLASS[0])} and first.poll() is None:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        assert first.poll() is None, log.read_text()[-3000:]
        scheduler_process(cluster.address).kill()
        try:
            _, stderr = first.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            first.kill()
            raise AssertionError("grader grade still runs 5 minutes after its scheduler was lost") from None
    stdout = log.read_text()
    assert first.returncode == 1, stdout[-2000:] + stderr[-2000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "were not graded" in lines[0] and "run the same command again" in lines[0], stderr
    sent = int(re.search(r"(\d+) to autograde", stdout).group(1))
    stored = len(re.findall(r"^ +\[ *\d+/\d+\] ", stdout, re.MULTILINE))
    left = stdout.count("  not graded ")
    assert stdout.count(": the connection to the Dask scheduler was lost\n") == left, stdout
    assert stored >= 1 and left >= 1 and stored + left == sent, stdout
    # and the unreadable file, which no worker sees: its 0 is in grades.csv and the gradebook
    assert len(read_csv(out)) == stored + 1
    rows = gradebook_rows(course.sqlite_url(out / "course"))
    assert len(rows) == stored + 1 and ("empty", CLASS[0]) in rows, rows
    assert {len(submissions) for submissions in rows.values()} == {1}, rows

    settle(grading_cluster)
    again = grade_cli(runs["submitted"], out, "--scheduler", grading_cluster.address, "--tls", grading_cluster.tls)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f", {left} to autograde" in again.stdout, again.stdout[-2000:]
    assert read_csv(out) == read_csv(runs["local"])


@pytest.mark.parametrize(
    "option, message",
    [
        (["--scheduler", "tls://127.0.0.1:9"], "cannot reach the Dask scheduler at tls://127.0.0.1:9"),
        (["--db", "postgresql+psycopg://grader:secret@127.0.0.1:9/gradebook"], "cannot reach the gradebook database"),
    ],
    ids=["scheduler", "database"],
)
def test_unreachable_servers_are_one_line_and_write_nothing(tmp_path, option, message):
    submitted, out = tmp_path / "class", tmp_path / "out"
    sample_classes.write(
        submitted, "ref", "safe_norm", sample_classes.answered("safe_norm", answers.reference_answer("safe_norm"))
    )
    certs.make(tmp_path / "tls")  # the cluster's certificates are there: only the server is missing
    done = grade_cli(submitted, out, *option, "--tls", tmp_path / "tls", timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "secret" not in done.stderr, "the password was printed"
    assert not out.exists(), sorted(p.name for p in out.rglob("*"))


def test_a_worker_refuses_a_task_for_another_course_version():
    """A task whose course digest is not this worker's is refused, never graded (and never
    zeroed: grader/cluster/engine.py leaves it for a re-run)."""
    from grader.pipeline import worker

    task = fake_task("s", digest="a digest of some other course")
    with pytest.raises(worker.CourseMismatch, match="another version of the course"):
        worker.grade_task(task)


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own, on its failure path
def test_a_notebook_nbgrader_cannot_process_is_reported_with_what_was_raised():
    """Past intake, nbgrader may still fail on a notebook (here bytes that are not JSON, handed to
    the worker directly). Its reason is what was raised, not nbgrader's closing line, which says
    only "see the traceback above" (the traceback itself is not kept)."""
    from grader import messages
    from grader.pipeline import staging, worker

    task = worker.Task("s", "safe_norm", b"{not json", "0" * 64, staging.source_digest("safe_norm"), 60, 300)
    graded = worker.grade_task(task)
    raised = "nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{not json'"
    assert not graded.result.succeeded and graded.result.notes == [messages.nbgrader_failed(raised)], graded.result


def fake_task(student: str, digest: str = "digest"):
    from grader.pipeline import worker

    return worker.Task(student, "safe_norm", b"{}", "0" * 64, digest, 60, 300)


class FakeClient:
    """A Dask client for `engine.run` without Dask: a future's result() is `outcome(task)`, and
    `events` lists every submit and every result in order. Use with the `no_dask` fixture."""

    def __init__(self, outcome):
        self.outcome, self.events = outcome, []

    def submit(self, function, task, pure):
        self.events.append(("submit", task.student))
        client = self

        class Future:
            def result(self):
                client.events.append(("result", task.student))
                return client.outcome(task)

        return Future()


@pytest.fixture
def no_dask(monkeypatch):
    """`engine.run` takes the futures in the order they were sent."""
    import distributed

    monkeypatch.setattr(distributed, "as_completed", iter)


def test_a_result_cut_off_by_the_lost_scheduler_is_left_for_a_rerun(no_dask):
    """The scheduler can die while the client is fetching a finished result from it: Dask then
    raises CommClosedError instead of cancelling the future. That submission is left ungraded
    with the same reason as the others (the lost-scheduler run above meets it by chance)."""
    from distributed.comm import CommClosedError

    from grader.cluster import engine

    def outcome(task):
        raise CommClosedError("in <TLS (closed) ConnectionPool.gather>: Stream is closed")

    task = fake_task("s")
    assert engine.run(FakeClient(outcome), [task], on_done=lambda *done: pytest.fail(f"stored {done}")) == {
        task.key: engine.SCHEDULER_LOST
    }


def test_a_task_given_up_beside_a_killer_is_tried_again_alone(no_dask):
    """Dask gives up on the honest task too when it was on the worker at each death another task
    caused. Both are sent again after the rest, one at a time: the honest one is graded, the one
    that still kills its worker alone scores 0 with the reason (tests/test_cluster_security.py
    meets the killer on a real cluster)."""
    import distributed

    from grader import messages
    from grader.cluster import engine
    from grader.pipeline import worker

    def outcome(task):
        if task.student == "killer" or client.events.count(("result", "honest")) == 1:
            raise distributed.KilledWorker(task.student, None, 3)
        return worker.Graded(worker.Result(True))

    client, stored = FakeClient(outcome), {}
    tasks = [fake_task("honest"), fake_task("killer")]
    assert engine.run(client, tasks, on_done=lambda task, graded: stored.update({task.student: graded})) == {}
    assert stored["honest"].result.succeeded and stored["honest"].result.notes == []
    assert not stored["killer"].result.succeeded and stored["killer"].result.notes == [messages.WORKER_DIED]
    assert client.events == [("submit", "honest"), ("submit", "killer"), ("result", "honest"), ("result", "killer")] + [
        (step, student) for student in ("honest", "killer") for step in ("submit", "result")
    ], "not tried again after the others, one at a time"


CLUSTER_OWNER = """
import sys, time
from pathlib import Path
from grader.cluster import engine
with engine.scheduler_with_workers(Path(sys.argv[1]), 1):
    print("started", flush=True)
    time.sleep(600)
"""


def still_there_and(keep, process) -> bool:
    """keep(process), False for a process that ended meanwhile (PostgreSQL's startup process
    ends on its own once the server is up; CI once met one between listing and reading it)."""
    try:
        return keep(process)
    except psutil.NoSuchProcess:
        return False


def kill_the_owner(script: str, *args: str, timeout: float, keep=lambda process: True):
    """Run `script`, which prints a line starting "started" once what it owns runs, then SIGKILL
    it (it runs no cleanup): (the rest of that line, the processes it had started that `keep`
    keeps, those still running `timeout` seconds later). Kills whatever survived."""
    owner = subprocess.Popen([sys.executable, "-c", script, *args], cwd=REPO, stdout=subprocess.PIPE)
    started = []
    try:
        said = owner.stdout.readline().decode().split()
        assert said[:1] == ["started"], "what the owner starts did not start"
        started = [p for p in psutil.Process(owner.pid).children(recursive=True) if still_there_and(keep, p)]
        owner.kill()
        owner.wait()
        return said[1:], started, psutil.wait_procs(started, timeout=timeout)[1]
    finally:
        owner.kill()
        owner.stdout.close()
        for process in started:  # what outlived its owner, if the test failed
            with contextlib.suppress(psutil.Error):
                process.kill()


def test_a_cluster_goes_with_the_process_that_started_it(tmp_path):
    """The tests and the benchmark start a scheduler and a worker command as an instructor would
    (engine.scheduler_with_workers); killed with SIGKILL, their owner runs no cleanup, and the
    kernel's parent-death signal stops both, and with them the worker's processes."""
    _, started, alive = kill_the_owner(CLUSTER_OWNER, str(tmp_path), timeout=90)
    assert len(started) >= 3, started  # the scheduler, the worker command, its worker process
    assert not alive, f"still running after their owner was killed: {[p.cmdline()[:4] for p in alive]}"


POSTGRES_OWNER = """
import sys, time
sys.path.insert(0, "tests")
from helpers import postgres
with postgres() as server:
    print("started", server.folder, flush=True)
    time.sleep(600)
"""


def test_a_postgres_server_goes_with_the_process_that_started_it():
    """The tests' PostgreSQL server (helpers.postgres) dies with the process that started it: a
    SIGKILLed test run used to leave it running (pg_ctl detached it)."""
    said, started, alive = kill_the_owner(
        POSTGRES_OWNER, timeout=60, keep=lambda process: "postgres" in " ".join(process.cmdline())
    )
    shutil.rmtree(said[0], ignore_errors=True)  # its folder: what the killed owner could not remove
    assert started, "no postgres process under its owner"
    assert not alive, f"still running after their owner was killed: {[p.cmdline()[:4] for p in alive]}"
