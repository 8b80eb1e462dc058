"""The demo class graded once per `make test` (not a test module): the session fixture `demo_run`
(tests/conftest.py) that the class report's tests and the self-proof's pipeline tests read.

It is the demo class (proof/demo.py: alice the reference, bob the untouched release, carol,
dave and grace each assignment's first wrong, right and natural-style catalogue answer, erin a
broken file, frank a tampering attempt, FLAGGED) and students more, mostly on COPIED_IN: one hands
in the reference with its names renamed and its comments rewritten (a copy of alice's), one whose
id is a spreadsheet formula holding HTML and whose answer
raises an error quoting a script and a bidirectional override, and PAGE_ATTACKER, the reference
with outputs made to attack its feedback page (script, event handlers, a fake "all passed"
banner, megabytes of text and HTML, a markdown cell of its own), DELIMITERS, the reference with
nbgrader's hidden-test markers in a string and a comment of its answer (its page must exist), and
on PROBED (softplus) PROBER, the naive log(1 + eˣ) whose hidden failures could have printed hidden
inputs (tests/test_hidden_values.py), and EXTRA_COPY, who answered in a copy of the notebook
(residuals-Copy1.ipynb) and handed in the blank release beside it. The class is graded in English
(LANG=en_US.UTF-8), then `python -m grader report` writes the report again on the same folder in
Chinese (zh_CN.UTF-8): the page of each is kept. Every test that reads it is in the pytest-xdist
group GROUP, so one worker grades it: the class report's tests, the feedback page's and the
self-proof's pipeline tests.
"""

import ast
import io
import json
import os
import shutil
import subprocess
import sys
import tokenize
from types import SimpleNamespace

import pytest
from helpers import grade_cli, gradebook_rows, read_csv
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from grader import REPO, course
from proof import answers, demo, sample_classes

GROUP = "demo_class"
in_its_group = pytest.mark.xdist_group(GROUP)
COPIED_IN = "residuals"  # quick to grade
COPYCAT = "copycat"
FLAGGED = "frank"  # the demo's tampering attempt (proof/demo.py): flagged on COPIED_IN
HOSTILE_ID = '=HYPERLINK("https:x","<img src=x onerror=window.__pwned=1>")'  # no "/": it is a folder name
HOSTILE_MESSAGE = "<script>window.__pwned=2</script>\u202eevil"
PAGE_ATTACKER = "page-attacker"
DELIMITERS = "delimiters"
PROBED, PROBER = "softplus", "prober"  # the naive forward: hidden tests fail where it overflows
EXTRA_COPY = "harry"  # the answer in residuals-Copy1.ipynb, the blank release in residuals.ipynb
ENGLISH, CHINESE = "en_US.UTF-8", "zh_CN.UTF-8"
DELIMITED_ANSWER = """

NOTE = "### BEGIN HIDDEN TESTS"  # 作答里出现了 nbgrader 的标记，不该影响反馈页
# ### BEGIN HIDDEN TESTS
"""
BANNER = "全部通过 10/10"
HOSTILE_HTML = (
    "<script>window.__pwned = 'script'; alert('script')</script>"
    "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">"
    "<div style='position:fixed;top:0;background:#0a0;color:#fff;font-size:48px' class='alert alert-success'>"
    f"{BANNER}</div>"
    "<a href='javascript:alert(1)'>link</a>"
)
VERDICT = "评分程序判定：✅ 通过（1 / 1 分）\n"
HOSTILE_ANSWER = f"""

class _Banner:
    def _repr_html_(self):
        return {HOSTILE_HTML!r}


display(_Banner())
print("x" * 3_000_000)
from IPython.display import HTML
display(HTML("<b>" + "y" * 5_000_000 + "</b>"))
"""


def hostile_notebook():
    """A markdown cell and a code cell whose outputs hold script, handlers, styling and a forged verdict."""
    markdown = (
        f"<script>alert('md')</script>\n\n<img src=x onerror=alert('md')>\n\n[click](javascript:alert('md'))\n\n"
        f"<div style='background:#0a0;font-size:48px' class='alert alert-success'>{BANNER}</div>\n\n$x^2 < y$"
    )
    code = new_code_cell("x")
    code.outputs = [
        new_output("display_data", data={"text/html": HOSTILE_HTML, "text/plain": "<Banner>"}),
        new_output("display_data", data={"application/javascript": "alert('js')", "text/plain": "js"}),
        new_output("stream", name="stdout", text=VERDICT),
    ]
    return new_notebook(cells=[new_markdown_cell(markdown), code])


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


def in_locale(lang: str) -> dict:
    """This environment with LANG=`lang` and nothing that would override it (grader/i18n.py)."""
    return {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")} | {"LANG": lang}


def grade_the_demo_class(tmp_path_factory) -> SimpleNamespace:
    submitted, out = tmp_path_factory.mktemp("demo-class"), tmp_path_factory.mktemp("graded")
    demo.demo_class(submitted)
    copy = disguised(answers.reference_answer(COPIED_IN), COPIED_IN)
    sample_classes.write(submitted, COPYCAT, COPIED_IN, sample_classes.answered(COPIED_IN, copy))
    raising = f"raise ValueError({HOSTILE_MESSAGE!r})"
    sample_classes.write(submitted, HOSTILE_ID, COPIED_IN, sample_classes.answered(COPIED_IN, raising))
    # Student code runs as written: the feedback must be safe whatever runs.
    nb = sample_classes.answered(COPIED_IN, answers.reference_answer(COPIED_IN) + HOSTILE_ANSWER)
    nb.cells.insert(1, hostile_notebook().cells[0])  # a markdown cell of the student's own
    nb.cells.append(new_code_cell("raise ValueError('e' * 1_000_000)"))
    sample_classes.write(submitted, PAGE_ATTACKER, COPIED_IN, nb)
    delimited = answers.reference_answer(COPIED_IN) + DELIMITED_ANSWER
    sample_classes.write(submitted, DELIMITERS, COPIED_IN, sample_classes.answered(COPIED_IN, delimited))
    naive = next(e for e in answers.entries(PROBED) if e.slug == "naive_forward")
    sample_classes.write(submitted, PROBER, PROBED, sample_classes.answered(PROBED, naive.answer))
    sample_classes.write(submitted, EXTRA_COPY, COPIED_IN, answers.release_notebook(COPIED_IN))
    shutil.copyfile(
        course.notebook_path(submitted / "alice", COPIED_IN),
        submitted / EXTRA_COPY / COPIED_IN / f"{COPIED_IN}-Copy1.ipynb",
    )
    done = grade_cli(submitted, out, timeout=2400, env=in_locale(ENGLISH))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    written = (out / "report" / "class.json").read_text(encoding="utf-8")
    page_en = (out / "report" / "index.html").read_text(encoding="utf-8")
    again = subprocess.run(
        [sys.executable, "-m", "grader", "report", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env=in_locale(CHINESE),
    )
    journal = (out / "course" / course.JOURNAL).read_text(encoding="utf-8").splitlines()
    return SimpleNamespace(
        out=out,
        done=done,
        again=again,
        written=written,
        report=json.loads(written),
        page=(out / "report" / "index.html").read_text(encoding="utf-8"),  # Chinese: the report command's
        page_en=page_en,  # the grading run's
        long=read_csv(out),
        gradebook=gradebook_rows(course.sqlite_url(out / "course")),
        journal={(o["student"], o["assignment"]): o for o in map(json.loads, journal)},  # score, graded, notes...
    )
