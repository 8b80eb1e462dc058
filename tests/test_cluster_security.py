"""The grading cluster admits only its own (#22), with real Dask processes and real certificates.

A scheduler started with `python -m grader scheduler` and one worker that holds a course
certificate but is rogue (tests/rogue_worker.py: it forges mallory's result and grades the
others honestly). Around them:

* a client without a certificate, one with another CA's certificate, plain TCP and a worker
  with another CA's certificate are refused by the scheduler;
* `grade --scheduler tcp://...`, and `grader worker` and `grader scheduler` without
  certificates, stop with one line (exit 2);
* the forged result scores 0 with "result refused" while alice, graded by the same worker, keeps
  full marks; `grade.refusal` turns down every malformed result a worker could return;
* the local cluster of a plain `grade` listens on loopback only, over TLS, with no HTTP server.
"""

import csv
import json
import math
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from jupyter_servers import free_port

from grader import REPO, answers, certs, course, engine, grade, messages, sample_classes, worker

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


def test_a_client_without_a_course_certificate_is_refused(cluster):
    from distributed import Client

    address, port = cluster["address"], cluster["port"]
    # TLS that trusts the course CA but shows no certificate: the scheduler asks for one and hangs up
    context = ssl.create_default_context(cafile=str(cluster["tls"] / "ca.pem"))
    context.check_hostname = False
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        with pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"):
            tls.sendall(b"hello")
            tls.recv(16)
    # Dask without TLS, to the same port
    with pytest.raises((OSError, TimeoutError)):
        Client(f"tcp://127.0.0.1:{port}", timeout="5s")
    # a certificate of another CA (the client trusts the course CA, so only the scheduler refuses)
    with pytest.raises((OSError, TimeoutError)):
        Client(address, security=client_security(cluster["foreign"], ca=cluster["tls"] / "ca.pem"), timeout="5s")
    log = (cluster["folder"] / "s.log").read_text()
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
    assert "TLS handshake failed" in (cluster["folder"] / "s.log").read_text()


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


@pytest.fixture(scope="module")
def forged_run(cluster, tmp_path_factory):
    """alice (the reference) and mallory (blank) graded on the rogue worker."""
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    reference = answers.reference_answer("safe_norm")
    sample_classes.write(submitted, "alice", "safe_norm", sample_classes.answered("safe_norm", reference))
    release = course.notebook_path(course.EXERCISES, "safe_norm").read_bytes()
    sample_classes.write(submitted, "mallory", "safe_norm", raw=release)
    command = [sys.executable, "-m", "grader", "grade", submitted, "--out", out, "--jobs", "1"]
    command += ["--scheduler", cluster["address"], "--tls", cluster["tls"]]
    done = subprocess.run([str(c) for c in command], cwd=REPO, capture_output=True, text=True, timeout=600)
    with open(out / "grades.csv", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}
    journal = [json.loads(line) for line in (out / "course" / grade.JOURNAL).read_text().splitlines()]
    return {"done": done, "rows": rows, "journal": {e["student"]: e for e in journal}, "out": out}


def test_a_forged_result_scores_0_and_the_others_keep_their_grades(forged_run):
    done, rows = forged_run["done"], forged_run["rows"]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert rows["mallory"]["score"] == "0" and rows["alice"]["score"] == rows["alice"]["max_score"] == "14", rows
    assert forged_run["journal"]["mallory"]["notes"] == [messages.result_refused()]
    assert "result refused" in messages.result_refused()
    assert not forged_run["journal"]["alice"]["notes"]
    refused = [line for line in done.stderr.splitlines() if "refused" in line]
    assert len(refused) == 1 and refused[0].startswith("grader grade: refused the result of mallory/safe_norm: "), (
        done.stderr
    )
    assert "700" in refused[0] and "outside 0.." in refused[0], refused


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


# —— grade.refusal, on forged results: fast, no cluster ——
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
    "note too long": forged(result=result(notes=["x" * (grade.MAX_NOTE_CHARS + 1)])),
    "too many notes": forged(result=result(notes=["x"] * (grade.MAX_NOTES + 1))),
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
    reason = grade.refusal(graded, "hw", POINTS)
    assert reason and "\n" not in reason and len(reason) < 400, reason


def test_oversized_results_are_refused(monkeypatch):
    monkeypatch.setattr(grade, "MAX_RESULT_BYTES", 1000)
    assert grade.refusal(forged(autograded=b"x" * 1001), "hw", POINTS)
    assert grade.refusal(forged(feedback={"hw.html": b"x" * 999}), "hw", POINTS)


def test_well_formed_results_are_accepted():
    assert grade.refusal(GOOD, "hw", POINTS) is None
    assert grade.refusal(forged(scores={"test_a": 0.0, "test_b": 3}, feedback={}), "hw", POINTS) is None
    assert grade.refusal(worker.Graded(worker.Result(False, ["内核在运行中崩溃"])), "hw", POINTS) is None


def test_test_points_are_the_source_notebooks_graded_cells():
    for assignment in course.ASSIGNMENTS:
        points = grade.test_points(assignment)
        assert points and all(name.startswith("test_") and value > 0 for name, value in points.items()), points


# —— the local cluster of a plain `grade` ——
def listening(process: psutil.Process) -> set:
    return {(c.laddr.ip, c.laddr.port) for c in process.net_connections("inet") if c.status == "LISTEN"}


def test_the_local_cluster_listens_on_loopback_over_tls_only():
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
    finally:
        engine.close(client)
