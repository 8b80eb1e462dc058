"""The feedback pages: what a student's notebook may put in them, and how they read offline.

Everything in a submission's outputs and markdown is written by the student, and the page that
shows it is opened by an instructor. So:

* Outputs are capped while the kernel runs (`OutputCap`, mixed into nbgrader's Execute step):
  every MIME entry, stream text and traceback at `MAX_OUTPUT_CHARS`, every cell at `MAX_OUTPUTS`
  outputs and `MAX_CELL_CHARS` characters. The autograded notebook is capped before nbgrader
  stores it. A test cell's exported programs (`ch4protocol.MIME`) pass unchanged, one per cell
  of at most `MAX_PROGRAMS_CHARS`: a further or larger one keeps only a stub, which the grader
  reads as repeated or malformed (grader/judging/verdict.py).
* The page is sanitised with nbconvert's own `SanitizeHTML` (bleach): HTML and markdown outputs
  keep plain formatting tags only (no script, event handler, style, class or `javascript:`
  link), other active MIME types are dropped. Markdown cells are sanitised after they are
  rendered (`FeedbackExporter.markdown2html`), since markdown link syntax makes `javascript:`
  links that no source-level cleaning sees.
* Math renders offline: MathJax 2 from the `jupyter-server-mathjax` package is copied once into
  OUT/feedback/_mathjax and every page loads it by a relative URL (template `ch4_feedback`).
"""

from __future__ import annotations

import copy
import html
import importlib.util
import json
import shutil
from pathlib import Path

import bleach
import jinja2
import jinja2.bccache
from ch4protocol import MIME as EVIDENCE_MIME
from jinja2 import pass_context
from nbclient.exceptions import CellTimeoutError
from nbclient.util import ensure_async, run_sync
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Any, Bool, List, Unicode

MAX_OUTPUT_CHARS = 100_000  # one MIME entry, stream text or traceback
MAX_OUTPUTS = 1000  # outputs of one cell: a flood of tiny outputs stops here
MAX_CELL_CHARS = 2_000_000  # all outputs of one cell together
GRADER_OUTPUT = "ch4_grader"  # output metadata: written by the grader, not by the student's code
MARK = "…[输出过"  # starts every note below: how a capped output is recognised
TRIMMED = MARK + "长，已截断]"
DROPPED = MARK + "长（{mime}，{size} 字符），已删去]"
TOO_MANY = MARK + f"多（单个单元格超过 {MAX_OUTPUTS} 个输出或 {MAX_CELL_CHARS} 字符），其余已省略]"
OUTPUT_MESSAGES = {"stream", "display_data", "execute_result", "error", "update_display_data"}

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


def _size(value) -> int:
    return len(value) if isinstance(value, str) else len(json.dumps(value))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + "\n" + TRIMMED + "\n"


MAX_PROGRAMS_CHARS = 16 * 2**20  # one test's programs, base64: a few hundred kB on the reference
PROGRAMS_DROPPED = "（这一份导出的程序没有保留：一个单元格只保留一份，且不超过大小上限）"


def _stub_programs(out: dict) -> None:
    """Keep a small mark of a programs output that is not kept, so the grader still sees it."""
    out["data"] = {EVIDENCE_MIME: {"dropped": True}, "text/plain": PROGRAMS_DROPPED}
    out["metadata"] = {}


def cap_output(out: dict) -> bool:
    """Cap one output in place: an nbformat output or a kernel message's content (they share
    the keys). Plain text is cut; any other over-size MIME entry is dropped and named in the
    text/plain entry. True if anything was capped; evidence outputs are never touched."""
    if _is_evidence(out):
        return False
    data = out.get("data")
    capped = False
    if isinstance(out.get("text"), str) and len(out["text"]) > MAX_OUTPUT_CHARS:
        out["text"], capped = _cut(out["text"]), True
    if isinstance(data, dict):
        dropped = [(mime, _size(v)) for mime, v in data.items() if mime != "text/plain" and _size(v) > MAX_OUTPUT_CHARS]
        for mime, _ in dropped:
            del data[mime]
        plain = data.get("text/plain", "")
        if dropped or _size(plain) > MAX_OUTPUT_CHARS:
            plain = _cut(plain if isinstance(plain, str) else json.dumps(plain))
            notes = [DROPPED.format(mime=mime, size=size) for mime, size in dropped]
            data["text/plain"] = "\n".join([plain, *notes] if plain else notes)
            capped = True
    if _size(out.get("metadata", {})) > MAX_OUTPUT_CHARS:
        out["metadata"], capped = {}, True
    for key in ("ename", "evalue"):
        if isinstance(out.get(key), str) and len(out[key]) > MAX_OUTPUT_CHARS:
            out[key], capped = _cut(out[key]), True
    traceback = out.get("traceback")
    if isinstance(traceback, list) and sum(_size(line) for line in traceback) > MAX_OUTPUT_CHARS:
        kept, budget = [], MAX_OUTPUT_CHARS
        for line in map(str, traceback):
            kept.append(line[:budget])
            budget -= len(kept[-1])
            if budget <= 0:
                break
        out["traceback"], capped = [*kept, TRIMMED], True
    return capped


def is_capped(out: dict) -> bool:
    """Whether an output carries one of the notes above (for the grader's notes)."""
    texts = [out.get("text"), out.get("data", {}).get("text/plain"), *(out.get("traceback") or [])[-1:]]
    return any(isinstance(text, str) and MARK in text for text in texts)


def _is_evidence(out: dict) -> bool:
    return isinstance(out.get("data"), dict) and EVIDENCE_MIME in out["data"]


def _output_size(out: dict) -> int:
    data = out.get("data") or {}
    return _size(out.get("text", "")) + sum(map(_size, data.values())) + sum(map(_size, out.get("traceback", [])))


KERNEL_RESTARTED = "中断停不下这个单元格：内核已重启"  # the error a stuck cell keeps (RestartStuckKernel)


def _is_full_note(out: dict) -> bool:
    return out.get("text") == TOO_MANY + "\n"


def cell_is_full(outputs: list) -> bool:
    """A cell takes no more outputs once it has MAX_OUTPUTS or MAX_CELL_CHARS of them (evidence
    not counted)."""
    if len(outputs) >= MAX_OUTPUTS or (outputs and _is_full_note(outputs[-1])):
        return True
    return sum(_output_size(o) for o in outputs if not _is_evidence(o)) >= MAX_CELL_CHARS


class OutputCap:
    """Mixin for nbclient's NotebookClient (nbgrader's Execute): caps each output as its kernel
    message arrives, so no uncapped output is kept while the notebook runs or when it is stored."""

    def process_message(self, msg, cell, cell_index):
        content = msg.get("content")
        if msg.get("msg_type") in OUTPUT_MESSAGES and isinstance(content, dict) and _is_evidence(content):
            kept = [o for o in cell.outputs if _is_evidence(o)]
            if kept and len(cell.outputs) >= MAX_OUTPUTS:
                return None  # a flood: the stubs already say there was more than one
            if kept or _size(content["data"][EVIDENCE_MIME]) > MAX_PROGRAMS_CHARS:
                _stub_programs(content)
        elif msg.get("msg_type") in OUTPUT_MESSAGES and isinstance(content, dict):
            if msg["msg_type"] != "update_display_data" and cell_is_full(cell.outputs):
                if not (cell.outputs and _is_full_note(cell.outputs[-1])):
                    cell.outputs.append(new_output("stream", name="stderr", text=TOO_MANY + "\n"))
                return None
            cap_output(content)
        return super().process_message(msg, cell, cell_index)

    def on_cell_executed(self, **kwargs):
        # nbgrader adds the reply's error here when no error output arrived: cap that one too.
        super().on_cell_executed(**kwargs)
        for out in kwargs["cell"].get("outputs", []):
            cap_output(out)


class RestartStuckKernel:
    """Mixin for nbgrader's Execute: a cell past its time limit is interrupted; one stuck where
    Python cannot be interrupted (a C loop, such as a regular expression that backtracks without
    end) never answers, and nbclient then fails the whole notebook ("Timeout waiting for IOPub
    output": 0 points). Restart the kernel instead, run the code cells before it again (not the
    test cells: their programs are already out; not a cell that was stuck), and go on: the cell
    keeps a time-out error that says so."""

    def preprocess_cell(self, cell, resources, index):
        try:
            return super().preprocess_cell(cell, resources, index)
        except CellTimeoutError as err:
            if "IOPub" not in str(err):
                raise
        run_sync(self._restart_and_replay)(index)
        cell.outputs.append(new_output("error", ename="CellTimeoutError", evalue=KERNEL_RESTARTED, traceback=[]))
        return cell, self.resources

    async def _restart_and_replay(self, index: int) -> None:
        await ensure_async(self.km.restart_kernel(now=True))
        await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        for earlier, cell in enumerate(self.nb.cells[:index]):
            test = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade")
            stuck = any(out.get("evalue") == KERNEL_RESTARTED for out in cell.get("outputs", []))
            if cell.cell_type == "code" and not test and not stuck:
                try:
                    await self.async_execute_cell(copy.deepcopy(cell), earlier, store_history=False)
                except CellTimeoutError:
                    return  # stuck again: the cells after it run in what there is


class CappedExecute(RestartStuckKernel, OutputCap, Execute):
    """nbgrader's Execute step with the output caps (the unsandboxed path)."""


def autograde_preprocessors(execute=CappedExecute) -> list:
    """nbgrader's autograde steps with `execute` (capped, or sandboxed and capped) as Execute."""
    from nbgrader.converters import Autograde

    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    return [execute if step is Execute else step for step in steps]


# ---------------------------------------------------------------------------------------------
# The page


class HideHiddenTestOutput(Preprocessor):
    """The answer sees the inputs a hidden test calls it with, so nothing it produced while a
    hidden test ran (or in a cell of its own after one) reaches the student's page: a hidden test
    keeps only the grader's evidence notice and its verdict (the last output, added by the
    grader), with a note. The autograded notebook keeps everything for the instructor."""

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
            elif not meta.get("locked"):  # a cell of the student's own after a hidden test
                cell.outputs = [note]
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


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback page with all rendered markdown sanitised and MathJax served locally."""

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
