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
* Math is MathML, written when the page is made (latex2mathml), which browsers render natively:
  a page needs no script and no file beside it, so it reads the same copied alone into an
  e-mail or a learning platform, offline. The MathML is sanitised like the rest (MATHML_TAGS:
  no link, style or colour), and a formula the converter cannot read is shown as typed.
* The page's labels are Chinese, like everything else the student reads on it (template
  `ch4_feedback`, which extends nbgrader's `feedback`).
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

import bleach
import jinja2
import jinja2.bccache
import latex2mathml.converter
from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.v4 import new_output
from traitlets import Any, Bool, List, Unicode

GRADER_OUTPUT = "ch4_grader"  # output metadata: written by the grader, not by the student's code

TEMPLATES = Path(__file__).parent.parent / "templates"

# Long verdict lines and student output wrap instead of widening the page.
CSS = """
div.output_area pre, div.output_subarea pre, div.input_area pre {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
"""

# The MathML that latex2mathml writes, and the attributes that only lay it out: no href, style,
# mathcolor or mathbackground, which \href, \style and \color in a student's TeX would set.
MATHML_TAGS = (
    *("math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot", "mstyle"),
    *("msub", "msup", "msubsup", "mover", "munder", "munderover", "mmultiscripts", "mprescripts", "none"),
    *("mtable", "mtr", "mtd", "mpadded", "mphantom", "menclose"),
)
MATHML_ATTRIBUTES = {
    *("display", "mathvariant", "mathsize", "displaystyle", "scriptlevel", "stretchy", "fence", "form"),
    *("separator", "accent", "accentunder", "largeop", "movablelimits", "minsize", "maxsize", "lspace"),
    *("rspace", "width", "height", "depth", "voffset", "linethickness", "notation", "columnalign"),
    *("columnspacing", "rowspacing", "columnlines", "rowlines", "frame"),
}
# What student HTML and rendered markdown may keep: plain formatting and MathML, no attributes but
# links and the MathML's layout.
TAGS = [
    *sorted(bleach.ALLOWED_TAGS),  # nbconvert's default: a, b, code, em, li, ...
    *("p", "br", "hr", "pre", "span", "div", "del", "sub", "sup", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("table", "thead", "tbody", "tr", "th", "td"),
    *MATHML_TAGS,
]
LINK_TARGETS = ("#", "https://", "http://")  # where a page's links may go: itself, or the web
MAX_TEX_CHARS = 2_000  # a longer formula is shown as typed: converting megabytes would stall the page


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    """A link keeps its target only when it resolves wherever the page is read (OUT/feedback/ for
    the instructor, the student's own feedback folder after release_feedback): a statement's
    relative link to a chapter notebook (`../../notebooks/4.10a_….ipynb#…`) keeps its text, which
    names the notebook and the section, and loses the target, which would lead nowhere."""
    if tag in MATHML_TAGS:
        return name in MATHML_ATTRIBUTES
    if name == "title":
        return tag in ("a", "abbr", "acronym")
    return tag == "a" and name == "href" and value.startswith(LINK_TARGETS)


ATTRIBUTES = _allowed_attribute


# ---------------------------------------------------------------------------------------------
# Math as MathML

# What latex2mathml leaves as written inside a token (`\big\|` gives <mo>\|</mo>, `\texttt{a\_b}`
# gives <mtext>a\_b</mtext>, `\arg` gives <mi>\arg</mi>): the character or the name it stands for.
_LEFT_AS_WRITTEN = re.compile(r"\\(\||Vert|vert|langle|rangle|[A-Za-z]+|[_{}$%#&*,;:! ])")
_WRITTEN_AS = {"|": "\u2016", "Vert": "\u2016", "vert": "|", "langle": "\u27e8", "rangle": "\u27e9"}
_SPACES = {",": "\u2009", ";": "\u2005", ":": "\u2005", " ": "\u00a0", "!": ""}
# latex2mathml lays out `split` (aligned columns, no equation number) as a table, but writes the `&`
# of `aligned`, its usual spelling inside a formula, as a letter.
_ALIGNED = re.compile(r"\\(begin|end)\{aligned\}")


def _token_text(text: str) -> str:
    def plain(m: re.Match) -> str:
        name = m.group(1)
        return html.escape(_WRITTEN_AS.get(name) or _SPACES.get(name, name), quote=False)

    return _LEFT_AS_WRITTEN.sub(plain, text)


def tex_to_mathml(tex: str, display: bool) -> str:
    """One formula as sanitised MathML (`display`: a block of its own), or, when latex2mathml
    cannot read it or it is too long, as the TeX the student typed, in <code>."""
    if len(tex) <= MAX_TEX_CHARS:
        try:
            split = _ALIGNED.sub(r"\\\1{split}", tex)
            mathml = latex2mathml.converter.convert(split, display="block" if display else "inline")
        except Exception:  # noqa: BLE001 - the student's TeX: any error the converter raises means "as typed"
            pass
        else:
            mathml = re.sub(r">([^<]+)<", lambda m: f">{_token_text(m.group(1))}<", mathml)
            return bleach.clean(mathml, tags=MATHML_TAGS, attributes=ATTRIBUTES, strip=True)
    return f"<code>{html.escape(tex, quote=False)}</code>"


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with each formula written as MathML instead of left for MathJax."""

    def block_math(self, body: str) -> str:
        return tex_to_mathml(body, display=True)

    def inline_math(self, body: str) -> str:
        return tex_to_mathml(body, display=False)

    def latex_environment(self, name: str, body: str) -> str:
        return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)


_DELIMITED = re.compile(r"^\s*(\$\$|\$|\\\[|\\\()(.*?)(\$\$|\$|\\\]|\\\))\s*$", re.S)


def latex_output(text: str) -> str:
    """A text/latex output (IPython's Math, SymPy): `$…$`, `$$…$$`, `\\[…\\]`, `\\(…\\)` or an
    environment, as MathML (template ch4_feedback's data_latex)."""
    found = _DELIMITED.match(text)
    if found:
        return tex_to_mathml(found.group(2), display=found.group(1) in ("$$", "\\["))
    return tex_to_mathml(text.strip(), display=True)


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
    """nbgrader's feedback page with all rendered markdown sanitised, its maths as MathML, and
    text sized for a laptop's screen (READABLE_CSS, in the page's head)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        page, resources = super().from_notebook_node(nb, resources, **kw)
        style = f"<style>\n{READABLE_CSS.read_text(encoding='utf-8')}</style>\n"
        page = page.replace("<html>", '<html lang="zh-CN">', 1)  # nbgrader's template names no language
        return page.replace("</head>", style + "</head>", 1), resources

    @pass_context
    def markdown2html(self, context, source):
        """HTMLExporter.markdown2html with MathMLRenderer, then sanitised."""
        cell = context.get("cell", {})
        renderer = MathMLRenderer(
            escape=False,
            attachments=cell.get("attachments", {}),
            embed_images=self.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        return SanitizeFeedback(parent=self).sanitize_html_tags(MarkdownWithMath(renderer=renderer).render(source))

    def default_filters(self):
        yield from super().default_filters()
        yield ("latex_output", latex_output)  # templates/ch4_feedback: a text/latex output as MathML

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = CompiledTemplates()
        return environment


def configure(config) -> None:
    """Point nbgrader's GenerateFeedback at the exporter and template above."""
    nbgrader_templates = (
        Path(importlib.util.find_spec("nbgrader").origin).parent / "server_extensions/formgrader/templates"
    )
    config.GenerateFeedback.exporter_class = FeedbackExporter
    # nbgrader sets HTMLExporter.template_name = "feedback" on every call; ours extends it.
    config.FeedbackExporter.template_name = "ch4_feedback"
    config.FeedbackExporter.template_file = "page.html.j2"  # nbgrader's index.html.j2 with Chinese labels
    config.FeedbackExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates)]
    config.FeedbackExporter.exclude_anchor_links = True  # their "¶" links would lose their class
