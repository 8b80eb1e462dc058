"""The course as a website: `make book` (`python -m book`), described in docs/book.md.

Three steps, each a function here:

* `assemble` lays out a Sphinx source folder (build/book-src/): every chapter notebook as
  `make test` executed it (build/executed/, see `grader.nbtools.EXECUTED`), executed again here
  only when that copy is missing or was made from another version of the source; the released
  exercise statements (exercises/, never solutions/); and the index pages, in Chinese.
* `sphinx` renders it with myst-nb and sphinx-book-theme (configuration: book/conf.py), warnings
  as errors.
* `links.broken` then checks every local link and anchor of the built HTML (book/links.py).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from grader import REPO, nbtools

CONF_DIR = Path(__file__).resolve().parent
SOURCE = REPO / "build" / "book-src"
SITE = REPO / "build" / "book"

MAIN_LINE = re.compile(r"4\.(\d+)([a-z]?)_")  # 4.1_modes_linearize … 4.10b_implicit_adjoint
APPENDIX = re.compile(r"A_(\d+)(?:\.(\d+))?")  # A_4.1_why_autodiff … A_99_cheat_sheet
# Links between notebooks name a heading as Jupyter does, by its markdown text with spaces as
# hyphens ("#🟢-必读：`stop_gradient`-的语义"); MyST slugs the heading's plain text and inline
# code only (no backticks, emphasis marks or $math$), so the copies' links drop those too.
NOTEBOOK_ANCHOR = re.compile(r"(\]\([^)\s#]*\.ipynb#)([^)\s]+)\)")
NOT_IN_SLUG = re.compile(r"\$[^$]*\$|[`*]")

OPTIONAL_NOTE = """```{note}
⚪ 选读：这是附录，不在主线上。第一次学习可以跳过，需要时再回来读。
```"""

RUN_IT_YOURSELF = """```{tip}
**自己动手运行。** 网页上的输出和图都来自课程测试时的真实运行，但网页只能读。要修改、运行代码并完成计分练习，
请用老师发给你的学生版（`student.zip`）：解压后在那个文件夹里运行 `make lab`（第一次会先安装环境），
在 JupyterLab 里打开同名的 notebook。怎样安装见学生版里的 `README.md`。
```"""


@dataclass
class Project:
    """What a book is built from: a course checkout, or a small copy of one in a test."""

    root: Path = REPO
    cache: Path = nbtools.EXECUTED
    source: Path = SOURCE
    site: Path = SITE

    @property
    def notebooks(self) -> list[Path]:
        return sorted((self.root / "notebooks").glob("*.ipynb"), key=reading_order)

    @property
    def exercises(self) -> list[Path]:
        return sorted(p for p in (self.root / "exercises").glob("*/*.ipynb") if p.stem == p.parent.name)


@dataclass
class Assembly:
    reused: list[str] = field(default_factory=list)
    executed: list[str] = field(default_factory=list)


def jupyter_slug(title: str) -> str:
    """A heading's anchor as the notebooks link to it (Jupyter's: spaces become hyphens)."""
    return title.strip().replace(" ", "-")


def reading_order(path: Path) -> tuple:
    """00_intro, the main line 4.1 … 4.10b, 99_closing, then the appendices by chapter."""
    name = path.stem
    if match := MAIN_LINE.match(name):
        return (1, int(match.group(1)), match.group(2), name)
    if match := APPENDIX.match(name):
        return (3, int(match.group(1)), int(match.group(2) or 0), name)
    return (0 if name.startswith("00") else 2, 0, "", name)


def is_appendix(path: Path) -> bool:
    return path.stem.startswith("A_")


def title(nb) -> str:
    for cell in nb.cells:
        for line in cell.source.splitlines() if cell.cell_type == "markdown" else []:
            if line.startswith("# "):
                return line[2:].strip()
    raise ValueError("a page without a `# ` title")


def executed(path: Path, project: Project, assembly: Assembly):
    """The notebook executed from its current source: `make test`'s copy when it is fresh (waiting
    for a run in progress), otherwise executed now and kept for the next build. A notebook that
    fails stops the book."""
    copy = nbtools.executed_copy(path, project.cache, project.root)
    with nbtools.keeping(copy):
        nb = nbtools.fresh_executed_copy(path, copy)
        if nb is not None:
            assembly.reused.append(path.name)
            return nb
        print(f"book: executing {path.name} (its executed copy is missing or stale)", flush=True)
        result = nbtools.execute_notebook(path)
        if not result.ok:
            raise SystemExit(f"book: {path.name} does not run:\n  " + "\n  ".join(result.problems))
        nbtools.keep(result.notebook, copy)
    assembly.executed.append(path.name)
    return result.notebook


def _page(nb, optional: bool):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = NOTEBOOK_ANCHOR.sub(lambda m: m.group(1) + NOT_IN_SLUG.sub("", m.group(2)) + ")", cell.source)
    if optional:
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(OPTIONAL_NOTE))
    return nb


def _toctree(caption: str, entries: list[str]) -> str:
    lines = "\n".join(entries)
    return f"```{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n{lines}\n```\n"


def index_page(project: Project) -> str:
    stems = [p.stem for p in project.notebooks]
    parts = {
        "开篇": [s for s in stems if s.startswith("00")],
        "主线（按阅读顺序）": [s for s in stems if MAIN_LINE.match(s)],
        "结语": [s for s in stems if s.startswith("99")],
        "附录（⚪ 选读）": [s for s in stems if s.startswith("A_")],
    }
    trees = [_toctree(caption, [f"notebooks/{s}" for s in found]) for caption, found in parts.items() if found]
    trees.append(_toctree("计分练习", ["exercises/index"]))
    first = project.notebooks[0]
    start = f"[{title(nbformat.read(first, as_version=4))}](notebooks/{first.name})"
    return f"""# 第 4 章 进阶自动微分

本章讲 JAX 怎样求导、什么时候换一种求导方式、什么时候要自己规定求导规则，以及哪些函数根本不能求导。
从「{start}」开始，按左侧目录的顺序读主线；标着 ⚪ 的附录是选读。
每页开头写着预计学习时间；❌ 是错误或过时的写法，紧跟着的 ✅ 是推荐写法，🧪 是自检。

{RUN_IT_YOURSELF}

{"".join(trees)}"""


def exercises_page(project: Project) -> str:
    rows = []
    for path in project.exercises:
        nb = nbformat.read(path, as_version=4)
        rows.append(f"- [{title(nb)}]({path.parent.name}/{path.name})")
    listing = "\n".join(rows) or "（本项目没有练习。）"
    entries = "\n".join(f"{p.parent.name}/{p.stem}" for p in project.exercises)
    return f"""# 计分练习

每个练习页只有题目和可见测试（🧪）：参考解答和隐藏测试不在本网站上，评分时才运行。

{listing}

```{{tip}}
**作答。** 在老师发给你的学生版里打开 `exercises/<练习名>/<练习名>.ipynb`，在 ✍️ 作答区写代码，
从头运行全部单元格：最后一个单元格汇总哪些可见测试通过了。也可以在终端里执行 `make check EX=<练习名>`。
```

```{{toctree}}
:hidden:

{entries}
```
"""


def assemble(project: Project) -> Assembly:
    """Lay out the Sphinx source folder (replaced) from executed notebooks and released exercises."""
    assembly = Assembly()
    shutil.rmtree(project.source, ignore_errors=True)
    (project.source / "notebooks").mkdir(parents=True)
    for path in project.notebooks:
        nb = _page(executed(path, project, assembly), optional=is_appendix(path))
        nbformat.write(nb, project.source / "notebooks" / path.name)
    for path in project.exercises:  # the released statement as nbgrader generated it; never run
        target = project.source / "exercises" / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(_page(nbformat.read(path, as_version=4), optional=False), target)
    (project.source / "exercises").mkdir(exist_ok=True)
    (project.source / "index.md").write_text(index_page(project), encoding="utf-8")
    (project.source / "exercises" / "index.md").write_text(exercises_page(project), encoding="utf-8")
    mathjax = Path(importlib.util.find_spec("jupyter_server_mathjax").origin).parent / "static"
    shutil.copytree(mathjax, project.source / "_static" / "mathjax")
    return assembly


def sphinx(project: Project) -> subprocess.CompletedProcess:
    """sphinx-build, every warning an error (reported all, then failing)."""
    shutil.rmtree(project.site, ignore_errors=True)
    env = {**os.environ, "CH4_BOOK_STATIC": str(project.source / "_static")}
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", "-E", "-c", str(CONF_DIR)]
    command += ["-d", str(project.source.parent / "book-doctrees"), str(project.source), str(project.site)]
    return subprocess.run(command, env=env, capture_output=True, text=True)
