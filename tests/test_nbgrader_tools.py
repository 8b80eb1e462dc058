"""nbgrader's own tools on this course (nbgrader_config.py at the repository root).

A small class (a model answer, a blank hand-in that came through the exchange late, a corrupt
file and an answer that breaks a rule, of one quick assignment) is graded once with
`python -m grader grade` from the repository root; a real Jupyter server, started there as
`make formgrader` starts it, must show every one of them in Formgrader, the ungraded ones with
their reasons, ready for a person to override (a score typed there stays out of grades.csv), and
its math rendered offline; a local exchange must carry an assignment from release to a graded
submission and its feedback back to the student; and nbgrader's autograde, generate_feedback and
generate_assignment must refuse, in one line, changing nothing.

The module's class is shared: a test that types a score puts the gradebook back as it was, and
carol, who joins the class through the exchange, is the only student the listings may add.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from helpers import checksums, chromium, grade_cli, only_requests_to, scores
from jupyter_servers import free_port, request, running

from grader import REPO, course
from grader.instructor import nbgrader_guard
from proof import answers, sample_classes

pytestmark = pytest.mark.xdist_group("nbgrader_tools")  # one worker owns the class and the server
ASSIGNMENT = "safe_norm"  # the quickest to grade
NBGRADER = str(Path(sys.executable).parent / "nbgrader")  # the command an instructor types


def run(*command, env, cwd=REPO):
    return subprocess.run(list(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def grade(submitted: Path, out: Path, env):
    return grade_cli(submitted, out, env=env, timeout=600)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """The graded class goes under build/ (Formgrader opens files only inside the folder Jupyter
    serves, here the repository; no leading dot, Jupyter hides those); everything else is temporary."""
    assert (REPO / "nbgrader_config.py").is_file(), "nbgrader_config.py is missing at the repository root"
    (REPO / "build").mkdir(exist_ok=True)
    inside = Path(tempfile.mkdtemp(prefix="test-nbgrader-tools-", dir=REPO / "build"))
    tmp = tmp_path_factory.mktemp("nbgrader-tools")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")},
        "LANG": "zh_CN.UTF-8",  # an instructor whose locale is Chinese: grading and Formgrader in Chinese
        "CH4_GRADES": str(inside / "out"),
        "CH4_EXCHANGE": str(tmp / "exchange"),
        "CH4_COLLECTED": str(tmp / "collected"),
        # nbgrader's submit cache and Jupyter's own files stay out of the home folder
        "JUPYTER_CONFIG_DIR": str(tmp / "jupyter-config"),
        "JUPYTER_DATA_DIR": str(tmp / "jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "jupyter-runtime"),
        "JUPYTER_CONFIG_PATH": str(REPO / "tools" / "instructor-config"),  # as tools/lab.sh sets it
    }
    try:
        yield SimpleNamespace(out=inside / "out", tmp=tmp, env=env)
    finally:
        shutil.rmtree(inside, ignore_errors=True)


LATE = "2026-11-30 23:59:59.000000 UTC"  # bob's hand-in, in nbgrader's timestamp.txt
UNGRADED = {"erin": "不是合法的 JSON", "frank": "内核在运行中崩溃"}  # no score, and the reason a person reads
JOINS = "carol"  # hands in through the exchange (test_exchange_...), graded into this class then


@pytest.fixture(scope="module")
def graded(place):
    """alice hands in the model answer, bob the untouched release through the exchange (so with
    nbgrader's timestamp.txt and submission_secret.txt), erin a corrupt file, frank the model
    answer and then a line that ends its kernel (`os._exit`); graded from the repository root,
    where nbgrader_config.py (pointing at this very OUT) must change nothing."""
    submitted = place.tmp / "class"
    model = sample_classes.answered(ASSIGNMENT, answers.reference_answer(ASSIGNMENT))
    sample_classes.write(submitted, "alice", ASSIGNMENT, model)
    sample_classes.write(submitted, "bob", ASSIGNMENT, answers.release_notebook(ASSIGNMENT))
    (submitted / "bob" / ASSIGNMENT / "timestamp.txt").write_text(LATE)
    (submitted / "bob" / ASSIGNMENT / "submission_secret.txt").write_text(os.urandom(32).hex())
    sample_classes.write(submitted, "erin", ASSIGNMENT, raw=b'{"cells": [ not json')
    frank = answers.reference_answer(ASSIGNMENT) + "\nimport os\n\nos._exit(3)\n"
    sample_classes.write(submitted, "frank", ASSIGNMENT, sample_classes.answered(ASSIGNMENT, frank))
    done = grade(submitted, place.out, place.env)
    assert done.returncode == 0, f"grader grade failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    place.graded_stdout = done.stdout  # read by the locale's test; nothing changes it
    return scores(place.out)


def test_grading_in_a_chinese_locale_prints_chinese_progress_and_table(place, graded):
    """#45 item 7: the same command in zh_CN.UTF-8 (the English run is tests/test_grading.py's)."""
    out = place.graded_stdout
    assert out.startswith("评分："), out[:300]
    # erin's file is not JSON (unreadable: no kernel); the others go to a kernel, frank's dies there
    assert re.search(r"^  0 份与上次相同（沿用结果），1 份读不了（记 0 分并写明原因），3 份要自动评分$", out, re.M), out
    assert re.search(r"^  \[1/3\] \w+/safe_norm: ", out, re.M) and "  全班报告：" in out
    header = next(line for line in out.splitlines() if line.startswith("学生 "))
    assert header.split() == ["学生", "作业", "得分", "标记", "说明"], header
    assert "已写出" in out and "grades.csv" in out
    for english in ("Grading ", "to autograde", "class report:", "Wrote "):
        assert english not in out, english


def test_grading_from_the_repository_root_ignores_nbgrader_config(graded):
    (full, max_score), blank = graded[("alice", ASSIGNMENT)], graded[("bob", ASSIGNMENT)]
    assert max_score >= 10 and full == max_score, (
        f"the model answer got {full} / {max_score}: does the pipeline read nbgrader_config.py (autograde refused)?"
    )
    assert blank == (0.0, max_score), f"the blank hand-in got {blank}"
    for student in UNGRADED:
        assert graded[(student, ASSIGNMENT)] == (0.0, max_score), f"{student}: {graded[(student, ASSIGNMENT)]}"


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


def notebook_submissions(server) -> list[dict]:
    return call_json(server, f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")


def test_formgrader_lists_the_assignments_and_the_pipelines_scores(server, graded):
    names = {a["name"] for a in call_json(server, "/formgrader/api/assignments")}
    assert names == set(course.ASSIGNMENTS), f"Formgrader lists {sorted(names)}"
    shown = {
        s["student"]: (s["score"], s["max_score"], s["autograded"])
        for s in call_json(server, f"/formgrader/api/submissions/{ASSIGNMENT}")
        if s["student"] != JOINS
    }
    expected = {student: (*score, True) for (student, assignment), score in graded.items() if assignment == ASSIGNMENT}
    assert shown == expected, f"Formgrader shows {shown}, grades.csv says {expected}"


def test_formgrader_shows_each_ungraded_submission_with_its_reason_for_a_person(server, graded):
    listed = {s["student"]: s for s in call_json(server, f"/formgrader/api/submissions/{ASSIGNMENT}")}
    listed.pop(JOINS, None)
    assert set(listed) == {student for student, _ in graded}, f"Formgrader lists {sorted(listed)}"
    names = {student: (s["last_name"], s["first_name"]) for student, s in listed.items()}
    assert all(last == student and first is not None for student, (last, first) in names.items()), names
    assert listed["bob"]["display_timestamp"] == LATE.replace(".000000", ""), listed["bob"]
    # the others came without nbgrader's timestamp.txt: Formgrader shows when their files were written
    assert all(s["display_timestamp"] not in (None, "", "None") for s in listed.values()), listed
    notebooks = {n["student"]: n for n in notebook_submissions(server)}
    for student, reason in UNGRADED.items():
        assert listed[student]["needs_manual_grade"] and notebooks[student]["flagged"], (
            listed[student],
            notebooks[student],
        )
        status, page = call(server, f"/formgrader/submissions/{notebooks[student]['id']}/")
        assert status == 200 and "这份提交没有自动评分" in page and reason in page, f"{student}'s page: {page[:300]}"
    for student in ("alice", "bob"):
        assert not listed[student]["needs_manual_grade"] and not notebooks[student]["flagged"], listed[student]


def shown_scores(server) -> dict:
    return {s["student"]: s["score"] for s in call_json(server, f"/formgrader/api/submissions/{ASSIGNMENT}")}


def test_a_person_overrides_an_ungraded_submission_in_formgrader_and_grades_csv_stays(server, graded, place):
    """frank's answer is right but ends its kernel: the reviewer gives the first test its points.
    Formgrader shows them; grades.csv does not, also after the same grading command runs again.
    The gradebook is put back afterwards, as the other tests here read it."""
    from nbgrader.api import Gradebook

    csv_before = (place.out / "grades.csv").read_bytes()
    frank = next(n for n in notebook_submissions(server) if n["student"] == "frank")
    grades = call_json(server, f"/formgrader/api/grades?submission_id={frank['id']}")
    first = next(g for g in grades if g["max_score"] > 0)
    body = json.dumps({**first, "manual_score": first["max_score"]}).encode()
    put = urllib.request.Request(
        f"{server.url}/formgrader/api/grade/{first['id']}",
        data=body,
        method="PUT",
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(put, timeout=60) as response:
            assert response.status == 200
        assert shown_scores(server)["frank"] == first["max_score"], "Formgrader does not show the typed score"
        again = grade(place.tmp / "class", place.out, place.env | {"LANG": "en_US.UTF-8"})  # read in English
        assert again.returncode == 0 and ", 0 to autograde" in again.stdout, again.stdout[-2000:]
        assert (place.out / "grades.csv").read_bytes() == csv_before, "the typed score reached grades.csv"
    finally:
        with Gradebook(course.db_url(place.out / "course"), course.COURSE_ID) as gb:
            typed = gb.find_grade_by_id(first["id"])
            typed.manual_score, typed.needs_manual_grade = first["manual_score"], first["needs_manual_grade"]
            gb.db.commit()
    assert shown_scores(server)["frank"] == 0


def test_formgrader_renders_the_statements_math_offline(server):
    executable = chromium()
    from playwright.sync_api import sync_playwright

    alice = next(n for n in notebook_submissions(server) if n["student"] == "alice")
    outside = []

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.route("**/*", only_requests_to(server.url, outside))
            page.goto(f"{server.url}/formgrader/submissions/{alice['id']}/?token={server.token}")
            page.wait_for_function(
                "window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                " && document.querySelectorAll('.MathJax').length > 0",
                timeout=60_000,
            )
            rendered = page.locator(".text_cell_render").first.locator(".MathJax").count()
        finally:
            browser.close()
    assert not outside, f"Formgrader's page asked the network for {outside}"
    assert rendered > 0, "the statement's math did not render"


REPLACED = {"assign", "generate-feedback", "autograde"}  # the cells of Generate, Generate Feedback, Autograde


def test_formgrader_deep_links_load_and_offer_no_button_that_refuses(server):
    """Each Formgrader page opened first, in a new browser, from a link with ?token= shows its
    rows; the buttons of the nbgrader steps the course replaces are hidden, and those are exactly
    the steps that refuse when called."""
    pages = [
        "/formgrader/manage_assignments",
        f"/formgrader/manage_submissions/{ASSIGNMENT}",
        "/formgrader/gradebook",
        f"/formgrader/gradebook/{ASSIGNMENT}",
        f"/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}",
        "/formgrader/manage_students",
        "/formgrader/manage_students/alice",
        f"/formgrader/manage_students/alice/{ASSIGNMENT}",
    ]
    from playwright.sync_api import sync_playwright

    loading, buttons = {}, {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
        try:
            for path in pages:
                context = browser.new_context()  # no cookie from an earlier page
                page = context.new_page()
                page.goto(f"{server.url}{path}?token={server.token}")
                page.wait_for_load_state("networkidle")
                if page.get_by_text("Loading, please wait").count():
                    loading[path] = page.content()[-300:]
                cells = page.locator("tbody td[class]")
                buttons[path] = {
                    name
                    for i in range(cells.count())
                    if cells.nth(i).is_visible() and cells.nth(i).locator("a").count()
                    for name in cells.nth(i).get_attribute("class").split()
                }
                context.close()
        finally:
            browser.close()
    assert not loading, f"these deep links stayed on 'Loading': {sorted(loading)}"
    assert buttons[pages[0]] and buttons[pages[1]], f"no button at all: {buttons}"
    shown = buttons[pages[0]] | buttons[pages[1]]
    assert not shown & REPLACED, f"Formgrader still offers {sorted(shown & REPLACED)}"
    # the hidden buttons are the steps that refuse
    for step in ("assign", "generate_feedback", "alice/autograde", "alice/generate_feedback"):
        where = "submission" if step.endswith("autograde") else "assignment"
        answer = call_json(server, f"/formgrader/api/{where}/{ASSIGNMENT}/{step}", "POST")
        assert answer["success"] is False, f"{step} did not refuse: {answer}"


def test_formgrader_opens_the_autograded_notebook_and_the_feedback_is_served(server, place):
    notebooks = notebook_submissions(server)
    alice = next((n["id"] for n in notebooks if n["student"] == "alice"), None)
    assert alice, f"no submitted notebook of alice in Formgrader: {notebooks}"
    status, page = call(server, f"/formgrader/submissions/{alice}/")
    assert status == 200, f"Formgrader's page of alice's notebook answered {status}: {page[:500]}"
    assert "评分程序判定：✅" in page, "the page is not the pipeline's autograded notebook (no verdict in it)"
    link = re.search(r'data-link="([^"]+)"', page)
    assert link, "the page has no link to open the notebook itself"
    status, body = call(server, f"/api/contents/{link.group(1)}?content=0")
    assert status == 200, f"the notebook link {link.group(1)} does not open ({status}): {body[:300]}"
    page_path = (place.out / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html").relative_to(REPO)
    status, body = call(server, f"/files/{page_path}")
    assert status == 200 and ASSIGNMENT in body, f"the feedback page {page_path} is not served ({status})"


STEPS = {"Autograde": "autograde", "GenerateFeedback": "generate_feedback", "GenerateAssignment": "generate_assignment"}
NO_NOTEBOOK = re.compile(r"\[AutogradeApp \| WARNING\] No notebooks were matched by '[^']+/\*\.ipynb'")


def test_autograde_and_the_other_bypasses_refuse_and_change_nothing(server, place):
    course_root = place.out / "course"
    watched = {"course": course_root, "exercises": course.EXERCISES, "solutions": course.SOLUTIONS}
    before = {name: checksums(folder) for name, folder in watched.items()}
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
    # All six at once: each is a few seconds of imports.
    commands = {
        (step, cwd): subprocess.Popen(
            [NBGRADER, command, ASSIGNMENT, "--force"],
            cwd=cwd,
            env=place.env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for step, command in STEPS.items()
        for cwd in (REPO, course_root)
    }
    for (step, cwd), process in commands.items():
        output = process.communicate(timeout=600)[0]
        lines = [line for line in output.splitlines() if line.strip()]
        assert process.returncode != 0, f"nbgrader {STEPS[step]} in {cwd} ran:\n{output[-2000:]}"
        # Before it refuses, nbgrader autograde lists the submitted folders and warns about each
        # one that holds no notebook (erin's: her file was unreadable). Anything else, a second
        # line of the refusal or a traceback, fails.
        listing = [line for line in lines if NO_NOTEBOOK.fullmatch(line)]
        refusal = [line for line in lines if line not in listing]
        assert len(refusal) == 1 and refusal[0].endswith(nbgrader_guard.REFUSALS[step]), (
            f"nbgrader {STEPS[step]} in {cwd} did not refuse in one line:\n{output[-2000:]}"
        )
        assert all("/submitted/erin/" in line for line in listing), listing
    for name, folder in watched.items():
        after = checksums(folder)
        changed = sorted(f for f in before[name].keys() | after.keys() if before[name].get(f) != after.get(f))
        assert not changed, f"a refused step still changed {name}: {changed}"


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

    # the class graded again with carol's collected folder in it: only hers is new
    shutil.copytree(collected / "carol", place.tmp / "class" / "carol")
    done = grade(place.tmp / "class", place.out, env)
    assert done.returncode == 0, f"grader grade of the collected folder failed:\n{done.stderr[-2000:]}"
    score, max_score = scores(place.out)[("carol", ASSIGNMENT)]
    assert max_score >= 10 and score == max_score, f"carol's collected model answer got {score} / {max_score}"

    # and back: Formgrader's "release feedback" sends our page, the student fetches it
    released = call_json(server, f"/formgrader/api/assignment/{ASSIGNMENT}/release_feedback", "POST")
    assert released["success"], f"Formgrader's release feedback failed: {released.get('log', '')[-2000:]}"
    done = run(NBGRADER, "fetch_feedback", ASSIGNMENT, "--student=carol", where, env=env)
    assert done.returncode == 0, f"fetch_feedback failed:\n{done.stderr[-2000:]}"
    pages = list((home / "ch04" / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
    assert len(pages) == 1, f"fetch_feedback brought {pages}:\n{done.stderr[-2000:]}"
    page = pages[0].read_text(encoding="utf-8")
    ours = (place.out / "feedback" / "carol" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    assert "评分程序判定：✅" in page and page == ours, "the student did not get the grader's feedback page"


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


def test_make_formgrader_refuses_a_folder_the_server_cannot_show(tmp_path):
    """The server shows this checkout only: a class graded elsewhere would list as empty drafts.
    One line says so and what to do, before anything starts."""
    done = subprocess.run(
        ["make", "formgrader", f"GRADES={tmp_path}"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("make formgrader:")]
    assert len(said) == 1 and str(tmp_path) in said[0] and "classes/NAME/graded" in said[0], done.stderr


@pytest.mark.parametrize(
    ("command", "says"),
    [
        # a class that was never graded: Formgrader would start on an empty gradebook it made itself
        (
            ["formgrader", "CLASS=never-graded-class"],
            "make formgrader: classes/never-graded-class/graded holds no graded class",
        ),
        # an empty GRADES: realpath's own error came first, then "  is outside this checkout"
        (["formgrader", "GRADES="], "make formgrader: GRADES is empty"),
        # submissions named without OUT: the grades would land in the documentation's placeholder class
        (["grade", "SUBMISSIONS=."], "make grade: SUBMISSIONS=. needs OUT=DIR too"),
    ],
)
def test_make_refuses_an_instructors_slip_in_one_line_before_anything_starts(command, says):
    done = subprocess.run(["make", *command], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "***" not in line]
    assert len(said) == 1 and said[0].startswith(says), done.stderr
    assert not (REPO / "classes" / "never-graded-class").exists()


def test_make_grade_takes_submissions_with_out_or_a_class(tmp_path):
    """Either names where the grades go, so the refusal above does not stand in the way: the
    grader itself then runs (here on an empty folder: nothing to grade)."""
    (tmp_path / "submitted").mkdir()
    for where in (f"OUT={tmp_path / 'out'}", "CLASS=never-graded-class"):
        command = ["make", "grade", f"SUBMISSIONS={tmp_path / 'submitted'}", where]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        assert "needs OUT" not in done.stderr and "grader grade: nothing to grade in" in done.stderr, done.stderr
    assert not (REPO / "classes" / "never-graded-class").exists()


def test_formgrader_names_each_student_once_and_says_where_assignments_were_handed_out(server, graded):
    """#45 item 11: a student with one name (the id) read "alice," and every assignment not in the
    exchange "draft"; this course hands its exercises out in the student edition. The server's
    locale is Chinese here, so what the course adds reads Chinese (grader/i18n.py)."""
    from playwright.sync_api import sync_playwright

    status = {a["name"]: a["status"] for a in call_json(server, "/formgrader/api/assignments")}
    texts = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            for path, cells in [
                (f"/formgrader/manage_submissions/{ASSIGNMENT}", "td.student-name"),
                ("/formgrader/manage_students", "td.name"),
                (f"/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}", "td.name .name-shown"),
                ("/formgrader/manage_assignments", "tbody tr"),
            ]:
                page.goto(f"{server.url}{path}?token={server.token}")
                page.wait_for_load_state("networkidle")
                page.wait_for_selector(cells, state="attached")
                texts[path] = page.eval_on_selector_all(  # a row: its cells' texts, spaced
                    cells, "cells => cells.map(c => [...(c.cells || [c])].map(x => x.textContent.trim()).join(' '))"
                )
        finally:
            browser.close()
    students = {student for student, _ in graded}
    for path in list(texts)[:3]:
        shown = set(texts[path]) - {JOINS}
        assert shown == students, f"{path} names {sorted(shown)}, the students are {sorted(students)}"
    rows = {row.split()[0]: row for row in texts["/formgrader/manage_assignments"]}
    assert set(rows) == set(course.ASSIGNMENTS), rows
    for name, row in rows.items():
        assert "draft" not in row, row
        assert ("released" if status[name] == "released" else "学生版") in row, (name, status[name], row)


def test_sigterm_to_make_formgrader_stops_the_server_and_its_kernels(place, graded):
    """#45 item 12: make ran the server through an extra shell, so the SIGTERM make passes to its
    child stopped the shell and left Jupyter running. Now nothing it started is left."""
    import contextlib
    import signal
    import time

    import psutil
    from jupyter_servers import wait_until_answers

    port, token = free_port(), os.urandom(8).hex()
    env = place.env | {"LAB_PORT": str(port), "JUPYTER_TOKEN": token}
    log, started = place.tmp / "make-formgrader.log", []
    with open(log, "wb") as sink:
        make = subprocess.Popen(
            ["make", "formgrader", f"GRADES={place.out}"], cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_answers(make, f"{url}/api/status?token={token}", log, "make formgrader", 120)
        status, body = request(url, token, "/api/kernels", "POST")  # a kernel, as opening a notebook starts one
        assert status == 201, body[:300]
        deadline = time.monotonic() + 60
        while len(psutil.Process(make.pid).children(recursive=True)) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        started = psutil.Process(make.pid).children(recursive=True)
        assert len(started) >= 2, started  # the server and its kernel
        make.send_signal(signal.SIGTERM)
        make.wait(timeout=60)
        gone, alive = psutil.wait_procs(started, timeout=30)
        assert not alive, f"left running after SIGTERM to make: {[p.cmdline() for p in alive]}"
    finally:
        for process in [*started, make]:  # whatever this test started, stopped whatever happened
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                process.kill()
