"""What the kernel side (ch4check), the judge (ch4judge) and the grader agree on, importable
without JAX or NumPy: the name of the output that carries exported programs, the markers of a
test cell, and how a test's inputs are seeded. The grader's own processes (intake, sandbox,
feedback, report) import this module, not the kit's JAX half, so they start quickly."""

from __future__ import annotations

import ast
import hashlib
import hmac

GRADING_ENV = "CH4_GRADING"  # "1" in a graded kernel: test cells export and stop there
# A graded kernel's key to the sizes its hidden tests export at (`sizes_seed`). A program is
# traced at its shapes, so the kernel must know them; drawn from this key, they are unknown
# while the answer is written, and a changed submission draws new ones. No value is drawn from it.
SIZES_ENV = "CH4_SIZES_KEY"
MIME = "application/vnd.ch4.programs+json"  # the output a test cell's exported programs leave in
VERDICT_MARKER = "# —— 判定 ——"  # above it: the export (kernel); below it: the verdict (judge)
TEST_MAGIC = "%%ch4test"  # the first line of every test cell
# What a test cell's export part may call besides `programs` (kit/ch4check.py); the judge, which
# never exports, binds them to a function that does nothing.
EXPORT_HELPER_NAMES = (
    "export", "export_split", "export_jvp", "at", "f32", "i32",
)  # fmt: skip


def derive_seed(secret: str, test_id: str) -> int:
    """The seed of one test's inputs, drawn by the judge: unknown outside it before grading."""
    digest = hmac.new(secret.encode(), test_id.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "little")


def sizes_key(secret: str) -> str:
    """The key the sizes of a submission's hidden tests are drawn from (`SIZES_ENV`): derived from
    its secret, from which it tells nothing back."""
    return hmac.new(secret.encode(), b"sizes", hashlib.sha256).hexdigest()


def sizes_seed(key: str, test_id: str) -> int:
    """The seed of one hidden test's sizes and structures, the same in the kernel and the judge."""
    return derive_seed(key, f"sizes/{test_id}")


def split_test_cell(source: str) -> str:
    """The body of a ``%%ch4test`` cell (the source itself when the line is missing)."""
    first, _, rest = source.partition("\n")
    return rest if first.strip().startswith(TEST_MAGIC) else source


def split_body(body: str) -> tuple[str, str]:
    """(export part, verdict part) of a test body, cut at the line ``VERDICT_MARKER``."""
    lines = body.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == VERDICT_MARKER]
    if len(starts) != 1:
        raise ValueError(f"a test cell needs exactly one line {VERDICT_MARKER!r}, found {len(starts)}")
    return "\n".join(lines[: starts[0]]), "\n".join(lines[starts[0] :])


def free_names(body: str) -> set[str]:
    """Every name the body reads (a superset of what it needs from outside: cheap and safe)."""
    return {node.id for node in ast.walk(ast.parse(body)) if isinstance(node, ast.Name)}
