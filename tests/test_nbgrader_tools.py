"""nbgrader's own tools on this course (nbgrader_config.py at the repository root).

A small class (a model answer and a blank hand-in of one quick assignment) is graded once with
`python -m grader grade` from the repository root; a real Jupyter server, started there as
`make formgrader` starts it, must show those grades in Formgrader; a local exchange must carry an
assignment from release to a graded submission; and plain nbgrader autograde must refuse.
"""

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from jupyter_servers import free_port, request, running

from grader import REPO, answers, course, nbgrader_guard, sample_classes

pytestmark = pytest.mark.xdist_group("nbgrader_tools")  # one worker owns the class and the server
ASSIGNMENT = "safe_norm"  # the quickest to grade
NBGRADER = str(Path(sys.executable).parent / "nbgrader")  # the command an instructor types


def run(*command, env, cwd=REPO):
    return subprocess.run(list(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def grade(submitted: Path, out: Path, env):
    return run(sys.executable, "-m", "grader", "grade", str(submitted), "--out", str(out), "--jobs", "2", env=env)


def read_grades(out: Path) -> dict:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return {
            (r["student_id"], r["assignment"]): (float(r["score"]), float(r["max_score"]))
            for r in csv.DictReader(handle)
        }


def checksums(folder: Path) -> dict:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """The graded class goes under build/ (Formgrader opens files only inside the folder Jupyter
    serves, here the repository; no leading dot, Jupyter hides those); everything else is temporary."""
    assert (REPO / "nbgrader_config.py").is_file(), "nbgrader_config.py is missing at the repository root"
    (REPO / "build").mkdir(exist_ok=True)
    inside = Path(tempfile.mkdtemp(prefix="test-nbgrader-tools-", dir=REPO / "build"))
    tmp = tmp_path_factory.mktemp("nbgrader-tools")
    env = {
        **os.environ,
        "CH4_GRADES": str(inside / "out"),
        "CH4_EXCHANGE": str(tmp / "exchange"),
        "CH4_COLLECTED": str(tmp / "collected"),
        # nbgrader's submit cache and Jupyter's own files stay out of the home folder
        "JUPYTER_CONFIG_DIR": str(tmp / "jupyter-config"),
        "JUPYTER_DATA_DIR": str(tmp / "jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "jupyter-runtime"),
    }
    try:
        yield SimpleNamespace(out=inside / "out", tmp=tmp, env=env)
    finally:
        shutil.rmtree(inside, ignore_errors=True)


@pytest.fixture(scope="module")
def graded(place):
    """alice hands in the model answer, bob the untouched release; graded from the repository
    root, where nbgrader_config.py (pointing at this very OUT) must change nothing."""
    submitted = place.tmp / "class"
    sample_classes.write(
        submitted, "alice", ASSIGNMENT, sample_classes.answered(ASSIGNMENT, answers.reference_answer(ASSIGNMENT))
    )
    sample_classes.write(submitted, "bob", ASSIGNMENT, answers.release_notebook(ASSIGNMENT))
    done = grade(submitted, place.out, place.env)
    assert done.returncode == 0, f"grader grade failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return read_grades(place.out)


def test_grading_from_the_repository_root_ignores_nbgrader_config(graded):
    (full, max_score), blank = graded[("alice", ASSIGNMENT)], graded[("bob", ASSIGNMENT)]
    assert max_score >= 10 and full == max_score, (
        f"the model answer got {full} / {max_score}: does the pipeline read nbgrader_config.py (autograde refused)?"
    )
    assert blank == (0.0, max_score), f"the blank hand-in got {blank}"


@pytest.fixture(scope="module")
def server(place, graded):
    """A Jupyter server started from the repository root and serving it, as `make formgrader` does."""
    port, token = free_port(), os.urandom(8).hex()
    command = [sys.executable, "-m", "jupyter", "server", "--no-browser", f"--port={port}"]
    command += [f"--ServerApp.token={token}", f"--ServerApp.root_dir={REPO}"]
    command += ["--allow-root"] if os.geteuid() == 0 else []
    log = place.tmp / "server.log"
    with running(command, REPO, place.env, port, token, log) as url:
        yield SimpleNamespace(url=url, token=token, log=log)


def call(server, path: str, method: str = "GET") -> tuple[int, str]:
    return request(server.url, server.token, path, method)


def call_json(server, path: str, method: str = "GET"):
    status, body = call(server, path, method)
    assert status == 200, f"{method} {path} answered {status}: {body[:500]}"
    return json.loads(body)


def test_formgrader_lists_the_assignments_and_the_pipelines_scores(server, graded):
    names = {a["name"] for a in call_json(server, "/formgrader/api/assignments")}
    assert names == set(course.ASSIGNMENTS), f"Formgrader lists {sorted(names)}"
    shown = {
        s["student"]: (s["score"], s["max_score"], s["autograded"])
        for s in call_json(server, f"/formgrader/api/submissions/{ASSIGNMENT}")
    }
    expected = {student: (*score, True) for (student, assignment), score in graded.items() if assignment == ASSIGNMENT}
    assert shown == expected, f"Formgrader shows {shown}, grades.csv says {expected}"


def test_formgrader_opens_the_autograded_notebook_and_the_feedback_is_served(server, place):
    notebooks = call_json(server, f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
    alice = next((n["id"] for n in notebooks if n["student"] == "alice"), None)
    assert alice, f"no submitted notebook of alice in Formgrader: {notebooks}"
    status, page = call(server, f"/formgrader/submissions/{alice}/")
    assert status == 200, f"Formgrader's page of alice's notebook answered {status}: {page[:500]}"
    assert "评分程序判定：✅" in page, "the page is not the pipeline's autograded notebook (no verdict in it)"
    link = re.search(r'data-link="([^"]+)"', page)
    assert link, "the page has no link to open the notebook itself"
    status, body = call(server, f"/api/contents/{link.group(1)}?content=0")
    assert status == 200, f"the notebook link {link.group(1)} does not open ({status}): {body[:300]}"
    feedback = (place.out / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html").relative_to(REPO)
    status, body = call(server, f"/files/{feedback}")
    assert status == 200 and ASSIGNMENT in body, f"the feedback page {feedback} is not served ({status})"


def test_autograde_and_the_other_bypasses_refuse_and_change_nothing(server, place):
    course_root = place.out / "course"
    before = checksums(course_root)
    for step, path in (  # Formgrader's buttons
        ("Autograde", f"/formgrader/api/submission/{ASSIGNMENT}/alice/autograde"),
        ("GenerateFeedback", f"/formgrader/api/assignment/{ASSIGNMENT}/generate_feedback"),
        ("GenerateAssignment", f"/formgrader/api/assignment/{ASSIGNMENT}/assign"),
    ):
        result = call_json(server, path, "POST")
        assert result["success"] is False, f"POST {path} went through: {result.get('log', '')[:500]}"
        assert nbgrader_guard.REFUSALS[step] in result.get("log", ""), (
            f"POST {path} failed without saying why: {result}"
        )
    # The command line, from the repository root and inside the course folder: nbgrader run there
    # reads only that folder's nbgrader_config.py (written when the server loaded the repository's).
    for cwd in (REPO, course_root):
        done = run(NBGRADER, "autograde", ASSIGNMENT, "--force", env=place.env, cwd=cwd)
        lines = (done.stdout + done.stderr).splitlines()
        assert done.returncode != 0, f"nbgrader autograde in {cwd} ran:\n{done.stderr[-2000:]}"
        assert any(line.endswith(nbgrader_guard.REFUSALS["Autograde"]) for line in lines), (
            f"nbgrader autograde in {cwd} did not refuse in one line:\n{done.stderr[-2000:]}"
        )
    after = checksums(course_root)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    assert not changed, f"a refused step still changed {changed} (gradebook, autograded notebooks or feedback)"


def test_exchange_release_fetch_submit_collect_then_grade(server, place):
    env = place.env
    done = run(NBGRADER, "release_assignment", ASSIGNMENT, env=env)
    assert done.returncode == 0, f"release_assignment failed:\n{done.stderr[-2000:]}"
    # what the Assignment List and Formgrader show after the release
    courses = call_json(server, "/formgraders")
    assert courses["success"] and [c["course_id"] for c in courses["value"]] == ["ch04"], f"course list: {courses}"
    listed = call_json(server, "/assignments?course_id=ch04")
    assert listed["success"], f"the Assignment List fails: {listed['value']}"
    released = {(a["assignment_id"], a["status"]) for a in listed["value"]}
    assert (ASSIGNMENT, "released") in released, f"the Assignment List shows {released}"
    status = call_json(server, f"/formgrader/api/assignment/{ASSIGNMENT}")["status"]
    assert status == "released", f"Formgrader shows {ASSIGNMENT} as {status}"

    home = place.tmp / "student-home"  # the student's own folder, not the repository
    home.mkdir()
    where = f"--Exchange.assignment_dir={home}"
    done = run(NBGRADER, "fetch_assignment", ASSIGNMENT, where, env=env)
    assert done.returncode == 0, f"fetch_assignment failed:\n{done.stderr[-2000:]}"
    fetched = course.notebook_path(home / "ch04", ASSIGNMENT)
    released_nb = course.notebook_path(course.EXERCISES, ASSIGNMENT)
    assert fetched.read_bytes() == released_nb.read_bytes(), "the student did not get the committed exercises/ notebook"
    answer = answers.with_answer(nbformat.read(fetched, as_version=4), answers.reference_answer(ASSIGNMENT))
    nbformat.write(answer, fetched)
    done = run(NBGRADER, "submit", ASSIGNMENT, "--student=carol", where, env=env)
    assert done.returncode == 0, f"submit failed:\n{done.stderr[-2000:]}"

    done = run(NBGRADER, "collect", ASSIGNMENT, env=env)
    assert done.returncode == 0, f"collect failed:\n{done.stderr[-2000:]}"
    collected = place.tmp / "collected"
    assert course.notebook_path(collected / "carol", ASSIGNMENT).is_file(), f"nothing collected into {collected}"
    assert not (place.out / "course" / "submitted" / "carol").exists(), (
        "collect wrote into the pipeline's course folder"
    )

    out = place.tmp / "out-collected"
    done = grade(collected, out, env)
    assert done.returncode == 0, f"grader grade of the collected folder failed:\n{done.stderr[-2000:]}"
    score, max_score = read_grades(out)[("carol", ASSIGNMENT)]
    assert max_score >= 10 and score == max_score, f"carol's collected model answer got {score} / {max_score}"


def test_the_schema_version_read_in_process_is_what_alembic_says():
    """course.schema_version stands in for nbgrader's `alembic heads` call (seconds per process)."""
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite:////tmp/unused.db") as ini:
        alembic = [str(Path(sys.executable).parent / "alembic"), "-c", ini, "heads"]
        heads = subprocess.run(alembic, capture_output=True, text=True, check=True).stdout.split()
    assert heads == [course.schema_version(), "(head)"]
    from sqlalchemy import text

    with tempfile.TemporaryDirectory() as folder, course.gradebook(Path(folder)) as gb:
        recorded = gb.db.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert recorded == course.schema_version()
