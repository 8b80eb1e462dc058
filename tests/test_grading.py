"""The grading command on a class of broken submissions next to correct ones.

One real run of `python -m grader grade` (module fixture `graded`, read into memory at once),
then one test per submission: the score it must get and the reason its feedback and the score
table must give. The re-runs on the same output folder happen in their own fixture (`reruns`)
afterwards; nothing reads the first run from disk, so the tests hold in any order.
"""

import asyncio
import html
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from helpers import checksums, grade_cli, gradebook_rows, read_csv, score_table_line
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.preprocessors import Execute

from grader import REPO, course, messages
from grader.judging import verdict
from proof import answers, sample_classes

ASSIGNMENT = "residuals"  # quick to grade; the broken cases do not depend on the assignment
CELL_TIMEOUT, CEILING = 20, 60  # small limits keep the loop and slow cases short
pytestmark = pytest.mark.xdist_group("grading")  # one worker owns the run below

# A wrong answer beside the broken ones: sin2_recompute's backward rule gives 0 beyond |x| = 5,
# which no visible input reaches (they stay within 3) but test_hidden_random's inputs (96 or 160 of
# them, uniform on ±6) always do; the other hidden tests stay within 4. This hint of that hidden
# test must reach its feedback.
HIDDEN_FAILS = "hidden-fails"
RECOMPUTED = "return (g * jnp.sin(2.0 * x),)"
HIDDEN_ANSWER = answers.reference_answer(ASSIGNMENT).replace(
    RECOMPUTED, "return (jnp.where(jnp.abs(x) < 5.0, g * jnp.sin(2.0 * x), 0.0),)"
)
HIDDEN_TEST, HIDDEN_POINTS, HIDDEN_HINT = "test_hidden_random", 2, "应等于 sin 2x。"


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


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The broken class graded once; what the run printed and wrote, read at once."""
    submitted = tmp_path_factory.mktemp("submitted")
    sample_classes.broken_class(submitted, ASSIGNMENT)
    sample_classes.write(submitted, HIDDEN_FAILS, ASSIGNMENT, sample_classes.answered(ASSIGNMENT, HIDDEN_ANSWER))
    sample_classes.write(submitted, MOVED, ASSIGNMENT, moved_tests())
    (submitted / "ok-1" / "no_such_assignment").mkdir()
    (submitted / "ok-1" / "no_such_assignment" / "x.ipynb").write_text("{}")
    protected = {"submitted": submitted, "solutions": course.SOLUTIONS, "exercises": course.EXERCISES}
    before = {name: checksums(folder) for name, folder in protected.items()}
    out = tmp_path_factory.mktemp("out")
    scratch = tmp_path_factory.mktemp("tmpdir")  # the run's TMPDIR: its workers' scratch courses go here
    # in English, on an 80-column terminal (what rich reads from COLUMNS)
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    done = grade(submitted, out, env=env | {"TMPDIR": str(scratch), "LANG": "en_US.UTF-8", "COLUMNS": "80"})
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
    )


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
    unreadable = len(graded.rows) - sent
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
    assert set(graded.rows) == {(c.student, c.assignment) for c in CASES} | extra


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
    (a wrong answer now) and a new student ok-2 handing in ok-1's first notebook."""
    out = graded.out
    autograded = checksums(out / "course" / "autograded")
    again = grade(graded.submitted, out)
    same = SimpleNamespace(done=again, rows=read_csv(out), autograded=checksums(out / "course" / "autograded"))
    changed = tmp_path_factory.mktemp("changed") / "submitted"
    shutil.copytree(graded.submitted, changed, symlinks=True)  # links stay links, never followed
    shutil.copytree(changed / "ok-1", changed / "ok-2")
    wrong = next(e for e in answers.entries(ASSIGNMENT) if e.slug == "recompute_saves_sin2x")
    sample_classes.write(changed, "ok-1", ASSIGNMENT, sample_classes.answered(ASSIGNMENT, wrong.answer))
    third = grade(changed, out)
    new = SimpleNamespace(done=third, rows=read_csv(out), gradebook=gradebook_rows(course.sqlite_url(out / "course")))
    return SimpleNamespace(autograded_before=autograded, same=same, changed=new)


def test_a_rerun_on_the_same_input_reuses_every_result(graded, reruns):
    done = reruns.same.done
    assert done.returncode == 0 and ", 0 to autograde" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    reused = f"  {len(graded.rows)} unchanged since the last run (results kept), 0 unreadable (0 with the reason), "
    assert reused in done.stdout, done.stdout[:2000]
    assert reruns.same.rows == graded.rows
    assert reruns.same.autograded == reruns.autograded_before, "a re-run executed a notebook again"


def test_a_new_or_changed_submission_is_the_only_one_graded_again_and_replaces_its_row(graded, reruns):
    done, rows, gradebook = reruns.changed.done, reruns.changed.rows, reruns.changed.gradebook
    assert done.returncode == 0 and ", 2 to autograde" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    graded_now = set(re.findall(rf"^  \[ *\d+/2\] ([^/\s]+)/{ASSIGNMENT}: ", done.stdout, re.MULTILINE))
    assert graded_now == {"ok-1", "ok-2"}, done.stdout
    ok1 = (("ok-1", ASSIGNMENT), ("ok-2", ASSIGNMENT))
    assert {k: v for k, v in rows.items() if k not in ok1} == {k: v for k, v in graded.rows.items() if k != ok1[0]}
    assert {**rows[ok1[1]], "student_id": "ok-1"} == graded.rows[ok1[0]], "ok-2 handed in ok-1's first notebook"
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
    ],
)
def test_unusable_input_is_one_line_and_nonzero(tmp_path, layout, message):
    submitted = tmp_path / "submitted"
    if layout != "missing":
        submitted.mkdir()
    if layout == "unknown":
        (submitted / "s1" / "not_an_assignment").mkdir(parents=True)
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
