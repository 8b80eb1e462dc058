"""Drop from requirements-student.txt the pins its .in file leaves out (`# leave out: NAME  why`).

pip-compile writes every package the student's requirements reach; a few of them no student
process imports (requirements-student.in says which and why). `make pins` runs this after
compiling, so requirements-student.txt is exactly what tools/install_pins.sh installs (with
--no-deps) in the student edition. Usage: python tools/student_pins.py (from the checkout's top).
"""

import re
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

LEAVE_OUT = re.compile(r"^# leave out: (\S+)\s*(.*)$", re.M)


def left_out(source: str) -> dict[str, str]:
    """{package: why} for each `# leave out: NAME  why` line."""
    return {canonicalize_name(name): why for name, why in LEAVE_OUT.findall(source)}


def without(pins: str, names: set[str]) -> tuple[str, set[str]]:
    """`pins` without the lines pinning `names`, and which of them it held."""
    kept, dropped = [], set()
    for line in pins.splitlines(keepends=True):
        name = canonicalize_name(re.split(r"[=<>~!\[ ;]", line.strip(), maxsplit=1)[0]) if line[:1].isalnum() else None
        if name in names:
            dropped.add(name)
        else:
            kept.append(line)
    return "".join(kept), dropped


def main() -> int:
    names = set(left_out(Path("requirements-student.in").read_text(encoding="utf-8")))
    target = Path("requirements-student.txt")
    pins, dropped = without(target.read_text(encoding="utf-8"), names)
    if dropped != names:
        print(f"student_pins: not in requirements-student.txt, so nothing to leave out: {sorted(names - dropped)}")
        return 1
    target.write_text(pins, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
