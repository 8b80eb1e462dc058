"""nbgrader's own tools on this course: Formgrader, the Assignment List and the nbgrader CLI.

nbgrader reads this file from the folder it starts in: run `nbgrader ...` and Jupyter from the
repository root (`make formgrader`). Grading is `python -m grader grade`, which builds its own
configuration (grader/course.py) and does not read this file; the nbgrader steps that would go
around it (autograde, generate_feedback, generate_assignment) refuse (grader/instructor/nbgrader_guard.py).

Environment (a relative path is relative to the repository, not to the current folder):
  CH4_GRADES     the --out folder of a `python -m grader grade` run, shown in Formgrader
                 (default build/demo, what `make demo` writes); it must lie inside the folder
                 Jupyter serves, as Formgrader opens files through it
  CH4_EXCHANGE   the local exchange for release, fetch, submit and collect (default build/exchange)
  CH4_COLLECTED  where `nbgrader collect` writes <student>/<assignment>/ (default
                 classes/my-class/submitted, the class's home in README: `make grade` grades it)
"""

import os
from pathlib import Path

from grader import course
from grader.instructor import nbgrader_guard

c = get_config()  # noqa: F821 - traitlets provides get_config to config files
REPO = Path(__file__).resolve().parent


def folder(variable: str, default: str) -> Path:
    return (REPO / os.environ.get(variable, default)).resolve()  # an absolute value replaces REPO


grades = folder("CH4_GRADES", "build/demo")
root = grades / "course"  # the nbgrader course folder `grader grade` keeps: submitted/, autograded/, ...
if not (root / "gradebook.db").exists() and not (root / course.DB_URL_FILE).exists():
    nbgrader_guard.warn_once(
        f"Formgrader 还没有成绩可显示：{grades} 里没有 python -m grader grade 的结果"
        "（先运行 make demo，或把 CH4_GRADES 设为 grade 的 --out 目录）"
    )
root.mkdir(parents=True, exist_ok=True)  # Formgrader and collect open the gradebook there
nbgrader_guard.guard_course_folder(root)  # for nbgrader run inside it, which reads only its own config

# The pipeline's own settings: course id, gradebook, source solutions/, release exercises/.
c.merge(course.nbgrader_config(root))

# A local exchange. Students' copies go to ./ch04/<assignment> in the folder Jupyter serves (the
# Assignment List reads this file again from there) or the current folder (nbgrader CLI).
exchange = folder("CH4_EXCHANGE", "build/exchange")
if not exchange.is_dir():
    exchange.mkdir(parents=True)
    exchange.chmod(0o777)  # what nbgrader's release sets: every student submits into it
c.Exchange.root = str(exchange)
c.Exchange.assignment_dir = "."
c.Exchange.path_includes_course = True
# By name: Formgrader shows the config as JSON.
c.ExchangeFactory.collect = "grader.instructor.nbgrader_guard.CollectForGrading"
c.CollectForGrading.destination = str(folder("CH4_COLLECTED", "classes/my-class/submitted"))

# Formgrader renders a submission with nbconvert's MathJax from a CDN; offline its math stayed raw
# LaTeX. Our folder first on its template path: its mathjax.html.j2 loads the server's own MathJax.
c.HTMLExporter.template_paths = nbgrader_guard.formgrader_template_paths(REPO / "grader" / "templates" / "formgrade")

# autograde, generate_feedback and generate_assignment stop before they touch anything.
nbgrader_guard.protect(c)
