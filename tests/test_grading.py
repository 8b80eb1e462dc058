"""The grading command on a class of broken submissions next to correct ones.

One real run of `python -m grader grade` (module fixture `graded`, read into memory at once),
then one test per submission: the score it must get and the reason its feedback and the score
table must give. The class also has what is not a submission (#52 item 2: a notebook with no
assignment folder, an empty student folder, a folder named with a capital, an unknown name): no
kernel runs for them, and each must reach the CSVs and the class report. The re-runs on the
same output folder happen in their own fixture (`reruns`) afterwards, the last of them started
twice at once (the double start); nothing reads the first run from disk, so the tests hold in
any order.
"""

import asyncio
import contextlib
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from helpers import checksums, grade_cli, grade_command, gradebook_rows, read_csv, score_table_line
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.preprocessors import Execute

from grader import REPO, course, messages
from grader.judging import verdict
from grader.output import history, report
from grader.pipeline import discovery, lock, staging, store
from proof import answers, sample_classes

ASSIGNMENT = "residuals"  # quick to grade; the broken cases do not depend on the assignment
CELL_TIMEOUT, CEILING = 20, 60  # small limits keep the loop and slow cases short
pytestmark = pytest.mark.xdist_group("grading")  # one worker owns the run below

# A wrong answer beside the broken ones: sin2_recompute's backward rule gives 0 beyond |x| = 9,
# which no visible input reaches (the backward pass gets values within 8 there) but
# test_hidden_random's inputs (40 to 256 of them, uniform on ±12) do but for a chance of 1e-5; the
# other hidden tests stay within 8. This hint of that hidden test must reach its feedback.
HIDDEN_FAILS = "hidden-fails"
RECOMPUTED = "return (g * jnp.sin(2.0 * x),)"
HIDDEN_ANSWER = answers.reference_answer(ASSIGNMENT).replace(
    RECOMPUTED, "return (jnp.where(jnp.abs(x) < 9.0, g * jnp.sin(2.0 * x), 0.0),)"
)
HIDDEN_TEST, HIDDEN_POINTS, HIDDEN_HINT = "test_hidden_random", 2, "梯度是 sin 2x：检查链式法则里的因子。"


# The reference with its test cells moved above the answer, in reverse order: run as handed in,
# every test would find nothing to export. Intake puts them back in released order.
MOVED = "tests-moved"


def moved_tests():
    nb = sample_classes.answered(ASSIGNMENT, answers.reference_answer(ASSIGNMENT))
    tests = [c for c in nb.cells if verdict.is_test(c)]
    rest = [c for c in nb.cells if not verdict.is_test(c)]
    setup = next(i for i, c in enumerate(rest) if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    nb.cells = rest[: setup + 1] + tests[::-1] + rest[setup + 1 :]
    return nb


def grade(submitted, out, *extra, **run):
    # The crashing cases need os and ctypes: student code runs as written, and the kernels really crash.
    limits = ["--cell-timeout", CELL_TIMEOUT, "--ceiling", CEILING]
    return grade_cli(submitted, out, *limits, *extra, **run)


def feedback_pages(out: Path) -> dict:
    return {
        (p.parts[-3], p.parts[-2]): p.read_text(encoding="utf-8") for p in sorted((out / "feedback").glob("*/*/*.html"))
    }


CASES = [expectation for expectation, _ in sample_classes.broken_cases(ASSIGNMENT)]  # test ids; nothing written
ENGLISH = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
ENGLISH["LANG"] = "en_US.UTF-8"
# What is not a submission (#52 item 2): (student, what was found, the likely fix shown)
NOT_GRADED = {
    ("c02", "softplus.ipynb"): "did you mean softplus/? move it to c02/softplus/softplus.ipynb and grade again",
    ("c03", ""): "nothing was handed in, or collecting lost it",
    ("c05", "Softplus"): "did you mean softplus/? rename the folder to c05/softplus/ and grade again",
    ("ok-1", "no_such_assignment"): "not an assignment of this course (the assignments: clip_global_norm, ",
}


def not_a_submission(submitted: Path) -> None:
    """The layout mistakes of NOT_GRADED, in `submitted`."""
    release = answers.release_notebook("softplus")
    (submitted / "c02").mkdir()
    nbformat.write(release, submitted / "c02" / "softplus.ipynb")  # no assignment folder
    (submitted / "c03").mkdir()  # an empty student folder
    (submitted / "c05" / "Softplus").mkdir(parents=True)  # a capital letter
    nbformat.write(release, submitted / "c05" / "Softplus" / "softplus.ipynb")
    (submitted / "ok-1" / "no_such_assignment").mkdir()  # an unknown name, beside ok-1's submission
    (submitted / "ok-1" / "no_such_assignment" / "x.ipynb").write_text("{}")


def read_outputs(out: Path) -> SimpleNamespace:
    """What a run wrote besides grades.csv: the other CSVs (their rows) and the class report."""

    def rows(name):
        with open(out / name, encoding="utf-8", newline="") as handle:
            return list(csv.reader(handle))

    return SimpleNamespace(
        wide=rows("grades_wide.csv"),
        canvas=rows("grades_canvas.csv"),
        report=json.loads((out / "report" / "class.json").read_text(encoding="utf-8")),
        page=html.unescape(re.sub(r"<[^>]+>", " ", (out / "report" / "index.html").read_text(encoding="utf-8"))),
    )


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The broken class graded once; what the run printed and wrote, read at once."""
    submitted = tmp_path_factory.mktemp("submitted")
    sample_classes.broken_class(submitted, ASSIGNMENT)
    sample_classes.write(submitted, HIDDEN_FAILS, ASSIGNMENT, sample_classes.answered(ASSIGNMENT, HIDDEN_ANSWER))
    sample_classes.write(submitted, MOVED, ASSIGNMENT, moved_tests())
    not_a_submission(submitted)
    protected = {"submitted": submitted, "solutions": course.SOLUTIONS, "exercises": course.EXERCISES}
    before = {name: checksums(folder) for name, folder in protected.items()}
    out = tmp_path_factory.mktemp("out")
    scratch = tmp_path_factory.mktemp("tmpdir")  # the run's TMPDIR: its workers' scratch courses go here
    # in English, on an 80-column terminal (what rich reads from COLUMNS)
    done = grade(submitted, out, env=ENGLISH | {"TMPDIR": str(scratch), "COLUMNS": "80"})
    return SimpleNamespace(
        submitted=submitted,
        out=out,
        done=done,
        # Dask's own dask-scratch-space (two empty lock files, shared by every Dask process) may stay
        scratch_left=sorted(p.name for p in scratch.iterdir() if p.name != "dask-scratch-space"),
        unchanged=[name for name, folder in protected.items() if checksums(folder) == before[name]],
        header=(out / "grades.csv").read_text(encoding="utf-8").splitlines()[0],
        rows=read_csv(out),
        pages=feedback_pages(out),
        gradebook=gradebook_rows(course.sqlite_url(out / "course")),
        autograded=checksums(out / "course" / "autograded"),
        written=read_outputs(out),
    )


def submission_rows(rows: dict) -> dict:
    """The rows of grades.csv that are submissions (not flagged not-graded)."""
    return {key: row for key, row in rows.items() if store.NOT_GRADED not in row["flags"].split()}


def test_run_completes_and_writes_nothing_but_its_output(graded):
    assert graded.done.returncode == 0, graded.done.stderr[-3000:]
    assert graded.unchanged == ["submitted", "solutions", "exercises"], "the grader changed its input or the course"
    assert "unknown assignment" in graded.done.stdout


def test_the_run_leaves_no_scratch_folder_behind(graded):
    # each worker process grades in a private course folder under TMPDIR; it goes when the process does
    assert graded.done.returncode == 0, graded.done.stderr[-3000:]
    assert graded.scratch_left == []


def test_a_progress_line_for_each_submission_graded(graded):
    sent = int(re.search(r"(\d+) to autograde", graded.done.stdout).group(1))
    progress = re.findall(rf"^  \[ *(\d+)/{sent}\] ([^/\s]+)/{ASSIGNMENT}: ", graded.done.stdout, re.MULTILINE)
    assert [int(n) for n, _ in progress] == list(range(1, sent + 1)), graded.done.stdout
    assert len({student for _, student in progress}) == sent > 0
    # "unchanged or unreadable" was one number: a first run has nothing unchanged, and says how many
    # could not be read (0 with the reason, no kernel); the re-run's test below has every one unchanged
    unreadable = len(submission_rows(graded.rows)) - sent
    said = f"  0 unchanged since the last run (results kept), {unreadable} unreadable (0 with the reason), {sent} to"
    assert said in graded.done.stdout and unreadable > 0, graded.done.stdout[:2000]


def test_progress_lines_fit_an_80_column_terminal_and_end_between_words(graded):
    """#45 item 10: a note cut at 70 characters was up to 140 columns of Chinese, broken anywhere
    by the terminal. Each line now fits (rich's cell widths) and a long note ends with "…" where a
    line may break; the table after it has the whole note."""
    from rich.cells import cell_len

    lines = [line for line in graded.done.stdout.splitlines() if re.match(r"^  \[ *\d+/\d+\] ", line)]
    assert lines and all(cell_len(line) <= 80 for line in lines), [line for line in lines if cell_len(line) > 80]
    cut = [line for line in lines if line.endswith("…")]
    assert cut, "no note was long enough to be cut: the check proves nothing"
    for line in cut:
        student = re.match(r"^  \[ *\d+/\d+\] ([^/]+)/", line).group(1)
        kept = line.split(f"/{ASSIGNMENT}: ", 1)[1][:-1]
        whole = score_table_line(graded.done.stdout, student)
        assert kept in whole, (line, whole)
        after = whole.split(kept, 1)[1]
        assert after[0] == " " or not (kept[-1].isascii() and kept[-1].isalnum() and after[0].isalnum()), line


def test_csv_has_the_contract_header_and_a_row_per_submission(graded):
    assert graded.header == "student_id,assignment,score,max_score,flags"  # flags: added after the contract's four
    extra = {(HIDDEN_FAILS, ASSIGNMENT), (MOVED, ASSIGNMENT)}
    assert set(submission_rows(graded.rows)) == {(c.student, c.assignment) for c in CASES} | extra
    assert set(graded.rows) - set(submission_rows(graded.rows)) == set(NOT_GRADED)


def test_what_is_not_a_submission_is_in_every_csv_and_the_report_with_the_reason_and_the_fix(graded):
    """#52 item 2: a notebook with no assignment folder, an empty student folder, a folder with a
    capital letter and an unknown name vanished (one terminal line at most). Each is a row of
    grades.csv with a blank score and the flag not-graded, of grades_wide.csv with the reason and
    the fix, of grades_canvas.csv with a blank cell (Canvas then changes nothing), and of the class
    report; the terminal says it too."""
    for (student, found), fix in NOT_GRADED.items():
        assert graded.rows[(student, found)] == {
            "student_id": student, "assignment": found, "score": "", "max_score": "", "flags": "not-graded"
        }  # fmt: skip
        where = report.where(student, found)
        assert f"  not graded  {where}: " in graded.done.stdout and fix in graded.done.stdout, where
        wide = {row[0]: row for row in graded.written.wide[1:]}
        assert graded.written.wide[0][-1] == "not_graded" and f"{where}: " in wide[student][-1], wide[student]
        assert fix in wide[student][-1], wide[student]
        canvas = {row[3]: row for row in graded.written.canvas[2:]}  # by SIS Login ID
        assert student in canvas, f"{student} is missing from the Canvas CSV"
        listed = [n for n in graded.written.report["not_graded"] if (n["student"], n["found"]) == (student, found)]
        assert len(listed) == 1 and listed[0]["reason"] in discovery.REASONS, listed
        assert f"{where} " in graded.written.page and fix in graded.written.page, where
    assert graded.written.canvas[0][5:] == [ASSIGNMENT], "a column of Canvas's import that is not an assignment"
    canvas = {row[3]: row for row in graded.written.canvas[2:]}
    assert canvas["c05"][5:] == canvas["c02"][5:] == canvas["c03"][5:] == [""]  # no score: nothing to import
    assert canvas["ok-1"][5] == graded.rows[("ok-1", ASSIGNMENT)]["score"]  # ok-1's submission keeps its score
    wide = {row[0]: row for row in graded.written.wide[1:]}
    for student in ("c02", "c03", "c05"):  # nothing of theirs was graded: no total, where a 0 would read as a score
        assert graded.written.wide[0][-2] == "total" and wide[student][-2] == "", wide[student]
        assert re.search(rf"^{student}\s+— / [\d.]+\s+0/\d+$", graded.done.stdout, re.M), graded.done.stdout
        row = " ".join(graded.written.page.split()).split(f" {student} ⚠ not-graded ", 1)[1].split(" / ", 1)[0]
        assert row.endswith(" —"), row  # the report's total column (the page's text, tags removed)
    assert "not graded: folders and files 4 " in " ".join(graded.written.page.split()) + " "
    assert not (graded.out / "feedback" / "c05").exists(), "a page for what was never graded"
    assert not set(NOT_GRADED) & set(graded.gradebook) and not {"c02", "c03", "c05"} & {s for s, _ in graded.gradebook}


def test_the_course_folder_holds_the_gradebook_and_the_autograded_notebooks(graded):
    assert graded.gradebook[("ok-1", ASSIGNMENT)], "ok-1 has no submission in OUT_DIR/course/gradebook.db"
    assert f"ok-1/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in graded.autograded


@pytest.mark.parametrize("case", CASES, ids=[c.student for c in CASES])
def test_each_submission_gets_its_score_and_reason(graded, case):
    row = graded.rows[(case.student, case.assignment)]
    score, max_score = float(row["score"]), float(row["max_score"])
    assert max_score >= 10
    expected = {"full": max_score, "zero": 0.0}.get(case.verdict)
    if expected is not None:
        assert score == expected, f"{case.why}: scored {score}/{max_score}"
    page = graded.pages.get((case.student, case.assignment))
    assert page, f"{case.why}: no feedback page"
    if case.note:
        assert case.note in page, f"{case.why}: feedback lacks '{case.note}'"
        assert case.note in score_table_line(graded.done.stdout, case.student), (
            f"{case.why}: score table lacks '{case.note}'"
        )


def test_test_cells_moved_above_the_answer_run_where_they_were_released(graded):
    row = graded.rows[(MOVED, ASSIGNMENT)]
    assert row["score"] == row["max_score"] and row["flags"] == "", row
    assert messages.cells_reordered() in score_table_line(graded.done.stdout, MOVED)
    assert messages.cells_reordered() in graded.pages[(MOVED, ASSIGNMENT)]


def test_a_cell_over_its_limit_is_interrupted_and_the_rest_still_runs(graded):
    """The endless loop after the answer's definitions: that cell alone is stopped at the per-cell
    limit (its note names the cell and the limit), the tests after it run and pass."""
    row = graded.rows[("infinite-loop", ASSIGNMENT)]
    assert row["score"] == row["max_score"], row
    line = score_table_line(graded.done.stdout, "infinite-loop")
    assert f"单元格 answer 超过 {CELL_TIMEOUT} 秒未结束，已被中断" in line, line
    assert "时间上限" not in line, line


def test_a_submission_over_the_ceiling_is_stopped_and_scores_0(graded):
    """Every cell is under the per-cell limit, together they pass the per-submission ceiling."""
    assert graded.rows[("slow-every-cell", ASSIGNMENT)]["score"] == "0"
    line = score_table_line(graded.done.stdout, "slow-every-cell")
    assert f"超过每份提交 {CEILING} 秒的时间上限，已终止" in line, line


def test_the_limits_default_to_60_and_300_seconds(monkeypatch, tmp_path):
    """What `python -m grader grade` passes on without --cell-timeout and --ceiling, and what
    nbgrader's Execute step is then given (nbgrader's own default would be 30 s)."""
    import grader.__main__ as cli

    seen = []
    monkeypatch.setattr(cli, "cmd_grade", seen.append)
    cli.main(["grade", "SUBMITTED", "--out", "OUT"])
    assert (seen[0].cell_timeout, seen[0].ceiling) == (60, 300)
    assert course.nbgrader_config(tmp_path, cell_timeout=seen[0].cell_timeout).Execute.timeout == 60
    with pytest.raises(SystemExit):  # student code is never scanned, so there is no scan to switch off
        cli.main(["grade", "SUBMITTED", "--out", "OUT", "--no-code-scan"])


def test_make_demo_ends_with_what_to_do_next_and_no_maintainer_step(monkeypatch, tmp_path, capsys):
    """`make demo` grades the committed exercises/ (no release step and its `git diff` advice), then
    tells the instructor where the class report and a feedback page are, and what to run next."""
    import proof.__main__ as cli
    from grader import grade

    monkeypatch.setattr(grade, "main", lambda args: 0)
    assert cli.main(["demo", "--out", str(tmp_path / "demo")]) == 0
    shown = capsys.readouterr().out
    nexts = shown.split("\nNext:\n")[1].splitlines()
    assert str(tmp_path / "demo" / "report" / "index.html") in nexts[0], shown
    assert str(tmp_path / "demo" / "feedback" / "carol") in nexts[1], shown
    assert nexts[2].strip().startswith(f"make formgrader GRADES={tmp_path / 'demo'}"), shown
    assert nexts[3].strip().startswith("make grade CLASS=NAME"), shown  # the class's documented home (README)
    dry_run = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "grader release" not in dry_run and "proof demo" in dry_run, dry_run


def test_proof_try_draws_from_the_secret_it_is_given(monkeypatch, capsys):
    """`python -m proof try NAME SLUG --secret S` scores with S (the same draw again); without it, a
    fresh secret each time (None to quick_score)."""
    import proof.__main__ as cli
    from grader.judging.quick import QuickScore
    from proof import answers

    seen = []

    def scored(assignment, answer, secret=None):
        seen.append((assignment, secret))
        return QuickScore(1.0, 1.0, [], [], [])

    monkeypatch.setattr(answers, "quick_score", scored)
    slug = next(e.slug for e in answers.entries("softplus"))
    assert cli.main(["try", "softplus", slug, "--secret", "s-42"]) == 0
    assert cli.main(["try", "softplus", slug]) == 0
    assert seen == [("softplus", "s-42")] * 3 + [("softplus", None)] * 3, seen  # reference, blank, the entry
    assert capsys.readouterr().out.count(slug) == 2


def test_proof_try_takes_a_file_name_and_refuses_a_name_it_does_not_know(monkeypatch, capsys):
    """An answer is named by its slug or its file's name (what the table prints); a name that is
    neither scores nothing and says so in one line, with the closest name, instead of trying only
    the reference and the blank stub as if the answer had been tried."""
    import proof.__main__ as cli
    from grader.judging.quick import QuickScore
    from proof import answers

    tried = []
    monkeypatch.setattr(
        answers, "quick_score", lambda a, answer, secret=None: tried.append(answer) or QuickScore(1, 1, [], [], [])
    )
    entry = next(e for e in answers.entries("softplus") if e.kind == "wrong")
    assert cli.main(["try", "softplus", f"wrong_{entry.slug}"]) == 0
    assert tried == [None, "raise NotImplementedError()", entry.answer], tried
    tried.clear()
    assert cli.main(["try", "softplus", f"wrong_{entry.slug}x"]) == 2 and not tried
    said = capsys.readouterr().err.strip()
    name = f"wrong_{entry.slug}"
    assert said == f"python -m proof try: no catalogued softplus answer named '{name}x'; did you mean {name}?", said
    assert cli.main(["try", "Softplus"]) == 2 and not tried  # an assignment it does not know: no traceback either
    said = capsys.readouterr().err.strip()
    assert said == "python -m proof try: no assignment named 'Softplus'; did you mean softplus?", said


def test_an_error_raised_by_the_answer_is_one_line_of_the_table():
    """JAX puts a whole traceback into some error values (a failing host callback does): the
    table and the CSV keep their first line."""
    from grader import messages

    value = "INTERNAL: CpuCallback error: Traceback (most recent call last):\n  File"
    note = messages.answer_raised("JaxRuntimeError", value)
    assert note == "作答区运行时报错：JaxRuntimeError: INTERNAL: CpuCallback error: Traceback (most recent call last):"


def test_feedback_hides_the_hidden_tests_code_but_shows_their_messages(graded):
    """On the page of a student who fails a hidden test: none of its code, all of its verdict."""
    from grader.instructor.edition import secret_passages

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, ASSIGNMENT), as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in source.cells if verdict.is_test(c)}
    assert RECOMPUTED in answers.reference_answer(ASSIGNMENT), "the hidden-fails answer is the reference"
    assert HIDDEN_TEST in verdict.hidden_tests(ASSIGNMENT) and HIDDEN_HINT in cells[HIDDEN_TEST].source
    assert cells[HIDDEN_TEST].metadata["nbgrader"]["points"] == HIDDEN_POINTS
    assert not [t for t, c in cells.items() if HIDDEN_HINT in c.source and t != HIDDEN_TEST], "the hint is not unique"

    page = graded.pages[(HIDDEN_FAILS, ASSIGNMENT)]
    text = html.unescape(re.sub(r"<[^>]+>", "", page))  # what a reader sees, code lines as they are shown
    lines = "\n".join(line.strip() for line in text.splitlines())
    hidden = secret_passages(ASSIGNMENT, kinds=("HIDDEN TESTS",))
    assert hidden and any("\n" in p for p in hidden), "found no hidden-test lines to look for"
    shown = [p for p in hidden if p in lines]
    assert not shown and "BEGIN HIDDEN TESTS" not in lines, f"feedback shows hidden-test code: {shown[:3]}"
    failed = re.findall(rf"评分程序判定：❌ 未通过（0 / {HIDDEN_POINTS} 分）：(.*)", lines)
    assert len(failed) == 1 and HIDDEN_HINT in failed[0], f"the hidden test's message is not shown: {failed}"


@pytest.fixture(scope="module")
def reruns(graded, tmp_path_factory):
    """The same command again on the same input; then once more with ok-1's notebook changed
    (a wrong answer now) and a new student ok-2 handing in ok-1's first notebook. That third run
    is started twice (#52 item 6, the double start): the second command once the first has said
    what it grades, while it grades ok-1 and ok-2 in kernels."""
    out = graded.out
    autograded = checksums(out / "course" / "autograded")
    again = grade(graded.submitted, out, env=ENGLISH)
    same = SimpleNamespace(
        done=again, rows=read_csv(out), autograded=checksums(out / "course" / "autograded"), written=read_outputs(out)
    )
    changed = tmp_path_factory.mktemp("changed") / "submitted"
    shutil.copytree(graded.submitted, changed, symlinks=True)  # links stay links, never followed
    shutil.copytree(changed / "ok-1", changed / "ok-2")
    wrong = next(e for e in answers.entries(ASSIGNMENT) if e.slug == "recompute_saves_sin2x")
    sample_classes.write(changed, "ok-1", ASSIGNMENT, sample_classes.answered(ASSIGNMENT, wrong.answer))
    command = grade_command(changed, out, "--cell-timeout", CELL_TIMEOUT, "--ceiling", CEILING)
    first = subprocess.Popen(command, cwd=REPO, env=ENGLISH, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    said = []
    for line in first.stdout:  # up to "Grading ...": it holds OUT_DIR by then
        said.append(line)
        if line.startswith("Grading "):
            break
    second = grade(changed, out, env=ENGLISH)
    rest, errors = first.communicate(timeout=900)
    third = subprocess.CompletedProcess(command, first.returncode, "".join(said) + rest, errors)
    new = SimpleNamespace(
        done=third,
        pid=first.pid,
        second=second,
        rows=read_csv(out),
        gradebook=gradebook_rows(course.sqlite_url(out / "course")),
        written=read_outputs(out),
        runs=history_rows(out),
    )
    return SimpleNamespace(autograded_before=autograded, same=same, changed=new)


def history_rows(out: Path) -> dict:
    """{run id: {(student, assignment): (score, max_score)}} as the gradebook's history holds them,
    read with the standard library's sqlite3 (not the grader's code)."""
    import sqlite3

    found = {}
    with contextlib.closing(sqlite3.connect(out / "course" / "gradebook.db")) as db:
        query = "SELECT run, student, assignment, score, max_score FROM ch4_scores ORDER BY run"
        for run, student, assignment, score, max_score in db.execute(query):
            found.setdefault(run, {})[(student, assignment)] = (score, max_score)
    return found


def as_stored(rows: dict) -> dict:
    """grades.csv's rows as (score, max_score), None where blank (not graded)."""
    return {key: tuple(float(r[c]) if r[c] else None for c in ("score", "max_score")) for key, r in rows.items()}


def test_a_second_run_on_the_same_output_folder_stops_at_once_and_the_first_completes(graded, reruns):
    """#52 item 6: both graded everything and both wrote the outputs. The second now says that a
    run is under way, and who runs it, and stops (exit 75, EX_TEMPFAIL) before it grades anything;
    the first completes and its outputs are whole."""
    second, first = reruns.changed.second, reruns.changed.done
    assert second.returncode == lock.EXIT_BUSY == 75, second.stdout[-2000:] + second.stderr[-2000:]
    [line] = second.stderr.splitlines()
    assert line.startswith(
        f"grader grade: another run is writing {graded.out} (grader grade, pid {reruns.changed.pid} on "
    ), line
    assert line.endswith("; wait for it to finish, then run this again"), line
    assert "Grading " not in second.stdout and "/" + ASSIGNMENT + ":" not in second.stdout, second.stdout
    assert first.returncode == 0 and ", 2 to autograde" in first.stdout, first.stdout[-2000:] + first.stderr[-2000:]
    assert {("ok-1", ASSIGNMENT), ("ok-2", ASSIGNMENT)} <= set(reruns.changed.rows)
    assert not list(graded.out.rglob(".*.part")), "a file left half-written"


def test_every_run_is_kept_and_the_report_shows_what_changed_since_the_last(graded, reruns):
    """#52 item 5: a regrade replaced the earlier score without a trace. Every run's rows are kept
    in the gradebook's history (read here with sqlite3), the CSVs hold the latest, and the report
    shows each change since the run before: ok-1's answer changed (full marks, then less), ok-2
    is new (with a copy of ok-1's unknown folder, not graded); the re-run on the same input
    changed nothing."""
    runs = reruns.changed.runs
    assert len(runs) == 3, sorted(runs)  # the refused double start recorded nothing
    stored = [runs[key] for key in sorted(runs)]
    assert stored == [as_stored(graded.rows), as_stored(reruns.same.rows), as_stored(reruns.changed.rows)]
    ok1, ok2 = ("ok-1", ASSIGNMENT), ("ok-2", ASSIGNMENT)
    before, after = float(graded.rows[ok1]["score"]), float(reruns.changed.rows[ok1]["score"])
    maximum = graded.rows[ok1]["max_score"]
    assert before == float(maximum) > after, (before, after)
    assert reruns.same.written.report["history"]["scores"] == []
    assert "No score changed." in reruns.same.written.page
    changes = {(c["student"], c["assignment"]): c for c in reruns.changed.written.report["history"]["scores"]}
    unknown = ("ok-2", "no_such_assignment")
    assert set(changes) == {ok1, ok2, unknown}, sorted(changes)
    assert changes[unknown]["before"] is None and changes[unknown]["after"]["score"] is None
    assert (changes[ok1]["before"]["score"], changes[ok1]["after"]["score"]) == (before, after)
    new = float(reruns.changed.rows[ok2]["score"])
    assert changes[ok2]["before"] is None and changes[ok2]["after"]["score"] == new
    page = " ".join(reruns.changed.written.page.split())
    assert "Since the last run (3)" in page
    assert "ok-2 no_such_assignment not in that run not graded" in page
    assert f"ok-1 {ASSIGNMENT} {before:g} / {maximum} {after:g} / {maximum}" in page, page[:3000]
    assert f"ok-2 {ASSIGNMENT} not in that run {new:g} / {maximum}" in page


def test_a_rerun_on_the_same_input_reuses_every_result(graded, reruns):
    done = reruns.same.done
    assert done.returncode == 0 and ", 0 to autograde" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    count = len(submission_rows(graded.rows))
    reused = f"  {count} unchanged since the last run (results kept), 0 unreadable (0 with the reason), "
    assert reused in done.stdout, done.stdout[:2000]
    assert reruns.same.rows == graded.rows
    assert reruns.same.autograded == reruns.autograded_before, "a re-run executed a notebook again"


def test_a_new_or_changed_submission_is_the_only_one_graded_again_and_replaces_its_row(graded, reruns):
    done, rows, gradebook = reruns.changed.done, reruns.changed.rows, reruns.changed.gradebook
    assert done.returncode == 0 and ", 2 to autograde" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    graded_now = set(re.findall(rf"^  \[ *\d+/2\] ([^/\s]+)/{ASSIGNMENT}: ", done.stdout, re.MULTILINE))
    assert graded_now == {"ok-1", "ok-2"}, done.stdout
    ok1 = (("ok-1", ASSIGNMENT), ("ok-2", ASSIGNMENT))
    assert {k: v for k, v in rows.items() if k[0] != "ok-2" and k != ok1[0]} == {
        k: v for k, v in graded.rows.items() if k != ok1[0]
    }
    assert {**rows[ok1[1]], "student_id": "ok-1"} == graded.rows[ok1[0]], "ok-2 handed in ok-1's first notebook"
    assert {k for k in rows if k[0] == "ok-2"} == {ok1[1], ("ok-2", "no_such_assignment")}  # a copy of ok-1's folder
    assert float(rows[ok1[0]]["score"]) < float(rows[ok1[0]]["max_score"]), "ok-1's wrong answer kept full marks"
    [first] = graded.gradebook[ok1[0]]
    stored = gradebook[ok1[0]]
    assert len(stored) == 1, f"ok-1 has {len(stored)} submissions in the gradebook"
    assert stored[0] != first and sum(auto for auto, _ in stored[0].values()) == float(rows[ok1[0]]["score"])


@pytest.mark.parametrize(
    "layout, message",
    [
        ("missing", "no such folder"),
        ("empty", "nothing to grade"),
        ("unknown", "nothing to grade"),
        ("class", "did you mean {inner}?"),  # the class's folder, not its submitted/ inside
    ],
)
def test_unusable_input_is_one_line_and_nonzero(tmp_path, layout, message):
    submitted = tmp_path / "submitted"
    if layout != "missing":
        submitted.mkdir()
    if layout == "unknown":
        (submitted / "s1" / "not_an_assignment").mkdir(parents=True)
    if layout == "class":
        (tmp_path / "class" / "submitted" / "s1" / ASSIGNMENT).mkdir(parents=True)
        submitted = tmp_path / "class"
        message = message.format(inner=submitted / "submitted")
    done = grade(submitted, tmp_path / "out")
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def path_without(tool: str, folder: Path) -> str:
    """A PATH with every command of this one but `tool`: links to them in `folder`."""
    folder.mkdir()
    for place in os.environ["PATH"].split(os.pathsep):
        for command in sorted(Path(place).glob("*")) if Path(place).is_dir() else []:
            link = folder / command.name
            if command.name != tool and not link.exists() and os.access(command, os.X_OK):
                link.symlink_to(command)
    return str(folder)


def test_without_bubblewrap_grading_warns_and_flags_every_row(tmp_path):
    """`bwrap` missing from PATH: the class is still graded, with one warning line on stderr and
    the flag `unsandboxed` on every row, also the row of a file no kernel ever ran."""
    env = {**os.environ, "PATH": path_without("bwrap", tmp_path / "bin")}
    assert shutil.which("bwrap") and not shutil.which("bwrap", path=env["PATH"]), "the test needs bwrap to hide"
    submitted, out = tmp_path / "class", tmp_path / "out"
    reference = sample_classes.answered(ASSIGNMENT, answers.reference_answer(ASSIGNMENT))
    sample_classes.write(submitted, "alice", ASSIGNMENT, reference)
    sample_classes.write(submitted, "erin", ASSIGNMENT, raw=b"")
    done = grade_cli(submitted, out, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    warning = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(warning) == 1 and "every row is flagged 'unsandboxed'" in warning[0], done.stderr
    rows = read_csv(out)
    assert {key: row["flags"] for key, row in rows.items()} == {
        ("alice", ASSIGNMENT): "unsandboxed",
        ("erin", ASSIGNMENT): "unsandboxed",
    }
    assert rows[("alice", ASSIGNMENT)]["score"] == rows[("alice", ASSIGNMENT)]["max_score"], rows


LAG = 6  # seconds: more than nbclient's default 4


def test_outputs_that_lag_behind_the_reply_are_waited_for(tmp_path, monkeypatch):
    """On a loaded machine a kernel's outputs can arrive seconds after its reply; nbgrader turns
    nbclient's 4 s wait into an error that fails the whole notebook. The course waits as long as
    a cell may run."""
    poll = NotebookClient._async_poll_output_msg

    async def lagging(self, *args, **kwargs):
        await asyncio.sleep(LAG)
        return await poll(self, *args, **kwargs)

    monkeypatch.setattr(NotebookClient, "_async_poll_output_msg", lagging)
    nb = new_notebook(cells=[new_code_cell("print('已运行')")])
    config = course.nbgrader_config(tmp_path)
    Execute(config=config).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert nb.cells[0].outputs[0]["text"] == "已运行\n"


def test_a_lock_held_by_a_live_process_stops_the_report_command_and_dies_with_its_holder(tmp_path):
    """`grader report` on a folder a grading run is writing stops too (exit 75, the holder named);
    the kernel's lock goes with its process, even one killed outright: no stale lock to remove."""
    (tmp_path / "grades.csv").write_text("student_id,assignment,score,max_score,flags\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        refused = subprocess.run(
            [sys.executable, "-m", "grader", "report", str(tmp_path)],
            cwd=REPO, env=ENGLISH, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert refused.returncode == 75, refused.stderr
        assert refused.stderr.startswith(
            f"grader report: another run is writing {tmp_path} (grader grade, pid {holder.pid}"
        )
        with pytest.raises(lock.Busy):
            with lock.held(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    with lock.held(tmp_path, "report"):  # free again
        assert f"grader report, pid {os.getpid()} " in (tmp_path / lock.LOCK).read_text(encoding="utf-8")


HOLD_THE_LOCK = """
import sys, time
from grader.pipeline import lock
with lock.held(sys.argv[1]):
    print("held", flush=True)
    time.sleep(600)
"""


def test_grade_holds_the_output_folder_before_it_writes_anything(tmp_path, monkeypatch):
    """The lock is taken before the first write: the course folder is staged under it."""
    from grader import grade as command

    submitted = tmp_path / "class"
    sample_classes.write(submitted, "alice", ASSIGNMENT, raw=b"")
    seen = []

    def staged(root, url):
        with pytest.raises(lock.Busy):  # another holder now: this process already holds it
            with lock.held(root.parent):
                pass
        seen.append(sorted(p.name for p in root.parent.iterdir()))
        raise RuntimeError("stop here")

    monkeypatch.setattr(staging, "prepare_course", staged)
    with pytest.raises(RuntimeError, match="stop here"):
        command.grade(submitted, tmp_path / "out", jobs=1, echo=lambda *a: None)
    assert seen == [[lock.LOCK]], seen


def test_an_output_file_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    """#52 item 6, nothing half-written: grades.csv, the other CSVs, the report and the feedback
    pages are written beside their place and renamed over it; a write that fails leaves the old file."""
    target = tmp_path / "grades.csv"
    target.write_text("the old grades\n", encoding="utf-8")

    def no_rename(*args):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError):
        report.write_whole(target, "new grades\n" * 1000)
    assert target.read_text(encoding="utf-8") == "the old grades\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"]
    monkeypatch.undo()
    report.write_whole(target, "new grades\n")
    assert target.read_text(encoding="utf-8") == "new grades\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"]


def test_a_rebuilt_course_folder_keeps_the_history_of_earlier_runs(tmp_path):
    """When nbgrader refuses to update an assignment, the course folder starts afresh: nbgrader's
    tables go, the grader's history of earlier runs stays (it never vanishes silently)."""
    import sqlite3

    root = tmp_path / "course"
    root.mkdir()
    url = course.sqlite_url(root)
    with course.gradebook(root) as gb:
        gb.add_student("alice")
    run = store.record_run(root, {("alice", ASSIGNMENT): store.Outcome("alice", ASSIGNMENT, 3.0, 10.0)})
    (root / "autograded").mkdir()
    staging.start_afresh(root, url)
    assert sorted(p.name for p in root.iterdir()) == ["gradebook.db"]
    with contextlib.closing(sqlite3.connect(root / "gradebook.db")) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "student" not in tables and {"alembic_version", "ch4_runs", "ch4_scores"} <= tables, tables
    with course.gradebook(root) as gb:
        assert gb.students == []  # nbgrader's tables made again, empty
    assert history.changes(url, [])["run"] and history_rows(tmp_path)[run] == {("alice", ASSIGNMENT): (3.0, 10.0)}
