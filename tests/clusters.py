"""Real servers for the scale-out tests (not a test module: helpers that tests/test_scale_out.py
and tests/test_tampering.py share): Debian's PostgreSQL in a temporary folder, and a Dask
scheduler with workers started by the course's own command."""

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psutil
import pytest
from jupyter_servers import free_port

from grader import engine


def _postgres_bin() -> Path:
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parts[-3]))
    if not versions:
        pytest.fail("PostgreSQL is not installed: apt-get install postgresql (Debian's server is what the test uses)")
    return versions[-1].parent


@contextlib.contextmanager
def postgres():
    """A PostgreSQL server of its own, in a temporary folder; yields a SQLAlchemy URL to an empty
    database. As root the server runs as user postgres (it refuses to run as root)."""
    bin_dir, port = _postgres_bin(), free_port()
    folder = Path(tempfile.mkdtemp(prefix="ch04-pg-"))
    as_server = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_server:
        shutil.chown(folder, "postgres", "postgres")
    data, log = folder / "data", folder / "server.log"

    def run(*command):
        done = subprocess.run(as_server + list(command), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "grader", "-A", "trust", "--no-sync")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
    try:
        run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "grader", "gradebook")
        yield f"postgresql+psycopg://grader@127.0.0.1:{port}/gradebook"
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int = 2):
    """`python -m grader scheduler` and `python -m grader worker` with `workers` processes, over
    mutual TLS with certificates of their own in `folder/tls` (grader/engine.py starts them as an
    instructor would); yields an `engine.Cluster`: (address, tls, worker), where `tls` is what
    a client passes as `grade.grade(..., tls=)` or `--tls`."""
    try:
        with engine.scheduler_with_workers(folder, workers) as running:
            yield running
    except engine.EngineError as err:
        pytest.fail(str(err))


def worker_processes(grader_worker) -> list[psutil.Process]:
    return engine.worker_processes(grader_worker.pid)
