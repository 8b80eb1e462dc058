"""Where grading runs: Dask distributed, on a local cluster or on the instructor's own.

`connect(scheduler, jobs, tls)` gives a client: to a running scheduler (`--scheduler
tls://HOST:PORT`, started with `python -m grader scheduler`, workers with `python -m grader
worker tls://HOST:PORT`), or to a local cluster of `jobs` worker processes. `run(client, tasks,
on_done)` sends one `worker.grade_task` per submission and hands each result to `on_done` as it
arrives, so the caller stores it at once.

Every connection is mutual TLS. A task carries a student's seed and a worker runs whatever
function it is sent, so only holders of a course certificate (grader/cluster/certs.py) may be a
scheduler, a worker or a client; the local cluster uses throw-away certificates that exist only
in this process and the workers it spawns, and listens on loopback only. No node serves HTTP
(Dask's info pages and metrics): `NO_HTTP` stops it as each one starts.

A worker that dies mid-task is Dask's business: the task runs again on another worker. A task
whose workers keep dying (Dask's `allowed-failures`) is tried once more on its own after the
rest of the class; if its workers die then too, that is the submission's doing and it scores 0
with the reason. Anything else that stops a task (the scheduler lost, a worker with another
version of the course) is the infrastructure's: that submission is left ungraded, so a re-run
grades it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from grader import REPO, messages, nbtools
from grader.cluster import certs
from grader.i18n import _
from grader.pipeline import worker

WAIT_FOR_WORKERS = 120  # seconds a remote cluster may take to show its first worker
CONNECT_TIMEOUT = "10s"
NO_HTTP = "grader.cluster.no_http"  # the Dask preload that stops each node's HTTP server


class EngineError(Exception):
    """The cluster cannot be used at all: one line for the instructor."""


def check_address(scheduler: str) -> None:
    if not scheduler.startswith("tls://"):
        raise EngineError(
            _(
                "the scheduler address must be tls://HOST:PORT (the grading cluster uses mutual TLS), not {address}"
            ).format(address=scheduler)
        )


def tls_files(folder: Path | None, role: str) -> tuple[str, str, str]:
    """(CA, certificate, key) of `role` in `folder` (default build/tls), all present."""
    folder = Path(folder) if folder is not None else certs.FOLDER
    for path in certs.paths(folder, role):
        if not path.is_file():
            missing = _(
                "no TLS certificate {path}: make the cluster's with python -m grader certs --out {folder}, "
                "then copy the folder to every machine"
            )
            raise EngineError(missing.format(path=path, folder=folder))
    return tuple(str(p) for p in certs.paths(folder, role))


def connect(scheduler: str | None, jobs: int, tls: Path | None = None):
    """A client of the cluster at `scheduler` (its certificates in `tls`, default build/tls),
    or of a new local cluster of `jobs` processes."""
    from distributed import Client, LocalCluster, Security

    os.environ.update(nbtools.HEADLESS_ENV)  # local workers inherit it; remote ones set it themselves
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,  # one submission per process: its kernels are the only children
            processes=True,
            memory_limit=0,  # the kernels' own cgroups cap memory; a busy worker is not restarted
            # certificates made now, held in memory and passed to the workers it spawns: no other
            # process on this machine can connect, join or read a seed
            security=Security.temporary(),
            protocol="tls",
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"preload": [NO_HTTP]},
            preload=[NO_HTTP],  # the workers'
            silence_logs=logging.CRITICAL,  # a task's failure is reported once, by us
        )
        return Client(cluster)
    check_address(scheduler)
    ca, cert, key = tls_files(tls, "client")
    security = Security(require_encryption=True, tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key)
    # What goes wrong comes back as each submission's one-line reason; Dask's own log lines (a
    # lost scheduler's failed reconnection, with a traceback) would only repeat it
    for handler in logging.getLogger("distributed").handlers:
        handler.setLevel(logging.CRITICAL)
    try:
        client = Client(scheduler, security=security, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as err:
        unreachable = _("cannot reach the Dask scheduler at {address} ({error})")
        raise EngineError(unreachable.format(address=scheduler, error=type(err).__name__)) from None
    try:
        client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS)
    except TimeoutError:
        client.close()
        alone = _("no worker joined {address} in {seconds} s: start one with python -m grader worker {address}")
        raise EngineError(alone.format(address=scheduler, seconds=WAIT_FOR_WORKERS)) from None
    return client


def close(client) -> None:
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()


SCHEDULER_LOST = "the connection to the Dask scheduler was lost"


def run(client, tasks: list[worker.Task], on_done: Callable[[worker.Task, worker.Graded], None]) -> dict:
    """Grade every task; returns {key: reason} for those the infrastructure left ungraded.

    Dask gives up on a task once the workers running it died `allowed-failures` times, and an
    honest task that happened to be on a worker each time another task killed it is given up on
    too. So every task Dask gave up on is sent again after all the others are done, one at a
    time: only one that still kills its workers when it runs alone scores 0 for it."""
    from distributed import as_completed

    futures = {client.submit(worker.grade_task, task, pure=False): task for task in tasks}
    ungraded, died = {}, []
    for future in as_completed(futures):
        _settle(futures[future], future, on_done, ungraded, died)
    for task in died:
        _settle(task, client.submit(worker.grade_task, task, pure=False), on_done, ungraded, None)
    return ungraded


def _settle(task, future, on_done, ungraded: dict, died: list | None) -> None:
    """Hand a finished task's result to `on_done`, or note why it has none; a task whose workers
    died goes to `died` when it is given (its first try), else scores 0 with the reason."""
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError
    from distributed.comm import CommClosedError

    try:
        graded = future.result()
    except KilledWorker:
        if died is not None:
            died.append(task)
            return
        graded = worker.Graded(worker.Result(False, [messages.WORKER_DIED]))
    except FutureCancelledError as err:
        lost = err.reason == "scheduler-connection-lost"
        ungraded[task.key] = SCHEDULER_LOST if lost else f"cancelled ({err.reason})"
        return
    except CommClosedError:  # the scheduler went while this result was being fetched from it
        ungraded[task.key] = SCHEDULER_LOST
        return
    except Exception as err:  # noqa: BLE001 - not this submission's fault: leave it for a re-run
        ungraded[task.key] = _one_line(err)
        return
    on_done(task, graded)


def _one_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


class Cluster(NamedTuple):
    address: str  # tls://127.0.0.1:PORT
    tls: Path  # the certificates: what a client passes as grade(..., tls=) or --tls
    worker: object  # the `python -m grader worker` process (subprocess.Popen)


@contextlib.contextmanager
def scheduler_with_workers(log_folder: Path, workers: int, start_timeout: float = 120):
    """`python -m grader scheduler` on a free local port and `python -m grader worker` with
    `workers` processes, with certificates of their own in `log_folder/tls`, as an instructor
    would start them on real machines (the benchmark and the tests use it); yields a `Cluster`.
    Both are stopped afterwards."""
    import shutil
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address, tls = f"tls://127.0.0.1:{port}", log_folder / "tls"
    certs.make(tls)

    def start(command, log, parent_death_signal):
        # The kernel signals them when the process that started them dies, even by SIGKILL (no
        # cleanup runs then): a killed test run or benchmark leaves no cluster on the machine.
        # The worker command gets SIGKILL: its graceful SIGTERM close waits for a scheduler that
        # is going too; its worker processes exit when it does (Dask watches their parent).
        dies_with_us = ["setpriv", "--pdeathsig", parent_death_signal, "--"] if shutil.which("setpriv") else []
        with open(log_folder / log, "wb") as sink:
            return subprocess.Popen(
                dies_with_us + command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )

    grader = [sys.executable, "-m", "grader"]
    scheduler = start(
        grader + ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--tls", str(tls)], "scheduler.log", "TERM"
    )
    grader_worker = None
    try:
        grader_worker = start(
            grader + ["worker", address, "--nworkers", str(workers), "--host", "127.0.0.1", "--tls", str(tls)],
            "worker.log",
            "KILL",
        )
        deadline = time.monotonic() + start_timeout
        while len(worker_processes(grader_worker.pid)) < workers:
            if time.monotonic() > deadline or grader_worker.poll() is not None:
                log = (log_folder / "worker.log").read_text(errors="replace")[-3000:]
                raise EngineError(f"the grading workers did not start:\n{log}")
            time.sleep(0.5)
        yield Cluster(address, tls, grader_worker)
    finally:
        for process in (grader_worker, scheduler):
            if process is not None:
                stop_process_group(process)


def worker_processes(grader_worker_pid: int) -> list:
    """The Dask worker processes of `python -m grader worker` (its nannies run in the command's
    own process and spawn one worker process each)."""
    import psutil

    try:
        children = psutil.Process(grader_worker_pid).children()
    except psutil.NoSuchProcess:
        return []
    workers = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                workers.append(child)
        except psutil.Error:  # gone, or a zombie not yet reaped: not a running worker
            pass
    return workers


def stop_process_group(process) -> None:
    """Stop a process started in its own session, and its group: SIGTERM to it alone first (Dask's
    commands then close their workers, which remove their folders), after at most 20 s SIGTERM to
    whatever of the group is left, and SIGKILL to what is still there 30 s later."""
    import signal
    import subprocess
    import time

    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    deadline = time.monotonic() + 30
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
        while time.monotonic() < deadline:
            os.killpg(process.pid, 0)  # raises once no process of the group is left
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
