"""exercises/ is exactly what nbgrader generates from solutions/, and leaks nothing secret."""

import re

import nbformat
import pytest

from grader import REPO, course
from grader.release import generate_release

SECRET_BLOCK = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)
# A single line this long is specific enough to be a leak on its own; shorter lines are often
# idioms a chapter notebook teaches too ("@partial(jax.custom_vjp, nondiff_argnums=(1,))"), so
# those count only as a pair of consecutive secret lines found together, and only a pair with
# enough text to be specific (not "]:" followed by "try:"). Pasting a solution repeats many.
MIN_SECRET_CHARS = 60
MIN_PAIR_CHARS = 40


def _sources(path):
    return [cell.source for cell in nbformat.read(path, as_version=4).cells]


def _code_lines(text):
    return [s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith("#")]


def secret_passages(assignment, kinds=("SOLUTION", "HIDDEN TESTS")):
    """Long lines and pairs of consecutive lines found only in solution or hidden-test blocks."""
    blocks, public = [], set()
    for source in _sources(course.notebook_path(course.SOLUTIONS, assignment)):
        blocks += [_code_lines(m.group(2)) for m in SECRET_BLOCK.finditer(source + "\n") if m.group(1) in kinds]
        public |= set(_code_lines(SECRET_BLOCK.sub("", source + "\n")))
    passages = set()
    for lines in blocks:
        passages |= {line for line in lines if len(line) >= MIN_SECRET_CHARS and line not in public}
        pairs = zip(lines, lines[1:], strict=False)
        passages |= {f"{a}\n{b}" for a, b in pairs if not {a, b} <= public and len(a + b) >= MIN_PAIR_CHARS}
    return passages


def test_every_assignment_has_a_source_and_a_release():
    for assignment in course.ASSIGNMENTS:
        assert course.notebook_path(course.SOLUTIONS, assignment).exists(), f"solutions/{assignment} is missing"
        assert course.notebook_path(course.EXERCISES, assignment).exists(), (
            f"exercises/{assignment} is missing: run `make release`"
        )


def test_release_is_in_sync_with_solutions(tmp_path):
    generate_release(release=tmp_path)
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(course.EXERCISES) for p in course.EXERCISES.rglob("*") if p.is_file())
    assert fresh == committed, "exercises/ has other files than a fresh release: run `make release`"
    stale = [str(p) for p in fresh if (tmp_path / p).read_bytes() != (course.EXERCISES / p).read_bytes()]
    assert not stale, f"exercises/ is stale (edited by hand or not regenerated): {stale}; run `make release`"


def leaks(assignment, published):
    secrets = secret_passages(assignment)
    assert secrets, f"{assignment}: found no solution or hidden-test lines to protect"
    found = []
    for path in published:
        text = "\n".join("\n".join(_code_lines(source)) for source in _sources(path))
        found += [f"{path.name}: {passage!r}" for passage in secrets if passage in text]
    return found


@pytest.mark.parametrize("assignment", course.available())
def test_no_solution_or_hidden_test_leaks(assignment):
    published = list(course.EXERCISES.rglob("*.ipynb")) + list((REPO / "notebooks").glob("*.ipynb"))
    found = leaks(assignment, published)
    assert not found, "secret lines published:\n" + "\n".join(found)


@pytest.mark.parametrize("assignment", course.available())
def test_leak_check_catches_a_pasted_solution(assignment, tmp_path):
    from grader import catalogue

    pasted = catalogue.with_answer(catalogue.release_notebook(assignment), catalogue.reference_answer(assignment))
    nbformat.write(pasted, tmp_path / "leaky.ipynb")
    assert leaks(assignment, [tmp_path / "leaky.ipynb"]), f"{assignment}: a pasted reference solution went unnoticed"
