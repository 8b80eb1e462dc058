"""The grading cluster admits only its own (#22), with real Dask processes and real certificates.

A scheduler started with `python -m grader scheduler` and one worker that holds a course
certificate but is rogue (tests/rogue_worker.py: it forges mallory's result and grades the
others honestly). Around them:

* a client without a certificate, one with another CA's certificate, plain TCP and a worker
  with another CA's certificate are refused by the scheduler;
* `grade --scheduler tcp://...`, and `grader worker` and `grader scheduler` without
  certificates, stop with one line (exit 2);
* the forged result scores 0 with "result refused" while alice, graded by the same worker, keeps
  full marks; `store.refusal` turns down every malformed result a worker could return;
* zed's task kills the worker that runs it, every time, also when tried again on its own: it scores
  0 with the reason;
* a grading command whose course differs from the worker's gets its task refused: the
  submission is left ungraded, not zeroed, and the command exits 1;
* the grading command refuses a scheduler whose certificate another CA signed;
* the local cluster of a plain `grade` listens on loopback only, over TLS, with no HTTP server,
  and admits no one without its throw-away certificates.
"""

import json
import math
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from helpers import grade_cli, grade_command, gradebook_rows, read_csv, score_table_line
from jupyter_servers import free_port

from grader import REPO, course, messages
from grader.cluster import certs, engine
from grader.pipeline import store, worker
from proof import answers, sample_classes

pytestmark = pytest.mark.xdist_group("cluster_security")  # one worker owns the scheduler
ROGUE = Path(__file__).with_name("rogue_worker.py")


def start(command: list, log: Path) -> subprocess.Popen:
    with open(log, "wb") as sink:
        return subprocess.Popen(
            [str(c) for c in command], cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )


def dask_worker(address: str, ca: Path, own: Path, log: Path, *extra) -> subprocess.Popen:
    """A plain `dask worker` that trusts `ca` and shows the worker certificate in `own`."""
    tls = ["--tls-ca-file", ca, "--tls-cert", own / "worker.pem", "--tls-key", own / "worker.key"]
    options = ["--nworkers", "1", "--nthreads", "1", "--memory-limit", "0", "--host", "127.0.0.1", "--no-dashboard"]
    return start([sys.executable, "-m", "distributed.cli.dask_worker", address, *tls, *options, *extra], log)


def client_security(folder: Path, ca: Path | None = None):
    from distributed import Security

    ca_file, cert, key = certs.paths(folder, "client")
    return Security(
        require_encryption=True, tls_ca_file=str(ca or ca_file), tls_client_cert=str(cert), tls_client_key=str(key)
    )


def workers_of(address: str, tls: Path) -> dict:
    from distributed import Client

    with Client(address, security=client_security(tls), timeout="10s") as client:
        return client.scheduler_info()["workers"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The scheduler (course CA) with the rogue worker joined; another CA's folder beside."""
    folder = tmp_path_factory.mktemp("cluster")
    tls, foreign = folder / "tls", folder / "foreign"
    certs.make(tls, ["127.0.0.1"])
    certs.make(foreign)
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    grader = [sys.executable, "-m", "grader"]
    scheduler = start(grader + ["scheduler", "--host", "127.0.0.1", "--port", port, "--tls", tls], folder / "s.log")
    rogue = dask_worker(address, tls / "ca.pem", tls, folder / "rogue.log", "--preload", ROGUE)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if workers_of(address, tls):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and rogue.poll() is None, (folder / "rogue.log").read_text()[-3000:]
            time.sleep(0.5)
        yield {
            "address": address,
            "port": port,
            "tls": tls,
            "foreign": foreign,
            "folder": folder,
            "scheduler": scheduler,
        }
    finally:
        for process in (rogue, scheduler):
            engine.stop_process_group(process)


def test_the_scheduler_listens_on_the_given_address_only_over_tls(cluster):
    process = psutil.Process(cluster["scheduler"].pid)
    listening = {(c.laddr.ip, c.laddr.port) for c in process.net_connections("inet") if c.status == "LISTEN"}
    assert listening == {("127.0.0.1", cluster["port"])}, "no HTTP server, nothing on another interface"


def hangs_up(port: int, context: ssl.SSLContext) -> bool:
    """Whether the server on `port` ends the connection during or right after the TLS handshake
    (an alert, a reset or a plain close: which one depends on timing). A Dask node that accepts
    a peer greets it first: then the bytes of that greeting arrive instead."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        try:
            with context.wrap_socket(raw) as tls:
                return tls.recv(16) == b""
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
            return True


def scheduler_log_once_it_says(cluster, *needles: str, timeout: float = 30) -> str:
    """The scheduler's log once every needle is in it (or the timeout passed): a client can see its
    refusal before the scheduler has written why, so reading the log at once raced it (CI, stop 41)."""
    deadline = time.monotonic() + timeout
    while True:
        log = (cluster["folder"] / "s.log").read_text(errors="replace")
        if all(needle in log for needle in needles) or time.monotonic() > deadline:
            return log
        time.sleep(0.2)


def test_a_client_without_a_course_certificate_is_refused(cluster):
    from distributed import Client

    address, port = cluster["address"], cluster["port"]
    # TLS that trusts the course CA but shows no certificate: the scheduler asks for one and hangs
    # up (its log, below, says why)
    context = ssl.create_default_context(cafile=str(cluster["tls"] / "ca.pem"))
    context.check_hostname = False
    assert hangs_up(port, context)
    # Dask without TLS, to the same port
    with pytest.raises((OSError, TimeoutError)):
        Client(f"tcp://127.0.0.1:{port}", timeout="5s")
    # a certificate of another CA (the client trusts the course CA, so only the scheduler refuses)
    with pytest.raises((OSError, TimeoutError)):
        Client(address, security=client_security(cluster["foreign"], ca=cluster["tls"] / "ca.pem"), timeout="5s")
    log = scheduler_log_once_it_says(cluster, "PEER_DID_NOT_RETURN_A_CERTIFICATE", "CERTIFICATE_VERIFY_FAILED")
    assert "PEER_DID_NOT_RETURN_A_CERTIFICATE" in log and "CERTIFICATE_VERIFY_FAILED" in log, log[-3000:]
    assert len(workers_of(address, cluster["tls"])) == 1  # and a course certificate still gets in


def test_a_worker_with_another_cas_certificate_never_joins(cluster, tmp_path):
    address, tls = cluster["address"], cluster["tls"]
    before = set(workers_of(address, tls))
    foreign = dask_worker(address, tls / "ca.pem", cluster["foreign"], tmp_path / "foreign.log")
    try:
        foreign.wait(timeout=60)  # it gives up: the scheduler refused its certificate
    finally:
        engine.stop_process_group(foreign)
    assert foreign.returncode != 0
    assert set(workers_of(address, tls)) == before
    assert "TLS handshake failed" in scheduler_log_once_it_says(cluster, "TLS handshake failed")


def one_line_exit_2(command: list, timeout=120) -> str:
    done = subprocess.run([str(c) for c in command], cwd=REPO, capture_output=True, text=True, timeout=timeout)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, f"{done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return lines[0]


@pytest.mark.parametrize(
    "command, message",
    [
        (["worker", "tcp://127.0.0.1:9"], "must be tls://HOST:PORT"),
        (["worker", "tls://127.0.0.1:9", "--tls", "{empty}"], "no TLS certificate"),
        (["scheduler", "--host", "127.0.0.1", "--tls", "{empty}"], "no TLS certificate"),
        (["grade", "{class}", "--out", "{out}", "--scheduler", "tcp://127.0.0.1:9"], "must be tls://HOST:PORT"),
        (["grade", "{class}", "--out", "{out}", "--scheduler", "tls://127.0.0.1:9", "--tls", "{empty}"], "no TLS"),
    ],
    ids=["worker-tcp", "worker-no-certs", "scheduler-no-certs", "grade-tcp", "grade-no-certs"],
)
def test_nothing_runs_without_tls(tmp_path, command, message):
    submitted = tmp_path / "class"
    sample_classes.write(submitted, "alice", "safe_norm", raw=b"")
    names = {"{empty}": tmp_path / "empty", "{class}": submitted, "{out}": tmp_path / "out"}
    (tmp_path / "empty").mkdir()
    line = one_line_exit_2([sys.executable, "-m", "grader", *[names.get(c, c) for c in command]])
    assert message in line, line
    assert not (tmp_path / "out").exists()


def wait_for_one_worker(address: str, tls: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while len(workers_of(address, tls)) != 1:
        assert time.monotonic() < deadline, "the rogue worker did not come back"
        time.sleep(0.5)


def page_of(out: Path, student: str) -> str:
    """A student's feedback page; "" when there is none (the tests that read it then fail)."""
    path = out / "feedback" / student / "safe_norm" / "safe_norm.html"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@pytest.fixture(scope="module")
def forged_run(cluster, tmp_path_factory):
    """alice (the reference) and mallory (blank) graded on the rogue worker; then, in a run of its
    own (its own OUT_DIR), zed (the reference, whose task kills the worker running it), so that
    what alice and mallory get does not depend on where zed's deaths fall (an honest task that
    Dask gives up on beside a killer is tried again alone: tests/test_scale_out.py)."""
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    reference = sample_classes.answered("safe_norm", answers.reference_answer("safe_norm"))
    sample_classes.write(submitted, "alice", "safe_norm", reference)
    release = course.notebook_path(course.EXERCISES, "safe_norm").read_bytes()
    sample_classes.write(submitted, "mallory", "safe_norm", raw=release)
    on_cluster = ["--scheduler", cluster["address"], "--tls", cluster["tls"]]
    done = grade_cli(submitted, out, *on_cluster, jobs=1, timeout=900)
    alone, alone_out = tmp_path_factory.mktemp("zed"), tmp_path_factory.mktemp("zed-graded")
    sample_classes.write(alone, "zed", "safe_norm", reference)
    died = grade_cli(alone, alone_out, *on_cluster, jobs=1, timeout=900)
    wait_for_one_worker(cluster["address"], cluster["tls"])  # its nanny restarts it after zed
    journal = [
        json.loads(line) for o in (out, alone_out) for line in (o / "course" / course.JOURNAL).read_text().splitlines()
    ]
    return {
        "done": done,
        "died": died,
        "rows": {student: row for o in (out, alone_out) for (student, _), row in read_csv(o).items()},
        "journal": {e["student"]: e for e in journal},
        "out": out,
        "pages": {"mallory": page_of(out, "mallory"), "zed": page_of(alone_out, "zed")},
        "scheduler_log": (cluster["folder"] / "s.log").read_text(errors="replace"),
    }


def test_a_forged_result_scores_0_and_the_others_keep_their_grades(forged_run):
    done, rows = forged_run["done"], forged_run["rows"]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert rows["mallory"]["score"] == "0" and rows["alice"]["score"] == rows["alice"]["max_score"] == "14", rows
    assert forged_run["journal"]["mallory"]["notes"] == [messages.result_refused()]
    assert "result refused" in messages.result_refused() and "result refused" in forged_run["pages"]["mallory"]
    assert not forged_run["journal"]["alice"]["notes"]
    refused = [line for line in done.stderr.splitlines() if "refused" in line]
    assert len(refused) == 1 and refused[0].startswith("grader grade: refused the result of mallory/safe_norm: "), (
        done.stderr
    )
    assert "700" in refused[0] and "outside 0.." in refused[0], refused


def test_a_task_whose_workers_keep_dying_scores_0_with_the_reason(forged_run):
    """Dask starts a new worker each time and tries again; when it gives up, the submission (a
    correct one: only its task's fate counts here) scores 0 and says why, also after it was tried
    again on its own."""
    died = re.findall(r"marked as failed because (\d+) workers died", forged_run["scheduler_log"])
    assert died and int(died[-1]) > 1, "the scheduler did not give up on zed's task after repeated deaths"
    assert forged_run["rows"]["zed"]["score"] == "0", forged_run["rows"]["zed"]
    reason = "评分进程意外退出"
    assert any(reason in note for note in forged_run["journal"]["zed"]["notes"]), forged_run["journal"]["zed"]
    assert reason in forged_run["pages"]["zed"]
    table = score_table_line(forged_run["died"].stdout, "zed")
    assert reason in table, table
    assert forged_run["rows"]["alice"]["score"] == "14"


def test_a_refused_result_is_graded_again_by_a_rerun(forged_run):
    assert forged_run["journal"]["mallory"]["digest"] == ""  # what _intake compares: never "unchanged"
    assert forged_run["journal"]["alice"]["digest"]


def test_a_refused_result_leaves_no_gradebook_row(forged_run):
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.sqlite_url(forged_run["out"] / "course"), course.COURSE_ID) as gb:
        assert gb.find_submission("safe_norm", "alice").score == 14
        with pytest.raises(MissingEntry):
            gb.find_submission("safe_norm", "mallory")
    assert not (forged_run["out"] / "course" / "autograded" / "mallory").exists()


def test_a_worker_of_another_course_version_refuses_and_the_submission_is_left_ungraded(cluster, tmp_path):
    """The grading command runs from a copy of the course whose grader differs by one line from
    the worker's: the worker refuses the task, the submission gets no row and no zero, and the
    command says so in one line and exits 1. Nothing is journaled for it, so a re-run grades it."""
    copy = tmp_path / "course"
    for part in ("grader", "kit", "solutions", "exercises"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "grader" / "messages.py", "a", encoding="utf-8") as handle:
        handle.write("\n# one line the workers' copy of the grader does not have\n")
    submitted, out = tmp_path / "class", tmp_path / "out"
    sample_classes.write(
        submitted, "carol", "safe_norm", raw=course.notebook_path(course.EXERCISES, "safe_norm").read_bytes()
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy / "kit"), str(copy)])}  # that copy's grader
    command = grade_command(submitted, out, "--scheduler", cluster["address"], "--tls", cluster["tls"], jobs=1)
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and "1 submission(s) were not graded" in lines[0] and "run the same command again" in lines[0]
    )
    assert "  not graded carol/safe_norm: CourseMismatch: " in done.stdout, done.stdout[-2000:]
    assert "another version of the course or the grader" in done.stdout
    assert read_csv(out) == {}, "an ungraded submission got a row in grades.csv"
    assert gradebook_rows(course.sqlite_url(out / "course")) == {}
    assert "carol" not in (out / "course" / course.JOURNAL).read_text(), "journaled as done: a re-run would skip it"


# —— store.refusal, on forged results: fast, no cluster ——
POINTS = {"test_a": 2.0, "test_b": 3.0}
GOOD = worker.Graded(worker.Result(True, ["一条说明"], ["unsandboxed"]), dict(POINTS), b"{}", {"hw.html": b"<p>"})


def forged(**changes) -> worker.Graded:
    fields = {k: getattr(GOOD, k) for k in ("result", "scores", "autograded", "feedback", "sandboxed")}
    return worker.Graded(**(fields | changes))


class SneakyGraded(worker.Graded):
    pass


def result(**changes) -> worker.Result:
    return worker.Result(**({"succeeded": True, "notes": [], "flags": []} | changes))


FORGERIES = {
    "score above its points": forged(scores={"test_a": 700.0, "test_b": 3.0}),
    "negative score": forged(scores={"test_a": -1.0, "test_b": 3.0}),
    "NaN score": forged(scores={"test_a": math.nan, "test_b": 3.0}),
    "infinite score": forged(scores={"test_a": math.inf, "test_b": 3.0}),
    "huge integer score": forged(scores={"test_a": 10**5000, "test_b": 3.0}),
    "bool score": forged(scores={"test_a": True, "test_b": 3.0}),
    "text score": forged(scores={"test_a": "2", "test_b": 3.0}),
    "numpy score": forged(scores={"test_a": np.float64(2.0), "test_b": 3.0}),
    "unknown test": forged(scores={**POINTS, "test_extra": 1.0}),
    "missing test": forged(scores={"test_a": 2.0}),
    "non-string test id": forged(scores={"test_a": 2.0, "test_b": 3.0, 1: 0.0}),
    "unknown flag": forged(result=result(flags=["admin"])),
    "flags not a list": forged(result=result(flags=("rules",))),
    "note too long": forged(result=result(notes=["x" * (store.MAX_NOTE_CHARS + 1)])),
    "too many notes": forged(result=result(notes=["x"] * (store.MAX_NOTES + 1))),
    "note not text": forged(result=result(notes=[b"bytes"])),
    "succeeded not a bool": forged(result=result(succeeded=1)),
    "sandboxed not a bool": forged(sandboxed="yes"),
    "no autograded notebook": forged(autograded=None),
    "notebook as text": forged(autograded="{}"),
    "page outside its folder": forged(feedback={"../../index.html": b"<p>"}),
    "page of another notebook": forged(feedback={"other.html": b"<p>"}),
    "page as text": forged(feedback={"hw.html": "<p>"}),
    "failed with scores": forged(result=result(succeeded=False)),
    "a dict": {"result": GOOD.result, "scores": POINTS},
    "nothing": None,
    "a subclass of Graded": SneakyGraded(GOOD.result, dict(POINTS), b"{}", {}),
    "a Graded without its fields": object.__new__(worker.Graded),
}


@pytest.mark.parametrize("graded", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_malformed_result_is_refused_with_one_line(graded):
    reason = store.refusal(graded, "hw", POINTS)
    assert reason and "\n" not in reason and len(reason) < 400, reason


def test_oversized_results_are_refused(monkeypatch):
    monkeypatch.setattr(store, "MAX_RESULT_BYTES", 1000)
    assert store.refusal(forged(autograded=b"x" * 1001), "hw", POINTS)
    assert store.refusal(forged(feedback={"hw.html": b"x" * 999}), "hw", POINTS)


def test_well_formed_results_are_accepted():
    assert store.refusal(GOOD, "hw", POINTS) is None
    assert store.refusal(forged(scores={"test_a": 0.0, "test_b": 3}, feedback={}), "hw", POINTS) is None
    assert store.refusal(worker.Graded(worker.Result(False, ["内核在运行中崩溃"])), "hw", POINTS) is None


def test_test_points_are_the_source_notebooks_graded_cells():
    for assignment in course.ASSIGNMENTS:
        points = store.test_points(assignment)
        assert points and all(name.startswith("test_") and value > 0 for name, value in points.items()), points


# —— the local cluster of a plain `grade` ——
def listening(process: psutil.Process) -> set:
    return {(c.laddr.ip, c.laddr.port) for c in process.net_connections("inet") if c.status == "LISTEN"}


def test_the_local_cluster_listens_on_loopback_over_tls_only(tmp_path):
    course_certs = tmp_path / "tls"
    certs.make(course_certs)  # a real cluster's certificates: the local cluster must not take them either
    me = psutil.Process()
    mine_before, children_before = listening(me), {p.pid for p in me.children(recursive=True)}
    client = engine.connect(None, 2)
    try:
        workers = client.scheduler_info()["workers"]
        addresses = [client.scheduler.address, *workers, *(w["nanny"] for w in workers.values())]
        assert len(workers) == 2 and all(a.startswith("tls://127.0.0.1:") for a in addresses), addresses
        tls_ports = {int(a.rsplit(":", 1)[1]) for a in addresses}
        spawned = [p for p in me.children(recursive=True) if p.pid not in children_before]
        sockets = listening(me) - mine_before
        for process in spawned:
            sockets |= listening(process)
        assert {ip for ip, _ in sockets} == {"127.0.0.1"}, sockets
        assert {port for _, port in sockets} == tls_ports, "a port that is not the cluster's TLS (an HTTP server?)"
        # whoever connects without its throw-away certificates: refused by the scheduler itself
        # (this end checks nothing, so only the other end can say no)
        port = int(client.scheduler.address.rsplit(":", 1)[1])
        for shown in (None, certs.paths(course_certs, "client")[1:]):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            if shown:
                context.load_cert_chain(*shown)
            assert hangs_up(port, context), f"the local cluster let in a client showing {shown}"
    finally:
        engine.close(client)


# —— the certificates and the commands' defaults ——
def test_certs_make_a_ca_and_a_private_key_per_role_and_keep_no_ca_key(tmp_path):
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    certs.make(tmp_path / "tls", ["192.0.2.7"])
    names = sorted(p.name for p in (tmp_path / "tls").iterdir())
    expected = ["ca.pem", "client.key", "client.pem", "scheduler.key", "scheduler.pem", "worker.key", "worker.pem"]
    assert names == expected, f"the CA's key or something else was written: {names}"
    assert all((tmp_path / "tls" / n).stat().st_mode & 0o077 == 0 for n in names if n.endswith(".key")), names
    ca = x509.load_pem_x509_certificate((tmp_path / "tls" / "ca.pem").read_bytes())
    role = {r: x509.load_pem_x509_certificate(certs.paths(tmp_path / "tls", r)[1].read_bytes()) for r in certs.ROLES}
    for cert in role.values():
        cert.verify_directly_issued_by(ca)
    certs.make(tmp_path / "new")  # a fresh folder is a new CA: the old certificates are not its own
    new_ca = x509.load_pem_x509_certificate((tmp_path / "new" / "ca.pem").read_bytes())
    with pytest.raises(InvalidSignature):  # same CA name, another key
        role["worker"].verify_directly_issued_by(new_ca)
    with pytest.raises(FileExistsError):
        certs.make(tmp_path / "tls")


def test_every_command_reads_build_tls_and_grader_worker_runs_a_process_per_core(tmp_path, monkeypatch):
    """Without --tls every command takes the certificates from build/tls; `grader worker` without
    --nworkers starts one worker process per core (what it hands to `dask worker`)."""
    import grader.__main__ as cli

    assert certs.FOLDER == REPO / "build" / "tls"
    certs.make(tmp_path / "tls")
    monkeypatch.setattr(certs, "FOLDER", tmp_path / "tls")
    started = []

    def execv(path, argv):
        started.append(argv)
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.setattr(os, "cpu_count", lambda: 7)  # not this machine's count: a fixed default would show
    with pytest.raises(SystemExit):
        cli.main(["worker", "tls://127.0.0.1:9"])
    with pytest.raises(SystemExit):
        cli.main(["scheduler", "--host", "127.0.0.1"])
    worker_argv, scheduler_argv = started
    assert worker_argv[worker_argv.index("--nworkers") + 1] == "7"
    for argv, role in ((worker_argv, "worker"), (scheduler_argv, "scheduler")):
        ca, cert, key = (str(p) for p in certs.paths(tmp_path / "tls", role))
        assert [argv[argv.index(o) + 1] for o in ("--tls-ca-file", "--tls-cert", "--tls-key")] == [ca, cert, key]
    assert engine.tls_files(None, "client") == tuple(str(p) for p in certs.paths(tmp_path / "tls", "client"))


def test_the_grading_command_refuses_a_scheduler_whose_certificate_another_ca_signed(cluster, tmp_path):
    """A scheduler that would accept the course's client (it trusts the course CA) but shows a
    certificate of another CA: only the grading command's own check can refuse it."""
    port = free_port()
    foreign = cluster["foreign"]
    tls = ["--tls-ca-file", cluster["tls"] / "ca.pem", "--tls-cert", foreign / "scheduler.pem"]
    tls += ["--tls-key", foreign / "scheduler.key"]
    command = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", port]
    impostor = start([*command, "--protocol", "tls", *tls, "--no-dashboard"], tmp_path / "impostor.log")
    try:
        deadline = time.monotonic() + 120
        while not listening(psutil.Process(impostor.pid)):
            assert impostor.poll() is None and time.monotonic() < deadline, (tmp_path / "impostor.log").read_text()
            time.sleep(0.5)
        with pytest.raises(engine.EngineError, match="cannot reach the Dask scheduler"):
            engine.connect(f"tls://127.0.0.1:{port}", 1, cluster["tls"])
    finally:
        engine.stop_process_group(impostor)
    # the grading command's alert, as the impostor saw it: "I do not know your CA"
    assert "ALERT_UNKNOWN_CA" in (tmp_path / "impostor.log").read_text(), "refused for another reason"
