"""The demo class graded once per `make test` (not a test module): the session fixture `demo_run`
(tests/conftest.py) that the class report's tests and the self-proof's pipeline tests read.

It is the demo class (proof/demo.py: alice the reference, bob the untouched release, carol,
dave and grace each assignment's first wrong, right and natural-style catalogue answer, erin a
broken file, frank a tampering attempt) and three students more: one hands in the reference of
COPIED_IN with its names renamed and its comments rewritten (a copy of alice's), one a tampering
attempt (flagged), and one whose id is a spreadsheet formula holding HTML and whose answer raises
an error quoting a script and a bidirectional override. Then `python -m grader report` on the
same folder. Every test that reads it is in the pytest-xdist group GROUP, so one worker grades it.
"""

import ast
import io
import json
import subprocess
import sys
import tokenize
from types import SimpleNamespace

import pytest
from helpers import grade_cli, gradebook_rows, read_csv

from grader import REPO, course
from proof import answers, demo, hostile, sample_classes

GROUP = "demo_class"
in_its_group = pytest.mark.xdist_group(GROUP)
COPIED_IN = "residuals"  # quick to grade
COPYCAT = "copycat"
FLAGGED = "mallory"
HOSTILE_ID = '=HYPERLINK("https:x","<img src=x onerror=window.__pwned=1>")'  # no "/": it is a folder name
HOSTILE_MESSAGE = "<script>window.__pwned=2</script>\u202eevil"


def disguised(answer: str, assignment: str) -> str:
    """`answer` as a copier hands it in: every name it defines renamed (the interface the tests
    call stays), every comment rewritten."""
    defined = set()
    for node in ast.walk(ast.parse(answer)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    renamed = defined - set(answers.interface(assignment))
    tokens, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(answer).readline):
        if token.type == tokenize.NAME and token.string in renamed and getattr(previous, "string", "") != ".":
            token = token._replace(string="my_" + token.string.strip("_"))
        elif token.type == tokenize.COMMENT:
            token = token._replace(string="# 我自己的思路")
        tokens.append(token)
        previous = token
    copy = tokenize.untokenize(tokens)
    assert copy != answer and len(renamed) >= 3, "the disguise changed nothing"
    return copy


def grade_the_demo_class(tmp_path_factory) -> SimpleNamespace:
    submitted, out = tmp_path_factory.mktemp("demo-class"), tmp_path_factory.mktemp("graded")
    demo.demo_class(submitted)
    copy = disguised(answers.reference_answer(COPIED_IN), COPIED_IN)
    sample_classes.write(submitted, COPYCAT, COPIED_IN, sample_classes.answered(COPIED_IN, copy))
    forger = next(a for a in hostile.attacks() if a.slug == "programs_outside_tests")  # flagged: tampering
    sample_classes.write(submitted, FLAGGED, forger.assignment, forger.notebook())
    raising = f"raise ValueError({HOSTILE_MESSAGE!r})"
    sample_classes.write(submitted, HOSTILE_ID, COPIED_IN, sample_classes.answered(COPIED_IN, raising))
    done = grade_cli(submitted, out, timeout=2400)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    written = (out / "report" / "class.json").read_text(encoding="utf-8")
    again = subprocess.run(
        [sys.executable, "-m", "grader", "report", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    journal = (out / "course" / course.JOURNAL).read_text(encoding="utf-8").splitlines()
    return SimpleNamespace(
        out=out,
        done=done,
        again=again,
        written=written,
        report=json.loads(written),
        page=(out / "report" / "index.html").read_text(encoding="utf-8"),
        long=read_csv(out),
        gradebook=gradebook_rows(course.sqlite_url(out / "course")),
        notes={(o["student"], o["assignment"]): o["notes"] for o in map(json.loads, journal)},
    )
