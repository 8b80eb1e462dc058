"""The grader's compilation cache: XLA programs compiled once from the reference answers, loaded
by every graded kernel instead of compiled again.

Most of a graded kernel's CPU is XLA compiling the programs its test cells make, and most of
those programs are the same in every submission of an assignment (the tests' own primitives on
the same shapes). Before a process grades an assignment for the first time, `ensure(assignment)`
fills `FOLDER` with JAX's persistent compilation cache by running that assignment's kernel
notebook with the reference answer, hidden tests included, once per seed in `SEEDS`: course code
only, never a student's, in a subprocess. Then:

* graded kernels get it read-only: bound at `IN_SANDBOX`, owned by the grader, and their JAX
  never writes an entry (`read_only_settings`: no compilation is slow enough to be kept). So no
  kernel ever sees a program another kernel made, only the reference's;
* a hit changes no result: JAX keys an entry by the whole program, the compile options and the
  JAX, XLA and backend versions, so a hit loads exactly what compiling would have produced;
  anything else (most of an answer's own programs) compiles as before;
* the seeds are fixed and nobody's: inputs a program holds as constants are no student's;
* where the folder cannot be made, grading goes on without it, only slower.

`python -m grader.xla_cache <assignment> <folder>` is the builder the subprocess runs.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from grader import REPO

FOLDER = REPO / "build" / "xla-cache"
IN_SANDBOX = "/xla-cache"  # where a sandboxed kernel finds FOLDER (an empty folder when there is none)
# Three seeds: the hidden tests draw their sizes from small fixed sets, and after three seeds a
# fourth found nearly all its programs cached (coloring 10.1 -> 6.4 -> 3.6 -> 2.6 core-s).
SEEDS = ("xla-cache-1", "xla-cache-2", "xla-cache-3")
NEVER = "1e9"  # seconds: the minimum compile time for JAX to keep a program, so a reader keeps none


def settings(folder: Path | str, writable: bool) -> dict[str, str]:
    """The environment that points a kernel's JAX at `folder`; only the builder may write to it."""
    return {
        "JAX_COMPILATION_CACHE_DIR": str(folder),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0" if writable else NEVER,
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


def read_only_settings() -> dict[str, str]:
    """What every sandboxed kernel gets (sandbox.kernel_env)."""
    return settings(IN_SANDBOX, writable=False)


def _digest(assignment: str) -> str:
    """What the cached programs depend on: the notebook, the kit and the JAX install."""
    from importlib.metadata import version

    from grader import course, sandbox

    sha = hashlib.sha256(course.notebook_path(course.SOLUTIONS, assignment).read_bytes())
    for path in sorted(sandbox.KIT.glob("*.py")):
        sha.update(path.read_bytes())
    sha.update(f"{version('jax')} {version('jaxlib')} {sys.version}".encode())
    return sha.hexdigest()[:16]


def ensure(assignment: str) -> Path | None:
    """FOLDER, holding `assignment`'s programs (built now if it does not yet), or None where it
    cannot be built. One process builds an assignment; others wait for it, then reuse it."""
    ready = FOLDER / "ready" / f"{assignment}-{_digest(assignment)}"
    if ready.exists():
        return FOLDER
    try:
        ready.parent.mkdir(parents=True, exist_ok=True)
        FOLDER.chmod(0o755)  # sandboxed kernels run as another user
        with open(ready.parent / f".{assignment}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not ready.exists():
                _build(assignment)
                ready.touch()
    except (OSError, subprocess.SubprocessError) as err:
        print(f"grader: no compilation cache for {assignment} ({err}); grading goes on, compiling all", file=sys.stderr)
        return None
    return FOLDER


def _build(assignment: str) -> None:
    """Run the builder into a private folder, then move each new entry into FOLDER in one step,
    so a kernel reading FOLDER meanwhile sees an entry whole or not at all."""
    with tempfile.TemporaryDirectory(dir=FOLDER, prefix=".build-") as scratch:
        command = [sys.executable, "-m", "grader.xla_cache", assignment, scratch]
        subprocess.run(command, cwd=REPO, check=True, capture_output=True, timeout=900)
        for entry in Path(scratch).iterdir():
            if entry.is_file() and not (FOLDER / entry.name).exists():
                entry.chmod(0o644)
                os.replace(entry, FOLDER / entry.name)


def main(argv: list[str]) -> None:
    """The builder: the kernel notebook with the reference answer, once per seed, writing to a folder."""
    import nbformat

    from grader import answers, course, intake, verdict

    assignment, folder = argv
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    for seed in SEEDS:
        nb = verdict.kernel_notebook(source)
        intake.confine_student_cells(nb, source)
        answers.run_in_kernel(nb, assignment, seed, settings(folder, writable=True))


if __name__ == "__main__":
    main(sys.argv[1:])
