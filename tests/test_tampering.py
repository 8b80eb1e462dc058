"""Hostile submissions earn nothing and reach nothing (grader/README.md, "Threat model").

Every attack in grader/attacks rides on a known wrong answer; its `# layers:` line says which
defence must stop it: `rules` (the early scan reports it: not run), `guard` (it passes the scan
and runs confined by kit/ch4guard.py), `verdict` (even run as written, without scan or guard,
the verdicts, the feedback and the sandbox leave it nothing). Two real grading runs prove it:

* the whole grader (scan and guard on): every attack marked `rules` is flagged `rules`, scores 0
  and is told why; every other attack (forged `collect`, every test-cell name redefined, a frame
  walk to the builtins or to the hidden tests' source, a look-alike custom_vjp, printed hidden
  inputs, HTML in outputs, a huge expression) runs confined and scores no more than its wrong
  answer alone;
* the second wall alone: with the scan and the guard switched off, every attack marked
  `verdict` runs as written in its sandboxed kernel and still scores no more than its wrong
  answer alone; none of them reads or changes solutions/, exercises/, the gradebook, other
  students' results or the submissions.
"""

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import ch4rules
import nbformat
import pytest
from helpers import gradebook_rows, read_csv, settle

from grader import REPO, answers, course, grade, hostile, intake, messages, sandbox, verdict

# The second-wall run grades on the servers tests/test_scale_out.py uses too (tests/conftest.py):
# one pytest worker owns them. The run with scan and guard is local, and another worker's.
on_the_cluster = pytest.mark.xdist_group("cluster")
scanned = pytest.mark.xdist_group("tampering")
RUNS = [pytest.param("scanned_run", marks=scanned), pytest.param("verdict_run", marks=on_the_cluster)]
ATTACKS = hostile.attacks()
VERDICT_LAYER = [a for a in ATTACKS if "verdict" in a.layers]
RULE_BREAKERS = [a for a in ATTACKS if "rules" in a.layers]
RULE_KEEPERS = [a for a in ATTACKS if "rules" not in a.layers]  # each one marked `guard`
# What an attack prints when it got somewhere: found a file, wrote outside its /tmp, connected,
# killed a process, filled a disk or started its 3000 processes.
FORBIDDEN_OUTPUT = re.compile(r"^(FOUND|WROTE|CONNECTED|KILLED|FILLED|STARTED)\b(.*)$", re.MULTILINE)
# The second-wall run's --cell-timeout. settrace_skip_asserts, run as written, traces every line
# JAX runs, so its test cells run until they are interrupted: two of them cost 120 s of CPU at
# the default 60 s. No other cell of the run takes more than a few seconds.
VERDICT_CELL_TIMEOUT = 20


tree_digest = intake.folder_digest


def results_of(out: Path, students) -> dict:
    """Everything a student's grading produced: feedback, autograded notebook, gradebook rows."""
    files = {}
    for student, assignment in students:
        for kind in ("feedback", "course/autograded", "course/feedback", "course/worker-feedback"):
            folder = out / kind / student / assignment
            files[(student, kind)] = tree_digest(folder)
    rows = gradebook_rows(course.db_url(out / "course"))
    return {"files": files, "gradebook": {key: rows.get(key) for key in students}}


def planted_files() -> list[Path]:
    """Marker files the write attack tried to leave: anywhere on this machine it might reach."""
    found = set(REPO.rglob("PWNED-by-attack"))
    for place in (Path("/tmp"), Path.home(), REPO.parent):
        found.update(place.glob("PWNED-by-attack"), place.glob("*/PWNED-by-attack"))
    return sorted(found)


def beside_its_base(outcomes: dict, attack) -> tuple:
    """(the attack's outcome, its wrong answer's alone), once the reference beside them is full."""
    reference = outcomes[(f"ref-{attack.assignment}", attack.assignment)]
    assert reference.score == reference.max_score, "the reference must keep full marks beside the attacks"
    return outcomes[(f"attack-{attack.slug}", attack.assignment)], outcomes[(f"base-{attack.base}", attack.assignment)]


def test_the_sandbox_is_available():
    why = sandbox.probe()
    assert why is None, f"make setup installs bubblewrap; grading here would be unsandboxed: {why}"


def test_sandbox_keeps_a_folder_under_tmp_visible(tmp_path):
    """/tmp is a fresh tmpfs inside the sandbox; the kernel's folder, the venv or a checkout under
    /tmp (a CI clone) must still be there, not hidden beneath it."""
    assert str(tmp_path).startswith("/tmp/"), f"this check needs a folder under /tmp, got {tmp_path}"
    tmp_path.chmod(0o755)  # the kernel runs as user nobody
    marker = tmp_path / "marker.txt"
    marker.write_text("visible")
    marker.chmod(0o644)
    probe = [sys.executable, "-c", f"print(open({str(marker)!r}).read())"]
    done = subprocess.run(sandbox.command(tmp_path, {}) + probe, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "visible", f"the folder under /tmp is hidden in the sandbox: {done.stderr[-500:]}"


@pytest.fixture(scope="module")
def verdict_run(tmp_path_factory, postgres_server, grading_cluster):
    """Grade the honest students, snapshot, add the attacks, grade again into the same folder.

    Both runs go the distributed way (a Dask scheduler, `python -m grader worker`, a PostgreSQL
    gradebook): the attacks meet the workers and the shared database there."""
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    honest = hostile.honest_class(submitted, VERDICT_LAYER)
    settle(grading_cluster)
    cluster = {"scheduler": grading_cluster.address, "tls": grading_cluster.tls}
    cluster["db"] = postgres_server.database("tampering")

    def run():
        printed = []
        try:
            limits = {"scan_code": False, "cell_timeout": VERDICT_CELL_TIMEOUT}
            return grade.grade(submitted, out, jobs=2, echo=printed.append, **limits, **cluster)
        except grade.Incomplete:
            pytest.fail("\n".join(line for line in printed if "not graded" in line))

    run()
    protected = {"solutions": tree_digest(course.SOLUTIONS), "exercises": tree_digest(course.EXERCISES)}
    before = results_of(out, honest)
    hostile.attack_class(submitted, "verdict")
    submissions = tree_digest(submitted)
    outcomes = run()
    settle(grading_cluster)  # an attack may have taken a worker down with it
    return {
        "out": out,
        "outcomes": {(o.student, o.assignment): o for o in outcomes},
        "before": before,
        "after": results_of(out, honest),
        "protected_before": protected,
        "protected_after": {"solutions": tree_digest(course.SOLUTIONS), "exercises": tree_digest(course.EXERCISES)},
        "submissions": (submissions, tree_digest(submitted)),
    }


@on_the_cluster
@pytest.mark.parametrize("attack", VERDICT_LAYER, ids=[f"{a.slug}: {a.claim}" for a in VERDICT_LAYER])
def test_attack_gains_nothing_even_unscanned(verdict_run, attack):
    got, alone = beside_its_base(verdict_run["outcomes"], attack)
    assert alone.score < alone.max_score, f"{attack.base} is supposed to be wrong"
    assert got.score <= alone.score, (
        f"{attack.claim}: {got.score}/{got.max_score}, more than {attack.base} alone ({alone.score}): {got.notes}"
    )


@on_the_cluster
@pytest.mark.parametrize("attack", VERDICT_LAYER, ids=[a.slug for a in VERDICT_LAYER])
def test_attack_reaches_nothing(verdict_run, attack):
    autograded = verdict_run["out"] / "course" / "autograded"
    path = course.notebook_path(autograded / f"attack-{attack.slug}", attack.assignment)
    outcome = verdict_run["outcomes"][(f"attack-{attack.slug}", attack.assignment)]
    if not outcome.graded:  # its kernel died (e.g. it killed what it could): then it must say so, at 0
        assert outcome.score == 0 and outcome.notes, (
            f"{attack.claim}: no autograded notebook, yet {outcome.score} points and notes {outcome.notes}"
        )
        return
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream"]
    text = "\n".join(o.get("text", "") for o in outputs)
    # Inside the sandbox the only writable places are its private /tmp and folder, gone afterwards.
    leaks = [m.group(0) for m in FORBIDDEN_OUTPUT.finditer(text) if not m.group(0).startswith("WROTE /tmp")]
    assert not leaks, f"{attack.claim}: the kernel reached {leaks[:5]}"


@on_the_cluster
def test_forged_evidence_is_named_even_unscanned(verdict_run):
    forger = verdict_run["outcomes"][("attack-fake_pass_output", "softplus")]
    assert forger.score == 0 and "tampering" in forger.flags, (forger.score, forger.flags)
    assert any("检测到篡改评分的迹象" in note and "评分证据" in note for note in forger.notes), forger.notes


@on_the_cluster
def test_attacks_change_nothing_outside(verdict_run):
    assert verdict_run["protected_after"] == verdict_run["protected_before"], "solutions/ or exercises/ changed"
    assert verdict_run["after"] == verdict_run["before"], "other students' results or gradebook rows changed"
    before, after = verdict_run["submissions"]
    assert after == before, "grading changed the submitted folder"
    assert not planted_files(), f"an attack left files behind: {planted_files()}"


@pytest.fixture(scope="module")
def scanned_run(tmp_path_factory):
    """The real configuration, scan and guard on: the attacks that break a rule reach no kernel,
    the others run confined beside the reference and their wrong answers alone."""
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    hostile.attack_class(submitted, "rules")
    hostile.attack_class(submitted, "guard")
    hostile.honest_class(submitted, RULE_KEEPERS)
    outcomes = grade.grade(submitted, out, jobs=2, echo=lambda *args: None)
    return {"out": out, "outcomes": {(o.student, o.assignment): o for o in outcomes}}


@scanned
@pytest.mark.parametrize("attack", RULE_BREAKERS, ids=[a.slug for a in RULE_BREAKERS])
def test_rule_breaking_attack_is_flagged_and_scores_zero(scanned_run, attack):
    key = (f"attack-{attack.slug}", attack.assignment)
    row = read_csv(scanned_run["out"])[key]
    assert float(row["score"]) == 0, f"{attack.claim}: scored {row['score']}"
    assert row["flags"].split() == ["rules"], row
    page = (scanned_run["out"] / "feedback" / key[0] / key[1] / f"{key[1]}.html").read_text(encoding="utf-8")
    assert "作答区没有遵守作答规则" in page and "记 0 分" in page and "第 " in page


def test_each_test_of_a_run_is_in_that_runs_group(request):
    """A test that reads a run but sits in another pytest-xdist group would grade the class a
    second time on another worker (minutes), and silently."""
    groups = {"scanned_run": {"tampering"}, "verdict_run": {"cluster"}}
    for item in request.session.items:
        if item.module is request.module:
            runs = [run for run in groups if run in item.fixturenames]
            marked = {mark.args[0] for mark in item.iter_markers("xdist_group")}
            assert not runs or marked == groups[runs[0]], f"{item.name} reads {runs} but is in the group {marked}"


def test_every_rule_keeping_attack_is_marked_guard():
    assert all("guard" in a.layers for a in RULE_KEEPERS), [a.slug for a in RULE_KEEPERS if "guard" not in a.layers]


@scanned
@pytest.mark.parametrize("attack", RULE_KEEPERS, ids=[f"{a.slug}: {a.claim}" for a in RULE_KEEPERS])
def test_rule_keeping_attack_gains_nothing(scanned_run, attack):
    """The scan lets it run: the guard and the test cells' own namespace leave it nothing to bend."""
    assert ch4rules.problems(attack.answer, preamble=setup(attack.assignment)) == [], (
        f"{attack.claim}: the scan refuses it, so it is a rule breaker"
    )
    got, alone = beside_its_base(scanned_run["outcomes"], attack)
    assert got.score <= alone.score < alone.max_score, (attack.claim, got.score, alone.score, got.notes)
    if attack.slug.startswith(("shadow_", "reflect_")):  # they change nothing at all in the tests
        assert got.score == alone.score, (got.score, alone.score, got.notes)


REFLECTIVE = [a for a in ATTACKS if a.slug.startswith("reflect_")]


@scanned
@pytest.mark.parametrize("attack", REFLECTIVE, ids=[a.slug for a in REFLECTIVE])
def test_reflective_attack_reaches_nothing(scanned_run, attack):
    """Every attribute name of the language's internal objects, read from the answer's own
    function, lambda, generator or exception, then three steps towards the builtins: the kit's
    evidence helper is never replaced, and the refusals are named in the feedback."""
    got, alone = _outcome(scanned_run, attack.slug)
    graded = scanned_run["out"] / "course" / "autograded" / f"attack-{attack.slug}"
    cells = nbformat.read(course.notebook_path(graded, "softplus"), as_version=4).cells
    printed = json.dumps([cell.get("outputs", []) for cell in cells], ensure_ascii=False)
    assert "attributes read" in printed and "REPLACED" not in printed
    assert any("访问被拒绝" in note for note in got.notes), got.notes


def _outcome(run, slug):
    return beside_its_base(run["outcomes"], next(a for a in ATTACKS if a.slug == slug))


@scanned
def test_the_frame_walk_forger_scores_what_its_base_scores_and_is_named(scanned_run):
    got, alone = _outcome(scanned_run, "frame_walk_forger")
    assert got.score == alone.score, (got.score, alone.score, got.notes)
    assert any("访问被拒绝" in note and "gi_frame" in note for note in got.notes), got.notes
    page = scanned_run["out"] / "feedback" / got.student / got.assignment / f"{got.assignment}.html"
    text = html.unescape(page.read_text(encoding="utf-8"))
    assert "访问被拒绝" in text and "gi_frame" in text, "the refusals are not listed in the feedback"


@pytest.mark.parametrize("run", RUNS)
def test_a_custom_vjp_look_alike_scores_what_plain_autodiff_scores(run, request):
    got, alone = _outcome(request.getfixturevalue(run), "custom_vjp_subclass")
    assert got.score == alone.score == alone.max_score - 1, (got.score, alone.score, got.notes)


@pytest.mark.parametrize("run", RUNS)
def test_no_hidden_test_source_reaches_the_feedback(run, request):
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, "softplus"), as_version=4)
    hidden_lines = {
        line.strip()
        for cell in source.cells
        if "### BEGIN HIDDEN TESTS" in cell.source
        for line in cell.source.splitlines()
        if "seed_for(" in line
    }
    assert hidden_lines, "the check needs lines that only hidden tests have"
    feedback = request.getfixturevalue(run)["out"] / "feedback"
    page = feedback / "attack-walk_to_hidden_source" / "softplus" / "softplus.html"
    text = html.unescape(page.read_text(encoding="utf-8"))
    assert not [line for line in hidden_lines if line in text], "a hidden test's source is in the feedback"


@pytest.mark.parametrize("run", RUNS)
def test_what_the_answer_prints_during_hidden_tests_is_not_in_the_feedback(run, request):
    """The instructor's autograded notebook keeps what the answer printed; the student's page
    keeps only what it printed while visible tests ran."""
    out = request.getfixturevalue(run)["out"]
    graded = out / "course" / "autograded" / "attack-print_hidden_inputs"
    nb = nbformat.read(course.notebook_path(graded, "softplus"), as_version=4)
    hidden = verdict.hidden_tests("softplus")
    leaks = {"hidden": 0, "elsewhere": 0}
    for cell in nb.cells:
        where = "hidden" if cell.metadata.get("nbgrader", {}).get("grade_id") in hidden else "elsewhere"
        leaks[where] += json.dumps(cell.get("outputs", []), ensure_ascii=False).count("LEAK ")  # printed, not source
    assert leaks["hidden"] > 0 and leaks["elsewhere"] > 0, f"the attack must print in both kinds of test: {leaks}"
    page = (out / "feedback" / "attack-print_hidden_inputs" / "softplus" / "softplus.html").read_text(encoding="utf-8")
    assert page.count("LEAK ") == leaks["elsewhere"], "what the answer printed during a hidden test is in the page"
    assert messages.HIDDEN_OUTPUT_DROPPED in page


@scanned
def test_every_student_has_a_row(scanned_run):
    rows = read_csv(scanned_run["out"])
    assert set(rows) == set(scanned_run["outcomes"]), "grades.csv must list every submission"


@scanned
def test_csv_keeps_its_first_four_columns(scanned_run):
    header = (scanned_run["out"] / "grades.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "student_id,assignment,score,max_score,flags"


def setup(assignment: str) -> str:
    return intake.setup_source(nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4))


def test_scan_accepts_every_honest_answer():
    honest = [(a, f"reference {a}", answers.reference_answer(a)) for a in course.ASSIGNMENTS]
    honest += [(e.assignment, f"{e.assignment}/{e.path.name}", e.answer) for e in answers.entries()]
    found = {name: ch4rules.problems(text, preamble=setup(a)) for a, name, text in honest}
    flagged = {name: problems for name, problems in found.items() if problems}
    assert not flagged, f"honest answers said to break the rules: {flagged}"


def test_every_attack_class_is_covered():
    """The classes the threat model names, each with at least one attack."""
    named = {
        "comparisons": "patch_allclose",
        "np.testing": "patch_testing",
        "builtins": "replace_isinstance",
        "check_grads": "replace_check_grads",
        "set_custom_exc": "custom_exc",
        "input transformers": "input_transformer",
        "partial credit": "numeric_last_expression",
        "settrace": "settrace_skip_asserts",
        "__eq__": "always_equal",
        "fake output and evidence": "fake_pass_output",
        "patching jax": "patch_jax_vjp",
        "reading files": "read_secrets",
        "writing files and the gradebook": "write_everywhere",
        "network and processes": "network_and_processes",
        "redefining test-cell names": "forge_collect",
        "import re-exports": "import_reexport",
        "deep expressions": "deep_expression",
        "host disk": "fill_disk",
        "process flood": "process_flood",
        "outputs of every MIME type": "huge_outputs",
        "HTML and script in outputs": "html_in_outputs",
        "frames to the builtins": "frame_walk_forger",
        "frames to the hidden tests": "walk_to_hidden_source",
        "a custom_vjp look-alike": "custom_vjp_subclass",
        "printing hidden inputs": "print_hidden_inputs",
        "the setup cell's names": "setup_names",
    }
    assert {f"reflect_{origin}" for origin in hostile.REFLECTIVE_ORIGINS} <= {a.slug for a in ATTACKS}
    slugs = {a.slug for a in ATTACKS}
    assert not [c for c, slug in named.items() if slug not in slugs]
    assert {f"shadow_{a}" for a in course.ASSIGNMENTS} <= slugs, "one shadowing attack per assignment"


@pytest.mark.parametrize(
    "code",
    [
        "%config IPCompleter.greedy=True",
        "!ls /",
        "x = __import__('os')",
        "d = np.__dict__",
        "jax.interpreters.ad.primitive_jvps.update({})",
        "np.testing.assert_allclose.__code__ = None",
        "jax.config.update('jax_enable_x64', True)",
        "np.load('x.npy')",
        "jax.profiler.start_server(9999)",
        "import importlib",
        "from os import path",
        "np.linalg.norm = None",
    ],
)
def test_rules_name_each_kind_of_reach(code):
    assert ch4rules.problems(code, preamble="import jax\nimport numpy as np\n"), code
