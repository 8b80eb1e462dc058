"""The student edition: exactly the student's files, no secret in them, and from a fresh copy of its
archive its own `make setup`, `make lab` and `make check` work.

The fresh copy gets a new .venv whose site-packages sees this checkout's installed packages (a
.pth line), so its `make setup` finds every pin already satisfied instead of downloading a
gigabyte again; everything else (the venv, the editable kit, the lab server) is its own.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader import REPO, catalogue, course, edition

pytestmark = pytest.mark.xdist_group("student_edition")  # one worker owns the lab server below
FAST = "safe_norm"  # the quickest exercise to run in `make check`


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition") / "ch04-student"
    archive = edition.build(out)
    return out, archive


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_edition_holds_exactly_the_student_files(built):
    out, archive = built
    expected = {f"notebooks/{p.name}" for p in (REPO / "notebooks").glob("*.ipynb")}
    expected |= {f"exercises/{a}/{a}.ipynb" for a in course.ASSIGNMENTS}
    expected |= {f"kit/{p.name}" for p in (REPO / "kit").glob("*.py")}
    expected |= {str(p.relative_to(REPO / "edition")) for p in (REPO / "edition").rglob("*") if p.is_file()}
    expected |= {"requirements.txt", "environment.yml", "tools/setup.sh", "tools/lab.sh"}
    assert files_in(out) == expected
    with zipfile.ZipFile(archive) as z:
        in_archive = {name.split("/", 1)[1] for name in z.namelist() if not name.endswith("/")}
    assert in_archive == expected, "the archive and the folder differ"


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_edition_leaks_no_solution_hidden_test_or_catalogued_answer(built, assignment):
    out, _ = built
    secrets = edition.secret_passages(assignment)
    answers = edition.catalogue_passages(assignment)
    assert secrets and answers, f"{assignment}: found nothing to protect, so the check would prove nothing"
    published = [p for p in out.rglob("*") if p.is_file()]
    found = edition.leaks(secrets | answers, published)
    assert not found, "the student edition publishes:\n" + "\n".join(found)


@pytest.mark.parametrize("kind", ["reference", "catalogue"])
def test_leak_check_finds_an_answer_planted_in_the_edition(built, tmp_path, kind):
    out, _ = built
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    answer = catalogue.reference_answer(FAST) if kind == "reference" else catalogue.entries(FAST)[0].answer
    planted = catalogue.with_answer(catalogue.release_notebook(FAST), answer)
    nbformat.write(planted, copy / "exercises" / FAST / f"{FAST}.ipynb")
    secrets = edition.secret_passages(FAST) | edition.catalogue_passages(FAST)
    assert edition.leaks(secrets, list(copy.rglob("*.ipynb"))), f"a planted {kind} answer went unnoticed"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make(folder: Path, *args, timeout=600):
    return subprocess.run(["make", *args], cwd=folder, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def unpacked(built, tmp_path_factory):
    """The archive unpacked as a student would, then its own `make setup`."""
    _, archive = built
    where = tmp_path_factory.mktemp("student-home")
    shutil.unpack_archive(archive, where)
    folder = where / "ch04-student"
    base = Path(sys._base_executable)  # the interpreter this checkout's .venv was built from
    subprocess.run([str(base), "-m", "venv", str(folder / ".venv")], check=True, timeout=120)
    purelib = subprocess.run(
        [str(folder / ".venv" / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "ch4-test-pins.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"} | {"PYTHON": str(base)}
    done = subprocess.run(["make", "setup"], cwd=folder, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def test_fresh_copy_installs_its_own_kit(unpacked):
    where = subprocess.run(
        [str(unpacked / ".venv" / "bin" / "python"), "-c", "import ch4check, ch4validate; print(ch4check.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == unpacked / "kit" / "ch4check.py"


def test_make_check_fails_on_a_blank_exercise_and_passes_a_correct_one(unpacked):
    blank = make(unpacked, "check", f"EX={FAST}")
    assert blank.returncode != 0, blank.stdout + blank.stderr
    assert f"❌ exercises/{FAST}/{FAST}.ipynb" in blank.stdout, blank.stdout
    path = unpacked / "exercises" / FAST / f"{FAST}.ipynb"
    blank_text = path.read_text(encoding="utf-8")
    try:
        nbformat.write(catalogue.with_answer(nbformat.read(path, as_version=4), catalogue.reference_answer(FAST)), path)
        right = make(unpacked, "check", f"EX={FAST}")
    finally:
        path.write_text(blank_text, encoding="utf-8")
    assert right.returncode == 0, right.stdout + right.stderr
    assert f"✅ exercises/{FAST}/{FAST}.ipynb：可见测试全部通过" in right.stdout, right.stdout


@pytest.fixture(scope="module")
def lab(unpacked):
    """`make lab` in the fresh copy, as a student runs it (here as root and with no display)."""
    port, token = free_port(), os.urandom(8).hex()
    env = {**os.environ, "LAB_PORT": str(port), "JUPYTER_TOKEN": token}
    env.pop("DISPLAY", None)
    server = subprocess.Popen(
        ["make", "lab"], cwd=unpacked, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("make lab exited:\n" + server.stdout.read().decode(errors="replace"))
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within a minute")
        yield {"url": url, "token": token, "folder": unpacked}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def status(lab, path: str) -> int:
    try:
        return urllib.request.urlopen(f"{lab['url']}{path}?token={lab['token']}", timeout=10).status
    except urllib.error.HTTPError as err:
        return err.code


def test_make_lab_serves_the_edition_with_validate_and_no_instructor_tools(lab):
    assert status(lab, "/lab") == 200
    assert status(lab, f"/api/contents/exercises/{FAST}/{FAST}.ipynb") == 200
    assert status(lab, "/nbgrader_version") != 404, "nbgrader's Validate is missing"
    # nbgrader's instructor pages and the exchange-based lists are off in the student edition
    for route in ("/formgrader", "/formgraders", "/assignments", "/courses", "/api/contents/solutions"):
        assert status(lab, route) == 404, f"{route} is served to students"
