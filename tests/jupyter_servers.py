"""Starting and stopping a real Jupyter server for a test (not a test module: a helper that
tests/test_nbgrader_tools.py and tests/test_student_edition.py share; tests/test_hub.py waits for
its hub the same way)."""

import contextlib
import http.client
import random
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from grader.cluster import engine


def free_port() -> int:
    """A free port below Linux's ephemeral range (32768-60999): a port the kernel hands out (to a
    kernel's ZMQ sockets, which bind port 0, or an outgoing connection) could be taken between this
    check and the server's own bind, and a hub then answered its probe with ZMQ's greeting (CI23)."""
    for port in random.sample(range(20000, 32768), 200):
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind(("127.0.0.1", port))
            return port
    raise RuntimeError("no free port in 20000-32767")


@contextlib.contextmanager
def running(command: list[str], cwd: Path, env: dict, port: int, token: str, log: Path):
    """Run `command` (a Jupyter server on `port`), wait until it answers, yield its URL; stop it
    and its children afterwards. Output goes to `log`, a file: a chatty server never blocks."""
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answers(process, f"{url}/api/status?token={token}", log, "the Jupyter server", 60)
        yield url
    finally:
        engine.stop_process_group(process)


def wait_until_answers(process: subprocess.Popen, probe: str, log: Path, what: str, seconds: float) -> None:
    """Poll `probe` until it answers; fail with the end of `log` if `process` exits or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(probe, timeout=2)
            return
        except (OSError, http.client.HTTPException):  # not up yet, or not yet the server's own port
            exited, late = process.poll() is not None, time.monotonic() > deadline
            if exited or late:
                said = "exited" if exited else f"did not answer within {seconds:.0f} s"
                pytest.fail(f"{what} {said}:\n" + log.read_text(errors="replace")[-3000:])
            time.sleep(0.5)


def request(url: str, token: str, path: str, method: str = "GET") -> tuple[int, str]:
    """(HTTP status, body) of one call to the server at `url`; an error status is returned, not raised."""
    call = urllib.request.Request(
        url + path, data=b"" if method == "POST" else None, method=method, headers={"Authorization": f"token {token}"}
    )
    try:
        with urllib.request.urlopen(call, timeout=120) as response:
            return response.status, response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", errors="replace")
