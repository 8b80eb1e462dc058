"""nbgrader's own tools on this course: the classes nbgrader_config.py (repository root) plugs in.

Formgrader and the nbgrader command line read that file; `python -m grader grade` and
`python -m grader release` build their own Config (grader.course.nbgrader_config) and never do,
so nothing here changes how the course grades.

* `Refuse`, as a converter's exporter, stops the nbgrader steps that would go around the
  pipeline before they read or write anything: autograde (student code outside the sandbox,
  scored without the out-of-kernel verdicts: a forged pass would count), generate_feedback
  (feedback without the pipeline's sanitizing, showing the hidden tests) and
  generate_assignment (a release and a gradebook entry the pipeline did not make).
* `guard_course_folder` puts the same refusals in the graded course folder (OUT/course), for
  nbgrader run there (`cd OUT/course && nbgrader autograde ...`, or Formgrader opened with
  ?path=OUT/course), which reads that folder's nbgrader_config.py instead of the repository's.
* `CollectForGrading` collects into a folder of its own, in the layout `grader grade` reads,
  instead of the course folder's submitted/ (the pipeline's working copy, rewritten on each run).
* `formgrader_template_paths` puts grader/templates/formgrade first, so Formgrader's pages load
  MathJax from the Jupyter server rather than a CDN.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import nbgrader
from nbconvert.exporters import NotebookExporter
from nbgrader.converters.base import NbGraderException
from nbgrader.exchange.default import ExchangeCollect
from traitlets import Unicode

GRADE = "python -m grader grade <提交目录> --out <输出目录>"
REFUSALS = {  # keyed by the converter's class name; each one line
    "Autograde": "本课程不用 nbgrader autograde 评分（它不经沙箱运行学生代码，也不做评分程序外的判定，"
    f"学生可以伪造通过）：请在仓库根目录运行 {GRADE}",
    "GenerateFeedback": f"本课程的反馈由 {GRADE} 生成（在 <输出目录>/feedback/），"
    "不用 nbgrader generate_feedback 重新生成（它不做净化，还会显示隐藏测试）",
    "GenerateAssignment": "本课程的发布版由 make release（python -m grader release）从 solutions/ 生成到 exercises/，"
    "不用 nbgrader generate_assignment 或 Formgrader 的 Generate",
}


class Refuse(NotebookExporter):
    """A converter makes its exporter after listing the notebooks and before converting any:
    raising here leaves every file and the gradebook as they were."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        message = REFUSALS.get(type(self.parent).__name__, f"本课程不用 nbgrader 的这一步：请用 {GRADE}")
        self.log.error(message)
        raise NbGraderException(message)  # the CLI exits 1; Formgrader shows the logged line


GUARDED = ("Autograde", "GenerateFeedback", "GenerateAssignment")
REFUSE = f"{__name__}.Refuse"  # by name: an nbgrader that cannot import it fails instead of running


def protect(c) -> None:
    """Make the nbgrader steps that would go around the pipeline refuse (c: a traitlets Config)."""
    for step in GUARDED:
        c[step].exporter_class = REFUSE


COURSE_CONFIG = (
    "# Written by the course's tools (grader/instructor/nbgrader_guard.py): nbgrader run in this folder must not\n"
    "# grade around `python -m grader grade`. Without the course's environment these steps fail.\n"
) + "".join(f'c.{step}.exporter_class = "{REFUSE}"\n' for step in GUARDED)


def guard_course_folder(root: Path) -> None:
    path = root / "nbgrader_config.py"
    if not path.is_file() or path.read_text(encoding="utf-8") != COURSE_CONFIG:
        path.write_text(COURSE_CONFIG, encoding="utf-8")


class CollectForGrading(ExchangeCollect):
    destination = Unicode("", help="where `nbgrader collect` writes <student>/<assignment>/").tag(config=True)

    def copy_files(self):
        if not self.destination:
            self.fail("CollectForGrading.destination 没有设置（见仓库根目录的 nbgrader_config.py）")
        with _swapped(self.coursedir, submitted_directory=self.destination):  # an absolute path wins
            super().copy_files()


@contextmanager
def _swapped(obj, **values):
    """nbgrader.utils.temp_attrs without its flaw: put the old values back on an error too (the
    course directory object outlives one request in Formgrader)."""
    old = {name: getattr(obj, name) for name in values}
    for name, value in values.items():
        setattr(obj, name, value)
    try:
        yield obj
    finally:
        for name, value in old.items():
            setattr(obj, name, value)


_said: set[str] = set()


def warn_once(message: str) -> None:
    """Formgrader reloads nbgrader_config.py on every request: say a thing once per process."""
    if message not in _said:
        _said.add(message)
        print(message, file=sys.stderr)


def formgrader_template_paths(first: Path) -> list[str]:
    """The folders Formgrader's page template is looked up in, with `first` before them all.
    (Formgrader sets its template folder itself, after reading nbgrader_config.py, so only the
    whole path, which it leaves alone, can put a folder of ours in front.)"""
    from nbconvert.exporters import HTMLExporter

    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    exporter = HTMLExporter(template_name="formgrade", extra_template_basedirs=[str(formgrader)])
    return [str(first), *exporter.template_paths]
