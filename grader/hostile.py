"""Hostile submissions: the attack files (grader/attacks/<slug>.py, each added to a known wrong
answer), one shadowing attack per assignment built by parsing its test cells, and the classes
tests/test_tampering.py grades (each attack beside the reference and its base answer alone).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader import answers, course, verdict
from grader.sample_classes import answered, write


@dataclass(frozen=True)
class Attack:
    """A tampering attempt (grader/attacks/<slug>.py) added to a known wrong answer."""

    slug: str
    claim: str  # the docstring's first line
    assignment: str
    base: str  # the catalogue slug of the wrong answer it rides on, e.g. "wrong_naive_forward"
    # which defences must stop it: "rules" (the scan), "guard" (run confined), "verdict" (run as written)
    layers: tuple[str, ...]
    code: str

    @property
    def base_answer(self) -> str:
        return (course.CATALOGUE / self.assignment / f"{self.base}.py").read_text(encoding="utf-8")

    @property
    def answer(self) -> str:
        return self.base_answer + "\n\n" + self.code


def attacks() -> list[Attack]:
    """The attack files, one shadowing attack per assignment, one reflective attack per origin."""
    return (
        file_attacks()
        + [shadowing_attack(a) for a in course.ASSIGNMENTS]
        + [reflective_attack(origin) for origin in REFLECTIVE_ORIGINS]
    )


def file_attacks() -> list[Attack]:
    found = []
    for path in sorted((course.CATALOGUE.parent / "attacks").glob("*.py")):
        code = path.read_text(encoding="utf-8")
        header = dict(
            line[2:].split(": ", 1) for line in code.splitlines() if line.startswith(("# base: ", "# layers: "))
        )
        assignment, base = header["base"].split()
        claim = code.split('"""')[1].strip().splitlines()[0]
        found.append(Attack(path.stem, claim, assignment, base, tuple(header["layers"].split()), code))
    return found


def test_cell_names(assignment: str) -> set[str]:
    """Every name the assignment's test cells read, found by parsing them (hidden tests included)."""
    from ch4protocol import free_names, split_test_cell

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return set().union(*(free_names(split_test_cell(c.source)) for c in source.cells if verdict.is_test(c)))


def shadowing_attack(assignment: str) -> Attack:
    """A wrong answer followed by a redefinition of every name a test cell reads (helpers,
    builtins, modules), except the interface and what the answer itself uses: with tests that
    read the student's namespace, each redefinition would be a way to forge a result."""
    base = next(e for e in answers.entries(assignment) if e.kind == "wrong")
    uses = {n.id for n in ast.walk(ast.parse(base.answer)) if isinstance(n, ast.Name)}
    names = sorted(test_cell_names(assignment) - uses - set(interface(assignment)))
    code = "".join(f"\n\ndef {name}(*args, **kwargs):\n    return True\n" for name in names)
    claim = f"redefine all {len(names)} names the test cells read ({', '.join(names[:6])}, ...) as forgers"
    return Attack(f"shadow_{assignment}", claim, assignment, f"wrong_{base.slug}", ("guard", "verdict"), code)


# How an answer gets an object of its own to start from, and the objects one step away from it.
REFLECTIVE_ORIGINS = {
    "function": "def start():\n    return 1\n\norigin = start",
    "lambda": "origin = lambda: 1",
    "generator": "def start():\n    yield 1\n\norigin = start()",
    "exception": "try:\n    1 / 0\nexcept ZeroDivisionError as caught:\n    origin = caught",
}
# Attributes that lead from what an answer may hold towards the interpreter's builtins.
TOWARDS_BUILTINS = (
    "tb_frame", "gi_frame", "f_back", "f_globals", "f_builtins", "f_locals", "__globals__", "__builtins__",
    "cell_contents", "__traceback__", "__self__", "__func__",
)  # fmt: skip


def _reflective_names() -> list[str]:
    """Every attribute name of real frames, code, functions, generators, coroutines, async
    generators, tracebacks, cells and modules, as `dir()` gives them on this Python."""
    import types

    def generator():
        yield 1

    async def coroutine():
        return 1

    async def async_generator():
        yield 1

    def cell():
        value = 1
        return (lambda: value).__closure__[0]

    try:
        raise ValueError
    except ValueError as err:
        traceback = err.__traceback__
    running = coroutine()
    running.close()
    objects = [traceback.tb_frame, generator.__code__, generator, generator(), running, async_generator(),
               traceback, cell(), types]  # fmt: skip
    return sorted({name for obj in objects for name in dir(obj) if name.isidentifier()})


def reflective_attack(origin: str) -> Attack:
    """From an object of the answer's own (`origin`), read every attribute name the language has
    for its internal objects, then from whatever came back walk towards the builtins and replace
    the kit's evidence helper. Rides on softplus' naive answer; it must score what that scores."""
    code = (
        f"{REFLECTIVE_ORIGINS[origin]}\n\n"
        f"NAMES = {_reflective_names()!r}\n"
        f"TOWARDS = {list(TOWARDS_BUILTINS)!r}\n\n\n"
        "def forged(test_id, compute):\n"
        "    return {'error': None, 'is_custom_vjp': True}\n\n\n"
        "def use(value, depth=0):\n"
        "    try:\n"
        "        value['__import__']('ch4check').collect = forged\n"
        "        print('REPLACED the kit through', type(value).__name__)\n"
        "    except Exception:\n"
        "        pass\n"
        "    if depth < 3:\n"
        "        for step in TOWARDS:\n"
        "            try:\n"
        "                use(getattr(value, step), depth + 1)\n"
        "            except Exception:\n"
        "                pass\n\n\n"
        "reached = 0\n"
        "for name in NAMES:\n"
        "    try:\n"
        "        use(getattr(origin, name))\n"
        "        reached += 1\n"
        "    except Exception:\n"
        "        pass\n"
        "print(reached, 'of', len(NAMES), 'attributes read')\n"
    )
    claim = f"read every attribute name of the language's internal objects on a {origin} of its own, then walk on"
    return Attack(f"reflect_{origin}", claim, "softplus", "wrong_naive_forward", ("guard",), code)


def interface(assignment: str) -> list[str]:
    """The names `start_tests` takes from the student's namespace, read from the setup cell."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    setup = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    calls = [n for n in ast.walk(ast.parse(setup.source)) if isinstance(n, ast.Call)]
    call = next(n for n in calls if getattr(n.func, "id", None) == "start_tests")
    return list(ast.literal_eval(call.keywords[0].value))


def attack_class(dest: Path, layer: str) -> list[Attack]:
    """One student per attack that `layer` must defeat, named attack-<slug>."""
    chosen = [a for a in attacks() if layer in a.layers]
    for attack in chosen:
        write(dest, f"attack-{attack.slug}", attack.assignment, answered(attack.assignment, attack.answer))
    return chosen


def honest_class(dest: Path, chosen: list[Attack]) -> list[tuple[str, str]]:
    """The reference for each attacked assignment (students ref-<assignment>) and each attack's
    base answer on its own (students base-<slug>): what the attacks are measured against."""
    students = []
    for assignment in sorted({a.assignment for a in chosen}):
        write(dest, f"ref-{assignment}", assignment, answered(assignment, answers.reference_answer(assignment)))
        students.append((f"ref-{assignment}", assignment))
    for attack in {(a.assignment, a.base): a for a in chosen}.values():
        write(dest, f"base-{attack.base}", attack.assignment, answered(attack.assignment, attack.base_answer))
        students.append((f"base-{attack.base}", attack.assignment))
    return students
