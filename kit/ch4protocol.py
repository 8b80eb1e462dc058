"""What the kernel side (ch4check) and the grader agree on, importable without JAX or NumPy:
the names of the grading seed and of the evidence output, the markers of a test cell, and how
a test's seed is derived. The grader's own processes (intake, sandbox, feedback, report) import
this module, not ch4check, so they start quickly; only the verdicts need the full kit."""

from __future__ import annotations

import ast
import hashlib
import hmac

SEED_ENV = "CH4_GRADING_SEED"  # set by the grader for each (student, assignment)
MIME = "application/vnd.ch4.evidence+json"
VERDICT_MARKER = "# —— 判定 ——"
TEST_MAGIC = "%%ch4test"  # the first line of every test cell
ANSWER_MAGIC = "%%ch4answer"  # the first line of every cell a student writes, when it runs confined


def derive_seed(secret: str, test_id: str) -> int:
    """The seed of one test's inputs: unknown before grading, the same in kernel and grader."""
    digest = hmac.new(secret.encode(), test_id.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "little")


def split_test_cell(source: str) -> str:
    """The body of a ``%%ch4test`` cell (the source itself when the line is missing)."""
    first, _, rest = source.partition("\n")
    return rest if first.strip().startswith(TEST_MAGIC) else source


def free_names(body: str) -> set[str]:
    """Every name the body reads (a superset of what it needs from outside: cheap and safe)."""
    return {node.id for node in ast.walk(ast.parse(body)) if isinstance(node, ast.Name)}
