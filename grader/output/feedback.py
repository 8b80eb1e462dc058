"""The feedback pages: what a student's notebook may put in them, and how they read offline.

Everything in a submission's outputs and markdown is written by the student, and the page that
shows it is opened by an instructor. So:

* Outputs are capped while the kernel runs, before nbgrader stores the autograded notebook
  (grader/kernels/execute.py).
* The page is sanitised with nbconvert's own `SanitizeHTML` (bleach): HTML and markdown outputs
  keep plain formatting tags only (no script, event handler, style, class or `javascript:`
  link), other active MIME types are dropped. Markdown cells are sanitised after they are
  rendered (`FeedbackExporter.markdown2html`), since markdown link syntax makes `javascript:`
  links that no source-level cleaning sees.
* Math renders offline: MathJax 2 from the `jupyter-server-mathjax` package is copied once into
  OUT/feedback/_mathjax and every page loads it by a relative URL (template `ch4_feedback`).
"""

from __future__ import annotations

import html
import importlib.util
import shutil
from pathlib import Path

import bleach
import jinja2
import jinja2.bccache
from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.v4 import new_output
from traitlets import Any, Bool, List, Unicode

GRADER_OUTPUT = "ch4_grader"  # output metadata: written by the grader, not by the student's code

TEMPLATES = Path(__file__).parent.parent / "templates"
MATHJAX_DIR = "_mathjax"  # under OUT/feedback; pages are OUT/feedback/<student>/<assignment>/*.html
MATHJAX_URL = f"../../{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# A page released to a student (report.release_layout) is fetched into the folder their Jupyter
# server serves, as ch04/<assignment>/feedback/<timestamp>/<page>.html, and opened at
# <server>/files/ch04/...: five folders up is the server itself, whose jupyter-server-mathjax
# extension serves the same MathJax 2 (Safe on).
RELEASED_MATHJAX_URL = "../../../../../static/jupyter_server_mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"

# Long verdict lines and student output wrap instead of widening the page.
CSS = """
div.output_area pre, div.output_subarea pre, div.input_area pre {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
"""

# What student HTML and rendered markdown may keep: plain formatting, no attributes but links.
TAGS = [
    *sorted(bleach.ALLOWED_TAGS),  # nbconvert's default: a, b, code, em, li, ...
    *("p", "br", "hr", "pre", "span", "div", "del", "sub", "sup", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("table", "thead", "tbody", "tr", "th", "td"),
]
LINK_TARGETS = ("#", "https://", "http://")  # where a page's links may go: itself, or the web


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    """A link keeps its target only when it resolves wherever the page is read (OUT/feedback/ for
    the instructor, the student's own feedback folder after release_feedback): a statement's
    relative link to a chapter notebook (`../../notebooks/4.10a_….ipynb#…`) keeps its text, which
    names the notebook and the section, and loses the target, which would lead nowhere."""
    if name == "title":
        return tag in ("a", "abbr", "acronym")
    return tag == "a" and name == "href" and value.startswith(LINK_TARGETS)


ATTRIBUTES = _allowed_attribute


# ---------------------------------------------------------------------------------------------
# Output caps


# ---------------------------------------------------------------------------------------------
# The page


class HideHiddenTestOutput(Preprocessor):
    """The answer sees the inputs a hidden test calls it with, so nothing it produced while a
    hidden test ran (or in any later cell: one of its own, or the locked summary cell, which prints
    nothing in a graded kernel) reaches the student's page: a hidden test keeps only the grader's
    evidence notice and its verdict (the last output, added by the grader), with a note. The
    autograded notebook keeps everything for the instructor."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off by default

    def preprocess(self, nb, resources):
        from grader import messages
        from grader.judging import verdict

        hidden, after_hidden = verdict.hidden_tests(resources["nbgrader"]["assignment"]), False
        note = new_output("stream", name="stdout", text=messages.HIDDEN_OUTPUT_DROPPED + "\n")
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader") or {}
            test = meta.get("grade_id") if meta.get("grade") else None
            after_hidden = after_hidden or test in hidden
            outputs = cell.get("outputs", [])
            if cell.cell_type != "code" or not after_hidden or not outputs:
                continue
            if test in hidden:
                kept = [out for out in outputs[:-1] if out.get("metadata", {}).get(GRADER_OUTPUT)] + outputs[-1:]
                cell.outputs = kept if len(kept) == len(outputs) else [*kept[:-1], note, *kept[-1:]]
            else:  # a cell after a hidden test: the student's own, or the summary (kit ch4check.report_tests)
                cell.outputs = [note]
        return nb, resources


class ClearHiddenTestCode(Preprocessor):
    """nbgrader's ClearHiddenTests on the course's hidden test cells only. nbgrader's own reads every
    cell, the student's answer too, and raised on an answer holding the text "BEGIN HIDDEN TESTS"
    (in a string or a comment), so that submission got no feedback page: an answer's source never
    decides whether its page is made."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off by default

    def preprocess(self, nb, resources):
        from nbgrader.preprocessors import ClearHiddenTests

        from grader.judging import verdict

        clear, hidden = ClearHiddenTests(parent=self), verdict.hidden_tests(resources["nbgrader"]["assignment"])
        for cell in nb.cells:  # autograding put the source's test cells back: their markers pair up
            meta = cell.get("metadata", {}).get("nbgrader") or {}
            if cell.cell_type == "code" and meta.get("grade") and meta.get("grade_id") in hidden:
                clear.preprocess_cell(cell, resources, 0)
        nb.metadata.pop("celltoolbar", None)
        return nb, resources


class SanitizeFeedback(SanitizeHTML):
    """nbconvert's SanitizeHTML with the tags above, plus the page's CSS. Run it last: nbconvert's
    CSS step replaces what came before it."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off by default
    tags = List(Unicode(), default_value=TAGS).tag(config=True)
    attributes = Any(default_value=ATTRIBUTES).tag(config=True)

    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        resources.setdefault("inlining", {}).setdefault("css", []).append(CSS)
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "markdown":
            return cell, resources  # sanitised once rendered: FeedbackExporter.markdown2html
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and "grade_id" in meta:
            # nbgrader's template writes grade ids into HTML attributes unescaped.
            meta["grade_id"] = html.escape(str(meta["grade_id"]))
        # The kernel sends these; the templates print them unescaped or load them as image URLs.
        for node in [cell, *cell.get("outputs", [])]:
            if not isinstance(node.get("execution_count", 0), int):
                node["execution_count"] = None
            if isinstance(node.get("metadata"), dict):
                node["metadata"].pop("filenames", None)
        return super().preprocess_cell(cell, resources, cell_index)


class CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates, kept for the life of the grading process. nbgrader makes a new
    exporter, so a new Jinja environment, for every submission, which compiled the same templates
    again (about 0.1 core-s a page). Jinja checks each entry against its template's source."""

    compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.compiled[bucket.key] = bucket.bytecode_to_string()


READABLE_CSS = TEMPLATES / "ch4_feedback" / "readable.css"


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback page with all rendered markdown sanitised, MathJax served locally, and
    text sized for a laptop's screen (READABLE_CSS, in the page's head)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        page, resources = super().from_notebook_node(nb, resources, **kw)
        style = f"<style>\n{READABLE_CSS.read_text(encoding='utf-8')}</style>\n"
        return page.replace("</head>", style + "</head>", 1), resources

    @pass_context
    def markdown2html(self, context, source):
        return SanitizeFeedback(parent=self).sanitize_html_tags(super().markdown2html(context, source))

    def _create_environment(self):
        environment = super()._create_environment()
        # For templates/ch4_feedback/mathjax.html.j2, which nbgrader's template calls without a URL.
        environment.globals["mathjax_url"] = self.mathjax_url
        environment.bytecode_cache = CompiledTemplates()
        return environment


def configure(config) -> None:
    """Point nbgrader's GenerateFeedback at the exporter, template and MathJax above."""
    nbgrader_templates = (
        Path(importlib.util.find_spec("nbgrader").origin).parent / "server_extensions/formgrader/templates"
    )
    config.GenerateFeedback.exporter_class = FeedbackExporter
    # nbgrader sets HTMLExporter.template_name = "feedback" on every call; ours extends it.
    config.FeedbackExporter.template_name = "ch4_feedback"
    config.FeedbackExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates)]
    config.FeedbackExporter.mathjax_url = MATHJAX_URL
    config.FeedbackExporter.exclude_anchor_links = True  # their "¶" links would lose their class


def copy_mathjax(feedback_root: Path) -> None:
    """MathJax beside the pages, once per OUT folder (about 12 MB)."""
    target = feedback_root / MATHJAX_DIR
    if not (target / "MathJax.js").exists():
        package = Path(importlib.util.find_spec("jupyter_server_mathjax").origin).parent
        shutil.copytree(package / "static", target, dirs_exist_ok=True)
