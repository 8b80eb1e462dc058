"""The class report and the grades an LMS imports (#33), on the demo class graded once.

The session fixture `demo_run` (tests/demo_run.py) is one real `python -m grader grade` of the
demo class with students more (a disguised copy of alice's answer, a tampering attempt, a
hostile student id with a hostile error message, outputs that attack the feedback page, and more),
then `python -m grader report` on the same folder. Every expected number is computed here from
what the run left (the verdicts in the autograded notebooks, the gradebook rows, grades.csv),
never by the report's own code.
"""

import csv
import html
import json
import re
import shutil
import subprocess
import sys
import warnings
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from demo_run import (
    COPIED_IN,
    COPYCAT,
    EXTRA_COPY,
    FLAGGED,
    HOSTILE_ID,
    HOSTILE_MESSAGE,
    disguised,
    in_its_group,
)
from helpers import chromium, only_requests_to, score_table_line

from grader import REPO, course
from grader.output import classreport, classreport_page
from proof import answers

pytestmark = in_its_group  # the class is graded once, by one worker

DIFFERENT_CORRECT = ("alice", "dave", "grace")  # the reference, a right_* and a natural_* answer (demo_class)
VERDICT = re.compile(r"评分程序判定：(✅|❌) [^（]*（[^）]*）(?:：(.*))?\n\Z", re.S)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def assignment(report: dict, name: str) -> dict:
    return next(a for a in report["assignments"] if a["assignment"] == name)


def raw_id(cell: str) -> str:
    """A student id as grades.csv wrote it, back as the folder name (the quote neutralises a formula)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_START) else cell


def verdicts(out) -> dict:
    """{(student, assignment): {test: (passed, message)}} from the verdict each graded notebook
    carries under its test cells (the last output the grader wrote there)."""
    found = {}
    for path in sorted((out / "course" / "autograded").glob("*/*/*.ipynb")):
        student, name = path.parts[-3], path.parts[-2]
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            texts = [o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"]
            matched = VERDICT.match(texts[-1]) if cell.cell_type == "code" and meta.get("grade") and texts else None
            if matched:
                found.setdefault((student, name), {})[meta["grade_id"]] = (matched[1] == "✅", matched[2])
    return found


def points_of(name: str) -> dict:
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, name), as_version=4)
    cells = [c.metadata["nbgrader"] for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
    return {meta["grade_id"]: meta["points"] for meta in cells}


def test_every_run_writes_the_report_and_the_report_command_writes_the_same(demo_run):
    """The grading run wrote it in English, the report command again in Chinese: class.json, the
    numbers and the students' text, is the same in any language."""
    assert "class report:" in demo_run.done.stdout
    assert demo_run.again.returncode == 0, demo_run.again.stderr[-3000:]
    assert (demo_run.out / "report" / "class.json").read_text(encoding="utf-8") == demo_run.written
    shown = {a["assignment"] for a in demo_run.report["assignments"]}
    assert shown == {name for _, name in demo_run.long} == set(course.ASSIGNMENTS)
    assert not demo_run.report["skipped"]


def test_pass_rates_are_those_of_the_verdicts_and_the_gradebook(demo_run):
    judged = verdicts(demo_run.out)
    assert len(judged) >= 30, sorted(judged)  # the demo class: every readable hand-in was judged
    points = {name: points_of(name) for name in course.ASSIGNMENTS}
    for (student, name), tests in judged.items():
        rows = demo_run.gradebook[(student, name)]
        assert len(rows) == 1
        for test, (passed, _) in tests.items():
            assert (rows[0][test][0] == points[name][test]) == passed, (student, name, test)
    with open(demo_run.out / "report" / "tests.csv", encoding="utf-8", newline="") as handle:
        table = {(r["assignment"], r["test"]): r for r in csv.DictReader(handle)}
    for name in course.ASSIGNMENTS:
        for test in assignment(demo_run.report, name)["tests"]:
            outcomes = [tests[test["test"]][0] for (_, n), tests in judged.items() if n == name]
            passed, failed = outcomes.count(True), outcomes.count(False)
            assert (test["passed"], test["failed"]) == (passed, failed), (name, test["test"])
            assert test["pass_rate"] == pytest.approx(passed / (passed + failed), abs=1e-4)
            row = table[(name, test["test"])]
            assert (int(row["passed"]), int(row["failed"]), float(row["points"])) == (passed, failed, test["points"])
            assert float(row["pass_rate"]) == pytest.approx(passed / (passed + failed), abs=1e-3)
    rates = [t["pass_rate"] for t in assignment(demo_run.report, COPIED_IN)["tests"]]
    assert 0 < min(rates) < 1, rates  # the class really differs on some test


def test_the_most_common_messages_are_the_verdicts_grouped(demo_run):
    """Failures with the same message up to its numbers are one group: counted, one example shown."""
    judged = verdicts(demo_run.out)
    for name in course.ASSIGNMENTS:
        for test in assignment(demo_run.report, name)["tests"]:
            groups = {}
            for (student, n), tests in sorted(judged.items()):
                passed, message = tests[test["test"]] if n == name else (True, None)
                if not passed:
                    key = re.sub(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "#", message)
                    groups.setdefault(key, []).append((student, message))
            expected = sorted((len(g), [s for s, _ in g]) for g in groups.values())
            assert sorted((m["count"], m["students"]) for m in test["messages"]) == expected, (name, test["test"])
            for m in test["messages"]:
                assert m["example"] in {msg for g in groups.values() for s, msg in g if s in m["students"]}
    first = assignment(demo_run.report, COPIED_IN)["tests"][0]["messages"][0]  # nothing defined: bob and HOSTILE_ID
    assert first["count"] >= 2 and {"bob", HOSTILE_ID} <= set(first["students"]), first


def test_numbers_inside_a_message_do_not_split_its_group():
    failures = [("a", "n = 64 时余切 g = -1.75 不对"), ("b", "n = 8 时余切 g = 0.5 不对"), ("c", "没有找到 f")]
    assert classreport.common_messages(failures) == [
        {"count": 2, "example": "n = 64 时余切 g = -1.75 不对", "students": ["a", "b"]},
        {"count": 1, "example": "没有找到 f", "students": ["c"]},
    ]


def test_flagged_ungraded_and_zero_with_notes_need_a_person(demo_run):
    listed = {(p["student"], a["assignment"]) for a in demo_run.report["assignments"] for p in a["needs_person"]}
    flagged = {(raw_id(s), n) for (s, n), row in demo_run.long.items() if set(row["flags"].split()) - {"unsandboxed"}}
    assert (FLAGGED, COPIED_IN) in flagged and flagged <= listed, flagged
    first = course.ASSIGNMENTS[0]
    erin = next(p for p in assignment(demo_run.report, first)["needs_person"] if p["student"] == "erin")
    assert erin["why"] == ["ungraded"] and erin["notes"], erin  # a corrupted file: no score from nbgrader
    zeros = {(raw_id(s), n) for (s, n), row in demo_run.long.items() if float(row["score"]) == 0}
    assert ("bob", COPIED_IN) in zeros and ("bob", COPIED_IN) in listed and (HOSTILE_ID, COPIED_IN) in listed
    assert ("alice", COPIED_IN) not in listed


def test_a_copied_answer_is_listed_and_different_correct_answers_are_not(demo_run):
    pairs = {tuple(p["students"]): p["similarity"] for p in assignment(demo_run.report, COPIED_IN)["similar"]}
    assert pairs.get(("alice", COPYCAT), 0) >= classreport.SIMILAR_AT, pairs
    for a in demo_run.report["assignments"]:
        different = [p for p in a["similar"] if set(p["students"]) <= set(DIFFERENT_CORRECT)]
        assert not different, (a["assignment"], different)
    assert "bob" not in {s for a in demo_run.report["assignments"] for p in a["similar"] for s in p["students"]}


def test_the_threshold_separates_copies_from_every_pair_of_different_correct_answers():
    """On the whole catalogue: each reference against its disguised copy is listed; no two of an
    assignment's independent correct answers (reference, right_*, natural_*) are."""
    for name in course.ASSIGNMENTS:
        stub = classreport.released_answer(name)
        reference = answers.reference_answer(name)
        copy = classreport.similar_pairs({"ref": reference, "copy": disguised(reference, name)}, stub)
        assert copy and copy[0]["similarity"] >= classreport.SIMILAR_AT, (name, copy)
        independent = {"reference": reference} | {
            e.student: e.answer
            for e in answers.entries(name)
            if e.kind in ("right", "natural") and e.slug != "everyday_idioms"  # that one is the reference plus idioms
        }
        assert len(independent) >= 4
        assert classreport.similar_pairs(independent, stub) == [], name


def test_the_wide_csv_read_back_equals_grades_csv(demo_run):
    with open(demo_run.out / "grades_wide.csv", encoding="utf-8", newline="") as handle:
        wide = list(csv.DictReader(handle))
    assert [r["student_id"] for r in wide] == sorted({s for s, _ in demo_run.long}, key=raw_id)
    back = {(r["student_id"], name): r[name] for r in wide for name in course.ASSIGNMENTS if r[name] != ""}
    assert back == {key: row["score"] for key, row in demo_run.long.items()}
    for r in wide:
        total = sum(float(row["score"]) for (s, _), row in demo_run.long.items() if s == r["student_id"])
        assert float(r["total"]) == pytest.approx(total)
    assert any(r[name] == "" for r in wide for name in course.ASSIGNMENTS), "erin and frank handed in one each"


def test_the_canvas_csv_has_canvas_columns_points_possible_and_the_same_scores(demo_run):
    with open(demo_run.out / "grades_canvas.csv", encoding="utf-8", newline="") as handle:
        header, possible, *rows = list(csv.reader(handle))
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *course.ASSIGNMENTS]
    maxima = {name: row["max_score"] for (_, name), row in demo_run.long.items()}
    assert possible == ["Points Possible", "", "", "", "", *(maxima[name] for name in course.ASSIGNMENTS)]
    for row in rows:
        student, canvas_id, _, login, _, *scores = row
        assert canvas_id == "" and login == student  # Canvas finds the student by login (docs/class-report.md)
        handed_in = [(student, name) for name in course.ASSIGNMENTS]
        assert scores == [demo_run.long[key]["score"] if key in demo_run.long else "" for key in handed_in], student
    assert len(rows) == len({s for s, _ in demo_run.long})


def test_the_terminal_table_ends_with_each_students_total(demo_run):
    header, *table = demo_run.done.stdout.split("\nstudent ")[-1].splitlines()
    assert header.split() == ["total", "graded"], header
    maxima = {name: float(row["max_score"]) for (_, name), row in demo_run.long.items()}
    for student in {raw_id(s) for s, _ in demo_run.long}:
        line = next(line for line in table if line.startswith(student + " "))
        mine = [row for (s, _), row in demo_run.long.items() if raw_id(s) == student]
        total, possible, done, count = re.search(r"([\d.]+) / ([\d.]+)\s+(\d+)/(\d+)$", line).groups()
        assert float(total) == pytest.approx(sum(float(r["score"]) for r in mine)), line
        assert float(possible) == pytest.approx(sum(maxima.values())), line
        assert int(count) == len(course.ASSIGNMENTS) and int(done) <= len(mine), line


PLAIN_TAGS = {"html", "head", "meta", "title", "style", "body", "section", "h1", "h2", "h3", "h4", "p", "a", "code"}
PLAIN_TAGS |= {"span", "pre", "img", "table", "tr", "th", "td", "ol", "ul", "li"}  # and no script, no student tag
PLAIN_TAGS |= {"details", "summary", "input", "label", "strong"}  # folding and the filter, CSS alone


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_student_text_is_escaped_in_the_page_and_neutralised_in_every_csv(demo_run):
    parsed = Tags()
    parsed.feed(demo_run.page)
    names = {tag for tag, _ in parsed.tags}
    assert names <= PLAIN_TAGS, names - PLAIN_TAGS
    assert all(attrs["src"].startswith("figures/") for tag, attrs in parsed.tags if tag == "img")
    links = [value or "" for _, attrs in parsed.tags for name, value in attrs.items() if name in ("href", "src")]
    assert not [link for link in links if ":" in link or link.startswith("//")], links  # nothing leaves the folder
    text = "".join(parsed.text)
    assert HOSTILE_ID in text and HOSTILE_MESSAGE.replace("\u202e", "\\u202e") in text
    assert "\u202e" not in demo_run.page
    files = ["grades.csv", "grades_wide.csv", "grades_canvas.csv", "report/tests.csv"]
    for name in files:
        with open(demo_run.out / name, encoding="utf-8", newline="") as handle:
            cells = [cell for row in csv.reader(handle) for cell in row]
        assert not [c for c in cells if c.startswith(FORMULA_START)], name
        assert name == "report/tests.csv" or "'" + HOSTILE_ID in cells, name


def test_the_page_renders_offline_in_chromium_with_its_figures(demo_run):
    executable = chromium()
    from playwright.sync_api import sync_playwright

    outside, dialogs = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1600})
            page.route("**/*", only_requests_to("file://", outside))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto((demo_run.out / "report" / "index.html").as_uri(), wait_until="load")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # every section
            figures = page.evaluate(
                "[...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth,"
                " i.getBoundingClientRect().width])"
            )
            pwned = page.evaluate("window.__pwned || null")
            shown = page.inner_text("body")
            page.screenshot(path=str(demo_run.out / "report.png"), full_page=True)
        finally:
            browser.close()
    assert not outside, f"the page asked the network for {outside}"
    assert not dialogs and pwned is None, (dialogs, pwned)
    expected = {f"figures/{name}-{kind}.svg" for name in course.ASSIGNMENTS for kind in ("scores", "tests")}
    assert {src for src, _, _ in figures} == expected
    assert all(loaded and width > 300 for _, loaded, width in figures), figures
    assert "全班报告" in shown and HOSTILE_ID in shown


def test_a_broken_autograded_notebook_is_skipped_with_a_note(demo_run, tmp_path):
    out = tmp_path / "graded"
    shutil.copytree(demo_run.out, out, symlinks=True)
    broken = course.notebook_path(out / "course" / "autograded" / "alice", COPIED_IN)
    broken.write_text("{ not a notebook", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "grader", "report", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report" / "class.json").read_text(encoding="utf-8"))
    assert report["skipped"] == [{"submission": f"alice/{COPIED_IN}", "reason": "unreadable", "error": "NotJSONError"}]
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert f"alice/{COPIED_IN}: the graded notebook cannot be read (NotJSONError), left out" in page
    before, after = assignment(demo_run.report, "softplus"), assignment(report, "softplus")
    assert after["tests"] == before["tests"]


def test_without_a_chinese_font_the_page_says_so_once_and_nothing_warns(demo_run, tmp_path, monkeypatch):
    """A machine without a Chinese font (a fresh Debian) drew the figures with boxes and printed
    one matplotlib warning per missing glyph, dozens of lines on the grading command's stderr."""
    out = tmp_path / "graded"
    shutil.copytree(demo_run.out, out, symlinks=True)
    monkeypatch.setattr(classreport_page, "cjk_font", lambda: None)
    monkeypatch.setenv("LANGUAGE", "zh_CN")  # figures with Chinese labels (in English they need no such font)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = classreport.write(out).read_text(encoding="utf-8")
    assert page.count("没有中文字体") == 1 and f".venv/bin/python -m grader report {out}" in page
    monkeypatch.setenv("LANGUAGE", "en_US")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        english = classreport.write(out).read_text(encoding="utf-8")
    assert "no Chinese font" not in english and "Class report" in english
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    monkeypatch.setattr(classreport_page, "cjk_font", lambda: "DejaVu Serif")  # any font found: no note
    assert "没有中文字体" not in classreport.write(out).read_text(encoding="utf-8")


def test_the_histograms_title_counts_one_submission_in_the_singular(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    titles = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: titles.append(fig.axes[0].get_title()))
    one = {"assignment": "softplus", "scores": [3.0], "max_score": 5, "submissions": 1, "tests": []}
    for language, expected in [("en_US", "softplus: scores (1 submission)"), ("zh_CN", "softplus：得分分布（1 份）")]:
        monkeypatch.setenv("LANGUAGE", language)
        classreport_page.draw_figures(tmp_path, one)
        assert titles[-1] == expected
    classreport_page.draw_figures(tmp_path, one | {"scores": [3.0, 5.0], "submissions": 2})
    assert titles[-1] == "softplus：得分分布（2 份）"


def test_a_chinese_font_installed_after_matplotlib_listed_its_fonts_is_found(monkeypatch):
    """matplotlib keeps its list of fonts in a cache file and does not look again: a font installed
    after its first use (apt-get install fonts-noto-cjk on a machine that already graded) was not
    used, and the figures kept their boxes."""
    from matplotlib import font_manager

    if not [p for p in font_manager.findSystemFonts() if "CJK" in Path(p).name]:
        pytest.skip("no Noto CJK font on this machine (apt-get install fonts-noto-cjk): THIS CHECK DID NOT RUN")
    before_install = [f for f in font_manager.fontManager.ttflist if "CJK" not in f.name]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", before_install)
    assert "CJK" in (classreport_page.cjk_font.__wrapped__() or "")


def test_the_page_and_the_grading_run_speak_the_instructors_language(demo_run):
    """#45 item 7: graded with LANG=en_US.UTF-8, reported again with zh_CN.UTF-8 (tests/demo_run.py)."""
    english, chinese = demo_run.page_en, demo_run.page
    assert '<html lang="en">' in english and '<html lang="zh">' in chinese
    for en, zh in [("Class report", "全班报告"), ("Summary", "概览"), ("Need a person", "需要人工查看")]:
        assert en in english and zh not in english, en
        assert zh in chinese and f">{en}<" not in chinese, zh
    assert "Pass rate of each test" in english and "各测试的通过率" in chinese
    out = demo_run.done.stdout
    assert re.search(r"^Grading \d+ submissions from .* on 2 local worker processes$", out, re.M), out[:500]
    assert re.search(
        r"^  0 unchanged since the last run \(results kept\), 1 unreadable \(0 with the reason\), ", out, re.M
    )
    assert "\nstudent " in out and "全班报告" not in out
    assert "已写出" in demo_run.again.stdout, demo_run.again.stdout  # the report command, in Chinese


def test_a_notebook_handed_in_beside_the_graded_one_is_reported(demo_run):
    """#45 item 9: EXTRA_COPY answered in residuals-Copy1.ipynb and handed in the blank release as
    residuals.ipynb: 0 points, the note on their feedback and in the table, and in the report."""
    copy = f"{COPIED_IN}-Copy1.ipynb"
    extra = assignment(demo_run.report, COPIED_IN)["extra_notebooks"]
    assert [(e["student"], e["notebooks"], e["score"]) for e in extra] == [(EXTRA_COPY, [copy], 0)], extra
    others = [a["extra_notebooks"] for a in demo_run.report["assignments"] if a["assignment"] != COPIED_IN]
    assert others == [[]] * (len(course.ASSIGNMENTS) - 1)
    needs = {p["student"]: p for p in assignment(demo_run.report, COPIED_IN)["needs_person"]}
    assert needs[EXTRA_COPY]["why"] == ["zero_with_notes"], needs[EXTRA_COPY]
    note = f"提交里另有 1 个 notebook 没有评分：{copy}"
    assert note in score_table_line(demo_run.done.stdout, EXTRA_COPY)
    page = demo_run.out / "feedback" / EXTRA_COPY / COPIED_IN / f"{COPIED_IN}.html"
    assert note in page.read_text(encoding="utf-8")
    section = demo_run.page.split("交了但没有评分的 notebook (1)")[1].split("</details>")[0]
    assert EXTRA_COPY in section and copy in section, section[:800]


def test_the_summary_comes_first_sections_fold_and_the_flag_filter_shows_the_flagged(demo_run):
    """#45 items 10 and 14: in Chromium, the page opens on its summary with every assignment's
    section folded (it was 19 000 pixels tall with everything open); a click opens one; the flag
    column names each flagged student's flags, and the checkbox leaves exactly those rows."""
    from playwright.sync_api import sync_playwright

    flagged = {}
    for (student, _), row in demo_run.long.items():
        flags = set(row["flags"].split()) - {"unsandboxed"}
        if flags:
            flagged.setdefault(raw_id(student), set()).update(flags)
    assert FLAGGED in flagged and flagged[FLAGGED] == {"tampering"}, flagged
    rows = "[...document.querySelectorAll('#class-table tr.student')].filter(r => r.offsetParent !== null)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto((demo_run.out / "report" / "index.html").as_uri(), wait_until="load")
            first = page.evaluate("document.querySelector('h1 ~ section h2, h1 ~ * h2').innerText")
            folded = page.evaluate("document.documentElement.scrollHeight")
            closed = page.evaluate("[...document.querySelectorAll('details.assignment')].filter(d => !d.open).length")
            table = page.locator(f"#{COPIED_IN} table").first
            hidden_before = not table.is_visible()
            page.locator(f"#{COPIED_IN} > summary").click()
            shown_after = table.is_visible()
            everyone = page.evaluate(f"{rows}.map(r => r.cells[0].innerText)")
            page.check("#only-flagged")
            left = page.evaluate(f"{rows}.map(r => [r.cells[0].innerText, r.cells[1].innerText])")
            page.uncheck("#only-flagged")
            again = page.evaluate(f"{rows}.length")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            unfolded = page.evaluate("document.documentElement.scrollHeight")
        finally:
            browser.close()
    assert first == "概览", first
    assert closed == len(course.ASSIGNMENTS) and hidden_before and shown_after
    assert folded < 3500 and unfolded > 4 * folded, (folded, unfolded)
    assert {name for name, _ in left} == set(flagged), left
    for name, column in left:
        assert {flag for flag in flagged[name] if f"⚠ {flag}" in column} == flagged[name], (name, column)
    assert len(everyone) == again == len({raw_id(s) for s, _ in demo_run.long}) > len(left)


def test_the_demo_announces_frank_as_the_report_shows_him(demo_run, monkeypatch, tmp_path, capsys):
    """#52 item 6: the demo announced "frank: a tampering attempt" and the report showed
    "flagged (tampering): 0" (he patched np.allclose in his kernel, which leaves nothing to flag).
    frank now hands in forged programs outside the test cells: the demo says he is flagged, and
    grades.csv and the report flag him, at his wrong answer's score."""
    import proof.__main__ as cli
    from grader import grade

    monkeypatch.setattr(grade, "main", lambda args: 0)
    assert cli.main(["demo", "--out", str(tmp_path / "demo")]) == 0
    assert "frank: a tampering attempt (flagged)," in capsys.readouterr().out
    assert demo_run.long[("frank", COPIED_IN)]["flags"] == "tampering"
    assert "frank" in assignment(demo_run.report, COPIED_IN)["flagged"]
    row = next(s for s in demo_run.report["students"] if s["student"] == "frank")
    assert row["flags"] == {COPIED_IN: ["tampering"]}
    assert demo_run.long[("frank", COPIED_IN)]["score"] == demo_run.long[("carol", COPIED_IN)]["score"]


def test_the_reasons_for_failing_stand_under_what_the_test_checks_in_the_instructors_language(demo_run, monkeypatch):
    """#52 item 6: graded in English, the reasons were the students' Chinese messages alone. Each
    test's title is now beside them, and in the pass-rate table: English in the English report,
    the exercise's own Chinese title in the Chinese one; the messages stay as students read them."""
    from grader.output import titles

    english_page, chinese_page = html.unescape(demo_run.page_en), html.unescape(demo_run.page)

    def section(page: str, assignment: str, test: str) -> str:
        """A test's group of messages: its heading, up to the end of its table."""
        part = page.split(f'<details class="assignment" id="{assignment}">', 1)[1]
        return part.split(f"<h4><code>{test}</code> (", 1)[1].split("</table>", 1)[0]

    shown = 0
    for a in demo_run.report["assignments"]:
        for test in a["tests"]:
            english = titles.TITLES[a["assignment"]][test["test"]]
            assert english in english_page, english
            if not test["messages"]:
                continue
            message = classreport_page.shown(test["messages"][0]["example"])  # as the page shows it
            assert english in section(english_page, a["assignment"], test["test"]), test["test"]
            assert message in section(english_page, a["assignment"], test["test"]) and re.search(
                r"[\u4e00-\u9fff]", message
            )
            monkeypatch.setenv("LANGUAGE", "zh_CN")
            chinese = titles.title(a["assignment"], test["test"])
            monkeypatch.delenv("LANGUAGE")
            assert chinese != english and chinese in section(chinese_page, a["assignment"], test["test"]), test["test"]
            assert english not in chinese_page and message in section(chinese_page, a["assignment"], test["test"]), (
                test["test"]
            )
            shown += 1
    assert shown >= 10, "too few failed tests in the demo class to show anything"


def test_pairs_listed_before_are_named_when_they_are_no_longer_listed(tmp_path):
    """#52 item 5: a pair that looked copied and no longer does (one answer changed) vanished from
    the report. The history keeps each run's pairs; the report names every pair an earlier run
    listed that it does not list now, with when it was last listed. Scores that changed are
    listed with their value before and after; unchanged ones are not."""
    from grader.output import history
    from grader.pipeline import store

    root = tmp_path / "course"
    root.mkdir()
    with course.gradebook(root):
        pass  # nbgrader's tables first, as a grading run makes them

    def outcomes(**scores):
        return {(s, COPIED_IN): store.Outcome(s, COPIED_IN, score, 10.0) for s, score in scores.items()}

    first = store.record_run(root, outcomes(alice=10.0, bob=0.0, carl=10.0))
    store.record_pairs(root, first, [{"assignment": COPIED_IN, "students": ["alice", "carl"], "similarity": 1.0}])
    second = store.record_run(root, outcomes(alice=10.0, bob=4.0, carl=6.0, dana=10.0))
    now = [{"assignment": COPIED_IN, "students": ["alice", "dana"], "similarity": 0.97}]
    changes = history.changes(course.sqlite_url(root), now)
    assert second > first and changes["previous"] <= changes["run"]
    assert [(c["student"], c["before"] and c["before"]["score"], c["after"]["score"]) for c in changes["scores"]] == [
        ("bob", 0.0, 4.0),
        ("carl", 10.0, 6.0),
        ("dana", None, 10.0),
    ]
    [gone] = changes["pairs_gone"]
    assert (gone["students"], gone["similarity"]) == (["alice", "carl"], 1.0)
    page = classreport_page.render(
        {"assignments": [], "students": [], "not_graded": [], "history": changes, "skipped": []}
    )
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert f"{COPIED_IN} alice carl 100% {history.shown_time(gone['listed'])}" in text, text[-1500:]
