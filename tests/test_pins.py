"""requirements.txt is the exact pins compiled from requirements.in (`make pins`): every direct
dependency is pinned there, each pin satisfies what requirements.in asks, and nothing is loose.
The student's pins (requirements-student.txt, the edition's requirements.txt) are the same
versions, fewer of them."""

import re

from helpers import student_pins
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name as canonical

from grader import REPO


def requirements(name: str) -> list[Requirement]:
    lines = (REPO / name).read_text(encoding="utf-8").splitlines()
    lines = [line.split("#")[0].strip() for line in lines]
    return [Requirement(line) for line in lines if line and not line.startswith("-c ")]


PINS = {canonical(r.name): r for r in requirements("requirements.txt")}


def test_every_pin_is_exact():
    loose = [str(r) for r in PINS.values() if len(r.specifier) != 1 or next(iter(r.specifier)).operator != "=="]
    assert not loose, f"requirements.txt must pin exactly (run `make pins`): {loose}"


def test_every_direct_dependency_is_pinned_within_what_it_asks():
    for wanted in requirements("requirements.in"):
        pin = PINS.get(canonical(wanted.name))
        assert pin is not None, f"{wanted.name} is in requirements.in but not pinned: run `make pins`"
        version = next(iter(pin.specifier)).version
        assert wanted.specifier.contains(version, prereleases=True), (
            f"{pin} does not satisfy requirements.in's {wanted}: run `make pins`"
        )


def test_the_students_pins_are_the_instructors_versions_and_fewer():
    student = {canonical(r.name): r for r in requirements("requirements-student.txt")}
    assert student.keys() < PINS.keys(), f"not in requirements.txt: {sorted(student.keys() - PINS.keys())}"
    differ = [f"{student[name]} vs {PINS[name]}" for name in student if student[name].specifier != PINS[name].specifier]
    assert not differ, f"run `make pins`: {differ}"
    for wanted in requirements("requirements-student.in"):
        assert canonical(wanted.name) in student, f"{wanted.name} is in requirements-student.in but not pinned"
    for tool in ("playwright", "pytest", "ruff", "distributed", "jupyterhub", "psycopg"):
        assert tool not in student, f"a student does not need {tool}"


def test_the_pins_say_how_they_are_made():
    assert "make pins" in (REPO / "requirements.txt").read_text(encoding="utf-8")


def test_the_slow_optional_format_checker_is_not_installed_and_nothing_misses_it():
    """tools/install_pins.sh removes rfc3987-syntax (2.5 core-s on every import of nbformat): the
    environment has it not, `pip check` is clean, and jsonschema simply has no `iri` checks."""
    import importlib.util
    import subprocess
    import sys

    import jsonschema

    assert importlib.util.find_spec("rfc3987_syntax") is None, "run `make setup` (tools/install_pins.sh)"
    assert importlib.util.find_spec("lark") is None
    check = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    formats = set(jsonschema.FormatChecker.checkers)
    assert {"uri", "uri-reference", "date-time"} <= formats
    assert not formats & {"iri", "iri-reference"}


def test_what_the_student_edition_leaves_out_is_reasoned_and_never_installed():
    """requirements-student.in leaves out a few packages others declare (each with its reason);
    they are not in requirements-student.txt, and tools/install_pins.sh installs with --no-deps,
    so pip does not fetch them back. (That nothing a student runs needs them:
    tests/test_student_edition.py, in an environment of the student's pins alone.)"""
    import subprocess

    pins = student_pins()
    left_out = pins.left_out((REPO / "requirements-student.in").read_text())
    assert left_out and all(len(why) >= 20 for why in left_out.values()), left_out
    student = {canonical(r.name) for r in requirements("requirements-student.txt")}
    assert not student & left_out.keys(), f"left out but pinned for students: {sorted(student & left_out.keys())}"
    assert left_out.keys() <= PINS.keys(), "only a package the instructor's pins hold can be left out"
    install = (REPO / "tools" / "install_pins.sh").read_text()
    assert re.search(r"pip install [^\n]*--no-deps -r requirements\.txt", install), "pip would fetch them again"
    # tools/student_pins.py, which `make pins` runs after compiling: it drops exactly those lines
    compiled = (REPO / "requirements-student.txt").read_text() + "".join(f"{n}==1.0  # via x\n" for n in left_out)
    kept, dropped = pins.without(compiled, set(left_out))
    assert dropped == set(left_out) and kept == (REPO / "requirements-student.txt").read_text()
    assert (
        subprocess.run(["make", "--no-print-directory", "-n", "pins"], cwd=REPO, capture_output=True, text=True)
        .stdout.rstrip()
        .endswith("tools/student_pins.py")
    ), "make pins does not drop them after compiling"
