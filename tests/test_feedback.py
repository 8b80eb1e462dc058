"""The feedback pages (grader/output/feedback.py): outputs capped while the kernel runs
(grader/kernels/execute.py), nothing the student wrote live in the page, maths as MathML that
renders with the page alone, labels in Chinese.

Unit tests first; then the pages of the demo run (`demo_run`, tests/demo_run.py: graded once per
run, shared with the class report's tests and the self-proof): alice's reference and the page
attacker's submission, whose page Chromium opens copied alone into an empty folder, with the
network blocked.
"""

import base64
import copy
import html
import importlib.util
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import jinja2
import nbformat
import numpy as np
import pytest
from demo_run import BANNER, COPIED_IN, PAGE_ATTACKER, VERDICT, hostile_notebook, in_its_group
from helpers import chromium, only_requests_to
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from traitlets.config import Config

from grader import course
from grader.kernels import execute, manager
from grader.output import feedback

ASSIGNMENT = COPIED_IN  # the demo run's page attacker hands it in
LIMIT = execute.MAX_OUTPUT_CHARS
NOTE_ROOM = 200  # what a cap note adds to a capped entry


# ---------------------------------------------------------------------------------------------
# Output caps


def test_stream_text_is_cut():
    out = new_output("stream", name="stdout", text="x" * 3 * LIMIT)
    assert execute.cap_output(out) and execute.is_capped(out)
    assert len(out.text) < LIMIT + NOTE_ROOM and out.text.rstrip().endswith(execute.TRIMMED)


def test_plain_text_is_cut():
    out = new_output("execute_result", data={"text/plain": "p" * 3 * LIMIT}, execution_count=1)
    assert execute.cap_output(out) and execute.is_capped(out)
    assert len(out.data["text/plain"]) < LIMIT + NOTE_ROOM


@pytest.mark.parametrize(
    "mime, value",
    [
        ("text/html", "<p>" + "h" * LIMIT + "</p>"),
        ("image/png", base64.b64encode(b"\x89PNG" + b"\0" * LIMIT).decode()),
        ("application/json", {"blob": "j" * LIMIT}),
        ("text/latex", "$" + "x" * LIMIT + "$"),
    ],
)
def test_other_mime_entries_are_dropped_with_a_note(mime, value):
    out = new_output("display_data", data={mime: value, "text/plain": "<object>"})
    assert execute.cap_output(out) and execute.is_capped(out)
    assert mime not in out.data
    assert out.data["text/plain"].startswith("<object>") and mime in out.data["text/plain"]


def test_error_traceback_and_message_are_cut():
    huge = "e" * 2 * LIMIT
    out = new_output("error", ename="ValueError", evalue=huge, traceback=["frame\n"] * 100 + [huge])
    assert execute.cap_output(out) and execute.is_capped(out)
    assert len(out.evalue) < LIMIT + NOTE_ROOM
    assert sum(map(len, out.traceback)) < LIMIT + NOTE_ROOM and out.traceback[0] == "frame\n"


def test_metadata_is_capped():
    out = new_output("display_data", data={"text/plain": "x"}, metadata={"junk": "m" * 2 * LIMIT})
    assert execute.cap_output(out) and out.metadata == {}


def test_small_outputs_are_untouched():
    outputs = [
        new_output("stream", name="stdout", text="hello\n"),
        new_output("display_data", data={"text/html": "<b>hi</b>", "text/plain": "hi", "image/png": "iVBORw0KGgo="}),
        new_output("error", ename="KeyError", evalue="k", traceback=["KeyError: k"]),
    ]
    before = copy.deepcopy(outputs)
    assert not any(execute.cap_output(out) for out in outputs)
    assert outputs == before and not any(map(execute.is_capped, outputs))


def test_exported_programs_pass_unchanged():
    payload = {"test": "test_x", "programs": {"f": {"program": "v" * 3_000_000}}}
    out = new_output("display_data", data={execute.EVIDENCE_MIME: payload, "text/plain": "t" * 3 * LIMIT})
    before = copy.deepcopy(out)
    assert not execute.cap_output(out) and out == before


def _client():
    """nbgrader's Execute step with the caps, fed kernel messages by hand (no kernel)."""
    nb = new_notebook(cells=[new_code_cell("pass")])
    client = execute.CappedExecute()
    client.nb = nb
    client.reset_execution_trackers()
    client.clear_before_next_output = False  # set by nbclient when a cell starts
    return client, nb.cells[0]


def _message(msg_type, content):
    header = {"msg_type": msg_type}
    return {"msg_type": msg_type, "header": header, "parent_header": {"msg_id": "m"}, "content": content}


def test_outputs_are_capped_as_they_arrive():
    client, cell = _client()
    client.process_message(_message("stream", {"name": "stdout", "text": "x" * 3 * LIMIT}), cell, 0)
    client.process_message(_message("display_data", {"data": {"text/html": "h" * 2 * LIMIT}, "metadata": {}}), cell, 0)
    assert len(cell.outputs) == 2 and all(map(execute.is_capped, cell.outputs))
    assert "text/html" not in cell.outputs[1].data


def test_the_number_of_outputs_per_cell_is_capped_but_exported_programs_still_arrive():
    client, cell = _client()
    for _ in range(execute.MAX_OUTPUTS + 500):
        client.process_message(_message("stream", {"name": "stdout", "text": "a\n"}), cell, 0)
    payload = {"test": "test_x", "programs": {"f": {"program": "v"}}}
    programs = _message("display_data", {"data": {execute.EVIDENCE_MIME: payload}, "metadata": {}})
    client.process_message(programs, cell, 0)
    assert len(cell.outputs) == execute.MAX_OUTPUTS + 2
    assert execute.is_capped(cell.outputs[-2]) and cell.outputs[-1].data[execute.EVIDENCE_MIME] == payload


def test_a_flood_of_exported_programs_stops_at_the_cells_caps():
    from grader.judging import verdict

    client, cell = _client()
    payload = {"test": "test_x", "programs": {"f": {"program": "v" * 100_000}}}
    for _ in range(execute.MAX_OUTPUTS + 10):
        message = _message("display_data", {"data": {execute.EVIDENCE_MIME: payload}, "metadata": {}})
        client.process_message(message, cell, 0)
    assert len(cell.outputs) <= execute.MAX_OUTPUTS + 1
    assert sum(len(json.dumps(o.get("data", {}))) for o in cell.outputs) <= verdict.MAX_PAYLOAD_CHARS


def test_the_volume_of_outputs_per_cell_is_capped():
    client, cell = _client()
    for _ in range(3 * execute.MAX_CELL_CHARS // LIMIT):
        client.process_message(_message("stream", {"name": "stdout", "text": "y" * LIMIT}), cell, 0)
    assert sum(len(out.text) for out in cell.outputs) < execute.MAX_CELL_CHARS + LIMIT + NOTE_ROOM
    assert execute.is_capped(cell.outputs[-1])


def test_both_execute_steps_cap():
    assert execute.CappedExecute in execute.autograde_preprocessors()  # unsandboxed
    assert issubclass(manager.SandboxExecute, execute.OutputCap)


# ---------------------------------------------------------------------------------------------
# Sanitising


class _Live(HTMLParser):
    """The elements and attributes a browser would build from a page (escaped text is not one)."""

    def __init__(self, page: str):
        super().__init__()
        self.elements = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))


def _assert_nothing_live(page: str) -> None:
    elements = _Live(page).elements
    scripts = [attrs for tag, attrs in elements if tag == "script"]
    assert not scripts, f"a page needs no script (its maths is MathML): {scripts}"
    attributes = [(tag, name, value or "") for tag, attrs in elements for name, value in attrs.items()]
    assert not [a for a in attributes if a[1].startswith("on")], "event handler attributes"
    assert not [a for a in attributes if a[2].strip().lower().startswith("javascript:")], "javascript: links"
    assert not [a for a in attributes if "#0a0" in a[2] or "alert-success" in a[2]], "the banner's styling"
    assert not [a for a in attributes if a[0] == "img" and a[1] == "src" and not a[2].startswith("data:")]
    mathml = [a for a in attributes if a[0] in feedback.MATHML_TAGS]
    assert not [a for a in mathml if a[1] not in feedback.MATHML_ATTRIBUTES], "MathML keeps a link, style or colour"


def test_sanitising_outputs_removes_script_handlers_links_and_styling():
    nb = hostile_notebook()
    feedback.SanitizeFeedback().preprocess(nb, {})
    outputs = nb.cells[1].outputs
    elements = _Live(outputs[0].data["text/html"]).elements
    assert [tag for tag, _ in elements] == ["div", "a"] and all(not attrs for _, attrs in elements)
    assert BANNER in outputs[0].data["text/html"]
    assert "application/javascript" not in outputs[1].data
    assert outputs[2].text == VERDICT


def _page(nb) -> str:
    """A feedback page as nbgrader's GenerateFeedback makes it, without a gradebook."""
    config = Config()
    feedback.configure(config)
    nbgrader = Path(importlib.util.find_spec("nbgrader").origin).parent
    config.HTMLExporter.extra_template_paths = [  # what GenerateFeedback adds: nbgrader's bootstrap.css
        str(nbgrader / "server_extensions/formgrader/static/node_modules/bootstrap/dist/css")
    ]
    exporter = feedback.FeedbackExporter(config=config)
    exporter.register_preprocessor(feedback.SanitizeFeedback)
    resources = {"nbgrader": {"notebook": "t", "score": 1, "max_score": 1, "late_penalty": 0}}
    return exporter.from_notebook_node(nb, resources=resources)[0]


# TeX a student could write to reach beyond the formula: a link, styling, colour, markup in \text.
HOSTILE_TEX = (
    r"$\href{javascript:alert('tex')}{x} + \style{background:#0a0}{y} + \color{#0a0}{z}"
    r" + \text{<img src=x onerror=alert('tex')>}$"
)


def _hostile_notebook_with_tex():
    nb = hostile_notebook()
    nb.cells.insert(1, new_markdown_cell(f"用户的公式：{HOSTILE_TEX}"))
    return nb


def test_page_has_nothing_live_from_the_student_and_keeps_the_verdict():
    page = _page(_hostile_notebook_with_tex())
    _assert_nothing_live(page)
    assert VERDICT.strip() in page and BANNER in page
    assert re.search(r"<math[^>]*><mrow><msup><mi>x</mi><mn>2</mn></msup><mo>&lt;</mo><mi>y</mi>", page), "x^2 < y"
    assert "$x^2" not in page and "\\href" not in page
    assert "overflow-wrap: anywhere" in page and "white-space: pre-wrap" in page
    assert "cdnjs" not in page and "MathJax" not in page


def _formulas(source: str) -> list[tuple[str, bool]]:
    """The formulas nbconvert's markdown parser finds in `source`: (TeX, display)."""
    found = []

    class Recorder(IPythonRenderer):
        def block_math(self, body):
            found.append((body, True))
            return ""

        def inline_math(self, body):
            found.append((body, False))
            return ""

        def latex_environment(self, name, body):
            found.append((f"\\begin{{{name}}}{body}\\end{{{name}}}", True))
            return ""

    MarkdownWithMath(renderer=Recorder(escape=False)).render(source)
    return found


def test_every_formula_of_every_statement_becomes_mathml_with_no_tex_left():
    r"""What the statements write (\operatorname, \big\|, \texttt{a\_b}, aligned environments...)
    all converts, and no command is left in the text a reader sees."""
    checked = 0
    for assignment in course.ASSIGNMENTS:
        nb = nbformat.read(course.notebook_path(course.EXERCISES, assignment), as_version=4)
        for tex, display in [f for cell in nb.cells if cell.cell_type == "markdown" for f in _formulas(cell.source)]:
            mathml = feedback.tex_to_mathml(tex, display)
            assert mathml.startswith(f'<math display="{"block" if display else "inline"}">'), (assignment, tex, mathml)
            text = html.unescape(re.sub(r"<[^>]+>", "", mathml))
            assert "\\" not in text, f"{assignment}: TeX left in {tex!r}: {text!r}"
            checked += 1
    assert checked >= 200, checked


def test_tex_the_converter_cannot_read_or_too_long_is_shown_as_typed():
    for tex in (r"x^", r"\frac", r"\left( x", r"\begin{aligned} a", r"x_1_2 < y"):  # each raises in latex2mathml
        assert feedback.tex_to_mathml(tex, False) == f"<code>{html.escape(tex, quote=False)}</code>"
    huge = "x+" * feedback.MAX_TEX_CHARS + "<b>"
    assert feedback.tex_to_mathml(huge, True) == f"<code>{html.escape(huge, quote=False)}</code>"


def test_hostile_tex_keeps_only_the_formula():
    mathml = feedback.tex_to_mathml(HOSTILE_TEX.strip("$"), False)
    elements = _Live(mathml).elements
    assert {tag for tag, _ in elements} <= set(feedback.MATHML_TAGS), elements
    assert all(set(attrs) <= feedback.MATHML_ATTRIBUTES for _, attrs in elements), elements
    assert "img" not in mathml and "onerror" not in mathml and "0a0" not in mathml


def test_latex_outputs_are_mathml_too():
    """IPython's Math or SymPy in the student's own cells: text/latex outputs, in one page."""
    aligned = "\\begin{aligned}a &= b \\\\ c &= d\\end{aligned}"
    shown = {"$$\\frac{a}{b}$$": "block", "$\\sqrt{x}$": "inline", aligned: "block"}
    code = new_code_cell("Math(...)")
    code.outputs = [new_output("display_data", data={"text/latex": tex, "text/plain": "<Math>"}) for tex in shown]
    page = _page(new_notebook(cells=[code]))
    _assert_nothing_live(page)
    found = re.findall(r'<div class="output_latex[^"]*">\s*<math display="(\w+)">(.*?)</math>', page, re.S)
    assert [display for display, _ in found] == list(shown.values()), found
    assert "<mfrac>" in found[0][1] and "<msqrt>" in found[1][1], found
    assert found[2][1].count("<mtr>") == 2 and "&amp;" not in found[2][1] and "(1)" not in found[2][1], found[2]


def test_the_labels_are_chinese():
    """nbgrader's template writes "Test cell (Score: 1.0 / 1.0)", "(Top)", "Student's answer"."""
    from proof import answers

    nb = answers.release_notebook(ASSIGNMENT)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            meta["score"] = meta["points"]
        if meta.get("solution"):
            meta["comment"] = "写得清楚"
    page = _page(nb)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page[page.index("<body") :]))
    english = ["Test cell", "Score", "Top", "Student's answer", "Comments", "Grade cell", "Coding free-response"]
    assert not [label for label in english if label in text], [label for label in english if label in text]
    assert "（得分：1 / 1）" in text and "回到顶部" in text and "你的作答" in text and "评语：" in text
    assert '<html lang="zh-CN">' in page


def test_nothing_printed_in_or_after_a_hidden_test_reaches_the_page_the_locked_summary_neither():
    """The summary cell is locked and comes after the hidden tests; in a graded kernel it prints
    nothing (kit/ch4check.report_tests), so whatever it shows there came from the answer's own
    code (a hook that prints before every cell): it gets the note, like a cell of the student's."""
    from grader import messages
    from grader.judging import verdict
    from proof import answers

    nb = answers.release_notebook("residuals")
    hidden = verdict.hidden_tests("residuals")
    printed = new_output("stream", name="stdout", text="LEAKED\n")
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    assert ids[-1] == "summary" and hidden and all(ids.index(h) < len(ids) - 1 for h in hidden), ids
    verdict_line = new_output("stream", name="stdout", text="verdict\n")  # what the grader adds last
    for cell in nb.cells:
        if cell.cell_type == "code":
            test = cell.metadata["nbgrader"]["grade_id"]
            cell.outputs = [copy.deepcopy(printed)] + ([copy.deepcopy(verdict_line)] if test in hidden else [])
    feedback.HideHiddenTestOutput().preprocess(nb, {"nbgrader": {"assignment": "residuals"}})
    shown = {
        c.metadata["nbgrader"]["grade_id"]: "".join(o["text"] for o in c.outputs) for c in nb.cells if "outputs" in c
    }
    assert shown.pop("summary") == messages.HIDDEN_OUTPUT_DROPPED + "\n"
    for test in hidden:
        assert shown.pop(test) == messages.HIDDEN_OUTPUT_DROPPED + "\nverdict\n", test
    assert set(shown.values()) == {"LEAKED\n"}, "a cell before the hidden tests lost its output"


def test_an_answer_stopped_at_the_cell_timeout_gets_one_note(tmp_path):
    """nbclient interrupts the kernel at the per-cell timeout: the answer cell keeps the interrupt's
    KeyboardInterrupt and nbgrader's CellTimeoutError. The notes said both ("作答区运行时报错：
    KeyboardInterrupt: ; 单元格 answer 超过 60 秒未结束"); the interrupt is the grader's own."""
    from grader import messages
    from grader.pipeline import worker

    def notes(*enames):
        answer = new_code_cell("while True: pass", metadata={"nbgrader": {"solution": True, "grade_id": "answer"}})
        answer.outputs = [new_output("error", ename=e, evalue="", traceback=[]) for e in enames]
        path = tmp_path / f"{'-'.join(enames)}.ipynb"
        nbformat.write(new_notebook(cells=[answer]), path)
        return worker.review_autograded(path, 60)

    assert notes("KeyboardInterrupt", "CellTimeoutError") == [messages.cell_timed_out("answer", 60)]
    raised = [messages.answer_raised("KeyboardInterrupt", "")]  # raised by the answer itself: said as such
    assert notes("KeyboardInterrupt") == raised


def test_an_error_quoting_an_array_is_one_line_without_numpys_padding():
    from grader import messages

    value = f"shapes differ: {np.array([0.0, 0.0, 0.04, 0.119202922, 1.5, 2.25, 3.125, 4.0625, 5.03125])}"
    assert "\n" in value and "     " in value  # NumPy's str(): padded to the widest, wrapped at 75
    note = messages.answer_raised("ValueError", value)
    folded = "[0. 0. 0.04 0.11920292 1.5 2.25 3.125 4.0625 5.03125 ]"
    assert note == f"作答区运行时报错：ValueError: shapes differ: {folded}", note


# Font sizes in CSS pixels where a student reads a page: the statement and notes, the code, its outputs.
FONT_SIZES = """() => Object.fromEntries([
  ['prose', 'div.text_cell_render p'], ['code', 'div.input_area pre'], ['output', 'div.output_area pre'],
].map(([what, selector]) => [what, [...document.querySelectorAll(selector)]
  .map(e => parseFloat(getComputedStyle(e).fontSize))]))"""
MIN_PX = {"prose": 16, "code": 15, "output": 15}


def test_a_page_reads_at_a_laptops_size(tmp_path):
    """nbgrader's page sets 14 px text and 13 px code; on a laptop's screen (1366 x 768) the
    student reads prose at 16 px or more, code and outputs at 15 px or more."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    path = tmp_path / "page.html"
    path.write_text(_page(hostile_notebook()), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.route("**/*", only_requests_to("file://", []))
            page.goto(path.as_uri())
            sizes = page.evaluate(FONT_SIZES)
        finally:
            browser.close()
    for what, least in MIN_PX.items():
        assert sizes[what] and min(sizes[what]) >= least, f"{what}: {sorted(set(sizes[what]))} px, want >= {least}"


def test_a_second_page_compiles_no_template_and_is_the_same(monkeypatch):
    """nbgrader makes a new exporter for every submission; Jinja's compiled templates outlive it."""
    nb = hostile_notebook()
    first = _page(copy.deepcopy(nb))
    compiled = []
    original = jinja2.Environment.compile
    monkeypatch.setattr(
        jinja2.Environment, "compile", lambda env, *a, **k: compiled.append(a) or original(env, *a, **k)
    )
    assert _page(nb) == first
    assert not compiled, f"compiled again: {[str(a[1]) for a in compiled]}"


# ---------------------------------------------------------------------------------------------
# One real grading run


@pytest.fixture(scope="module")
def graded(demo_run):
    """The demo run's outcomes ({student: its journal entry}) on ASSIGNMENT, and its OUT folder."""
    outcomes = {student: entry for (student, name), entry in demo_run.journal.items() if name == ASSIGNMENT}
    return outcomes, demo_run.out


def _feedback_page(out: Path, student: str) -> Path:
    return out / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"


@in_its_group
def test_reference_keeps_full_marks_and_hostile_one_is_graded(graded):
    outcomes, _ = graded
    reference, attacker = outcomes["alice"], outcomes[PAGE_ATTACKER]
    assert reference["graded"] and reference["score"] == reference["max_score"] >= 10
    assert attacker["graded"]
    assert any("输出过长" in n and "反馈中已截断" in n for n in attacker["notes"]), attacker["notes"]


@in_its_group
def test_autograded_notebook_is_capped(graded):
    _, out = graded
    path = course.notebook_path(out / "course" / "autograded" / PAGE_ATTACKER, ASSIGNMENT)
    assert path.stat().st_size < 1_000_000
    outputs = [o for cell in nbformat.read(path, as_version=4).cells for o in cell.get("outputs", [])]
    sizes = [len(o.get("text", "")) for o in outputs] + [sum(map(len, o.get("traceback", []))) for o in outputs]
    sizes += [len(v) for o in outputs for v in o.get("data", {}).values() if isinstance(v, str)]
    assert max(sizes) < LIMIT + NOTE_ROOM
    assert sum(map(execute.is_capped, outputs)) >= 3  # the print, the HTML, the error


@in_its_group
def test_feedback_page_has_nothing_live_from_the_student(graded, demo_run):
    _, out = graded
    page = _feedback_page(out, PAGE_ATTACKER).read_text(encoding="utf-8")
    _assert_nothing_live(page)
    assert "评分程序判定：✅ 通过" in page and "评分说明" in page  # our verdicts and notes
    shared = [p.name for p in (out / "feedback").iterdir() if p.name not in {who for who, _ in demo_run.journal}]
    assert not shared, f"OUT/feedback holds {shared} beside the students' folders: the pages need nothing beside them"


@in_its_group
def test_pages_show_the_export_note_and_the_verdict_not_the_programs(graded):
    """The worker reduces each exported-programs output to its one-line note: neither the
    autograded notebook nor a page keeps a program."""
    _, out = graded
    for student in ("alice", PAGE_ATTACKER):
        page = _feedback_page(out, student).read_text(encoding="utf-8")
        notes = re.findall(r"🔒 测试 (\w+)：导出的程序已交给评分程序", page)
        assert set(notes) >= {"test_visible_value_grad", "test_visible_residuals", "test_hidden_random"}, notes
        assert page.count("评分程序判定：✅ 通过") == 5 and execute.EVIDENCE_MIME not in page
        if student == "alice":  # the attacker's page holds its own long runs of x and y
            assert not re.search(r"[A-Za-z0-9+/]{200}", page), "a page holds a long base64 run (a program?)"
        path = course.notebook_path(out / "course" / "autograded" / student, ASSIGNMENT)
        outputs = [o for cell in nbformat.read(path, as_version=4).cells for o in cell.get("outputs", [])]
        assert not [o for o in outputs if execute.EVIDENCE_MIME in o.get("data", {})], "a program was kept"


@in_its_group
def test_every_link_of_a_feedback_page_resolves(graded):
    """Each link of a page leads somewhere from where it is read: an anchor of the page itself, the
    web, or a file beside it. The statement's link to the chapter notebook (relative to
    exercises/, not to OUT/feedback/) keeps its text and loses its target."""
    _, out = graded
    statement = course.notebook_path(course.EXERCISES, ASSIGNMENT).read_text(encoding="utf-8")
    assert "](../../notebooks/" in statement, "the statement no longer links a notebook: the test would check nothing"
    for student in ("alice", PAGE_ATTACKER):
        path = _feedback_page(out, student)
        page = path.read_text(encoding="utf-8")
        anchors = set(re.findall(r'\b(?:id|name)="([^"]+)"', page))
        targets = [html.unescape(t) for t in re.findall(r'<a\b[^>]*\bhref="([^"]*)"', page)]
        assert targets, "no link at all: the page changed shape"
        for target in targets:
            if target.startswith(("https://", "http://")):
                continue
            if target.startswith("#"):
                assert unquote(target[1:]) in anchors or target == "#", f"{student}: no anchor {target}"
            else:
                assert (path.parent / unquote(target.split("#")[0])).exists(), f"{student}: {target} leads nowhere"
        assert "4.10a 残差存什么" in page, "the link's text went with its target"


# Each formula's box in CSS pixels, and the page's text where a raw TeX formula would show.
TYPESET = """() => ({
  math: [...document.querySelectorAll('.text_cell_render math')].map(m => {
    const box = m.getBoundingClientRect();
    return {display: m.getAttribute('display'), width: box.width, height: box.height};
  }),
  text: document.body.innerText,
})"""


@in_its_group
def test_a_page_copied_alone_runs_no_student_code_and_typesets_its_maths_offline(graded, tmp_path):
    """The page attacker's page as an e-mail or a learning platform passes it on: alone in an empty
    folder, the network blocked. Its statement's formulas are MathML boxes of a formula's size
    (softplus's definition is a display formula of its own), no TeX shows, and nothing the
    student wrote runs."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    _, out = graded
    alone = tmp_path / "inbox" / "feedback.html"
    alone.parent.mkdir()
    shutil.copyfile(_feedback_page(out, PAGE_ATTACKER), alone)
    outside, dialogs = [], []

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1600})
            page.route("**/*", only_requests_to("file://", outside))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(alone.as_uri())
            typeset = page.evaluate(TYPESET)
            pwned = page.evaluate("window.__pwned || null")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            page.locator("math[display=block]").first.scroll_into_view_if_needed()
            page.screenshot(path=str(out / f"{PAGE_ATTACKER}-alone.png"))
        finally:
            browser.close()
    assert not dialogs and pwned is None, (dialogs, pwned)
    assert not outside, f"the page asked for {outside}"
    assert [p.name for p in alone.parent.iterdir()] == [alone.name], "opening the page wrote beside it"
    formulas = typeset["math"]
    blocks = [f for f in formulas if f["display"] == "block"]
    assert len(formulas) >= 20 and blocks, f"the statement's formulas are not MathML: {formulas}"
    assert all(f["width"] > 4 and 8 < f["height"] < 120 for f in formulas), f"a formula is not laid out: {formulas}"
    assert max(f["height"] for f in blocks) > 1.2 * min(f["height"] for f in formulas), "fractions set inline"
    for raw in ("$$", "\\operatorname", "\\frac", "\\log"):
        assert raw not in typeset["text"], f"raw TeX {raw!r} on the page"
    assert overflow <= 0, "long output lines do not wrap"


@in_its_group
def test_the_demo_class_answers_in_the_students_language(demo_run):
    """#45 item 13: a catalogue answer opens with an English docstring for maintainers (the
    requirement it breaks, the method it uses) and may carry `# hint:` lines; the demo's students
    hand in the same code without them (proof/demo.py: in_students_language), so every comment and
    docstring of an answer on their pages is Chinese, and the catalogue's sentence is on none."""
    import ast
    import io
    import tokenize

    from IPython.core.inputtransformer2 import TransformerManager

    from proof import answers, demo

    cjk = re.compile(r"[\u3400-\u9fff]")
    checked = 0
    for assignment in course.ASSIGNMENTS:
        for student, entry in {"alice": None, **demo.picks(assignment)}.items():
            page = (demo_run.out / "feedback" / student / assignment / f"{assignment}.html").read_text(encoding="utf-8")
            text = html.unescape(re.sub(r"<[^>]+>", "", page))
            if entry is not None:
                assert entry.claim not in text, f"{student}/{assignment}: the catalogue's docstring is on the page"
                assert answers.HINT not in text, f"{student}/{assignment}: a maintainer's hint is on the page"
            notebook = course.notebook_path(demo_run.out / "course" / "autograded" / student, assignment)
            answer = answers.answer_cell(nbformat.read(notebook, as_version=4)).source
            python = TransformerManager().transform_cell(answer)
            comments = [
                t.string for t in tokenize.generate_tokens(io.StringIO(python).readline) if t.type == tokenize.COMMENT
            ]
            docstrings = [
                ast.get_docstring(node, clean=False)
                for node in ast.walk(ast.parse(python))
                if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            ]
            english = [t for t in comments + [d for d in docstrings if d] if not cjk.search(t)]
            assert not english, f"{student}/{assignment} hands in English notes: {english}"
            checked += 1
    assert checked == len(course.ASSIGNMENTS) * 4
