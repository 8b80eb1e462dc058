"""The student edition: what an instructor hands to students, and the check that it keeps secrets.

It holds the chapter notebooks, the released exercises, the kit, the environment files and a
student README, Makefile and pyproject (from `edition/`). Nothing of `solutions/`, the grader,
its proof (the catalogue) or the tests goes in, and `leaks` proves that no solution or hidden-test passage
and no catalogued answer was copied into a published file.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat

from grader import REPO, course

# What goes in, as globs relative to the repository; each file keeps its path, except that the
# files under edition/ (student README, Makefile, pyproject, Jupyter settings) go to the top, and
# the student's own pins become the edition's requirements.txt (RENAMED).
CONTENTS = [
    "notebooks/*.ipynb",
    "exercises/*/*.ipynb",
    "kit/*.py",
    "edition/**/*",
    "edition/**/.gitignore",
    "requirements-student.txt",
    "environment.yml",
    "tools/setup.sh",
    "tools/install_pins.sh",
    "tools/lab.sh",
    "tools/jupyter-config/**/*.json",
    "tools/jupyter-share/**/*",
]

RENAMED = {"requirements-student.txt": "requirements.txt"}  # what the edition's tools/setup.sh installs
# The edition's README says how many notebooks of each kind it holds: `{{main}}`, `{{first}}`,
# `{{last}}`, `{{appendices}}` and `{{exercises}}` in edition/README.md are counted at build time.
README = "edition/README.md"
FIELD = re.compile(r"\{\{(\w+)\}\}")
MAIN_LINE = re.compile(r"4\.(\d+)([a-z]?)_")  # 4.1_modes_linearize … 4.10c_adjoint_stability

SECRET_BLOCK = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)
# A single line this long is specific enough to be a leak on its own; shorter lines are often
# idioms a chapter notebook teaches too ("@partial(jax.custom_vjp, nondiff_argnums=(1,))"), so
# those count only as a pair of consecutive secret lines found together, and only a pair with
# enough text to be specific (not "]:" followed by "try:"). Pasting a solution repeats many.
MIN_SECRET_CHARS = 60
MIN_PAIR_CHARS = 40


def build(out: Path) -> Path:
    """Write the edition into `out` (replaced) and `out`.zip beside it; returns the archive."""
    shutil.rmtree(out, ignore_errors=True)
    for pattern in CONTENTS:
        for path in sorted(p for p in REPO.glob(pattern) if p.is_file()):
            inner = path.relative_to(REPO / "edition" if pattern.startswith("edition/") else REPO)
            inner = Path(RENAMED.get(str(inner), inner))
            (out / inner).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, out / inner)
    readme, fields = (REPO / README).read_text(encoding="utf-8"), contents()
    (out / "README.md").write_text(FIELD.sub(lambda m: fields[m.group(1)], readme), encoding="utf-8")
    return Path(shutil.make_archive(str(out), "zip", root_dir=out.parent, base_dir=out.name))


def contents(root: Path = REPO) -> dict[str, str]:
    """What the README says the edition holds, counted from notebooks/ and solutions/: the main
    line (how many, the first and the last in reading order), the appendices, the exercises."""
    names = [p.stem for p in (root / "notebooks").glob("*.ipynb")]
    main = sorted((m for name in names if (m := MAIN_LINE.match(name))), key=lambda m: (int(m[1]), m[2]))
    return {
        "main": str(len(main)),
        "first": f"4.{main[0][1]}{main[0][2]}",
        "last": f"4.{main[-1][1]}{main[-1][2]}",
        "appendices": str(sum(name.startswith("A_") for name in names)),
        "exercises": str(len(course.ASSIGNMENTS)),
    }


def _code_lines(text: str) -> list[str]:
    return [s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith("#")]


def _sources(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        return [cell.source for cell in nbformat.read(path, as_version=4).cells]
    return [path.read_text(encoding="utf-8", errors="replace")]


def secret_passages(assignment: str, kinds=("SOLUTION", "HIDDEN TESTS")) -> set[str]:
    """Long lines and pairs of consecutive lines found only in solution or hidden-test blocks."""
    blocks, public = [], set()
    for source in _sources(course.notebook_path(course.SOLUTIONS, assignment)):
        blocks += [_code_lines(m.group(2)) for m in SECRET_BLOCK.finditer(source + "\n") if m.group(1) in kinds]
        public |= set(_code_lines(SECRET_BLOCK.sub("", source + "\n")))
    return _passages(blocks, public)


def catalogue_passages(assignment: str) -> set[str]:
    """The same kind of passages from the catalogued answers, minus what the course publishes
    anyway (a wrong answer often repeats a line of the statement or of a chapter notebook)."""
    published = [course.notebook_path(course.EXERCISES, assignment), *sorted((REPO / "notebooks").glob("*.ipynb"))]
    public = [line for path in published for source in _sources(path) for line in _code_lines(source)]
    files = sorted((course.CATALOGUE / assignment).glob("*.py"))
    catalogued = [_code_lines(p.read_text(encoding="utf-8")) for p in files]
    public_text = "\n".join(public)  # a chapter line may carry a comment after the same code
    return {passage for passage in _passages(catalogued, set(public)) if passage not in public_text}


def _passages(blocks: list[list[str]], public: set[str]) -> set[str]:
    passages = set()
    for lines in blocks:
        passages |= {line for line in lines if len(line) >= MIN_SECRET_CHARS and line not in public}
        pairs = zip(lines, lines[1:], strict=False)
        passages |= {f"{a}\n{b}" for a, b in pairs if not {a, b} <= public and len(a + b) >= MIN_PAIR_CHARS}
    return passages


def leaks(secrets: set[str], published: list[Path]) -> list[str]:
    """'file: passage' for every secret passage found in a published notebook or text file."""
    found = []
    for path in published:
        text = "\n".join("\n".join(_code_lines(source)) for source in _sources(path))
        found += [f"{path.name}: {passage!r}" for passage in secrets if passage in text]
    return found
