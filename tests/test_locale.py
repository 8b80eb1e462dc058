"""The instructor's side in the instructor's language (#45 item 7): English or Chinese by the
locale, from gettext catalogues (grader/i18n.py), and student-facing text Chinese whatever it is.

The catalogue is checked against the code: every message the code and the class report's page
mark is in grader/locale/zh/LC_MESSAGES/grader.po with a translation that keeps its
placeholders, and grader.mo is that file compiled. The command line is run in both locales.
"""

import io
import os
import re
import string
import subprocess
import sys

from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from rich.cells import cell_len

from grader import REPO, i18n, messages
from grader.output import report

PO = i18n.LOCALEDIR / "zh" / "LC_MESSAGES" / "grader.po"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def locale_env(lang: str) -> dict:
    """The environment with one locale setting: LANG (nothing that would override it)."""
    env = {k: v for k, v in os.environ.items() if k not in i18n.ENVIRONMENT}
    return env | {"LANG": lang, "COLUMNS": "200"}  # help lines unwrapped


def grader_cli(*args: str, lang: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "grader", *args]
    return subprocess.run(command, cwd=REPO, env=locale_env(lang), capture_output=True, text=True, timeout=120)


def extracted() -> set:
    """Every message the code marks, as `make messages` extracts them (grader/locale/babel.cfg)."""
    with open(i18n.LOCALEDIR / "babel.cfg", encoding="utf-8") as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    keywords = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None}
    found = set()
    for folder in (REPO / "grader", REPO / "proof"):
        for _file, _line, message, _comments, _context in extract_from_dir(
            folder, method_map, options_map, keywords=keywords
        ):
            found.add(message)
    return found


def placeholders(text: str) -> set:
    named = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    return named | set(re.findall(r"%\(\w+\)[sdr]|%[sdr]", text))


def test_every_marked_message_has_its_chinese_and_the_catalogue_is_compiled():
    with open(PO, "rb") as handle:
        catalogue = read_po(handle)
    entries = {m.id: m for m in catalogue if m.id}
    code = extracted()
    assert len(code) > 100, "extraction found almost nothing: the check would prove nothing"
    assert sorted(map(str, code - set(entries))) == [], "messages without a translation: run make messages"
    assert sorted(map(str, set(entries) - code)) == [], "translations of messages the code no longer has"
    for key, entry in entries.items():
        forms = [key] if isinstance(key, str) else list(key)
        texts = [entry.string] if isinstance(entry.string, str) else list(entry.string)
        assert all(texts) and "fuzzy" not in entry.flags, f"untranslated or fuzzy: {key!r}"
        for text in texts:
            assert CJK.search(text) or not re.search(r"[a-z]{3}", key if isinstance(key, str) else key[0]), key
            assert placeholders(text) == placeholders(forms[-1]) or placeholders(text) == placeholders(forms[0]), (
                key,
                text,
            )
    compiled = io.BytesIO()
    write_mo(compiled, catalogue)
    assert (PO.with_suffix(".mo")).read_bytes() == compiled.getvalue(), "grader.mo is stale: run make messages"


def test_help_and_refusals_follow_the_locale():
    english, chinese = "en_US.UTF-8", "zh_CN.UTF-8"
    for lang in (english, "C.UTF-8"):
        top = grader_cli("--help", lang=lang)
        assert top.returncode == 0 and top.stdout.startswith("usage: python -m grader"), top.stdout
        assert "grade SUBMITTED_DIR/<student>/<assignment>/*.ipynb into OUT_DIR" in top.stdout
        assert not CJK.search(top.stdout), top.stdout
        missing = grader_cli("grade", "/no/such/folder", "--out", "/tmp/x", lang=lang)
        assert (missing.returncode, missing.stderr) == (2, "grader grade: no such folder: /no/such/folder\n")
        bare = grader_cli("grade", lang=lang)
        assert bare.returncode == 2 and "error: the following arguments are required: submitted, --out" in bare.stderr
    top = grader_cli("--help", lang=chinese)
    assert top.returncode == 0 and top.stdout.startswith("用法：python -m grader"), top.stdout
    assert "给 SUBMITTED_DIR/<学号>/<作业>/*.ipynb 评分，结果写入 OUT_DIR" in top.stdout
    assert "位置参数：" in top.stdout and "显示这条帮助并退出" in top.stdout
    for words in ("usage", "positional arguments", "show this help", "grade SUBMITTED_DIR"):
        assert words not in top.stdout, words
    grading = grader_cli("grade", "--help", lang=chinese)
    assert "一个单元格最多运行的秒数，超时即中断" in grading.stdout, grading.stdout
    missing = grader_cli("grade", "/no/such/folder", "--out", "/tmp/x", lang=chinese)
    assert (missing.returncode, missing.stderr) == (2, "grader grade：没有这个文件夹：/no/such/folder\n")
    bare = grader_cli("grade", lang=chinese)
    assert bare.returncode == 2 and "错误：缺少以下参数：submitted, --out" in bare.stderr, bare.stderr
    report_refusal = grader_cli("report", "/no/such/folder", lang=chinese)
    assert report_refusal.stderr == "grader report：/no/such/folder 里没有 grades.csv：先把一个班级评分到这里\n"


def test_any_chinese_locale_is_chinese_and_language_outranks_lang(monkeypatch):
    for name in i18n.ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    for lang, expected in [("zh_TW.UTF-8", "zh"), ("zh_CN.GB18030", "zh"), ("de_DE.UTF-8", "en"), ("C", "en")]:
        monkeypatch.setenv("LANG", lang)
        assert i18n.language() == expected, lang
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert i18n._("student") == "学生" and i18n.language() == "zh"


def test_student_facing_notes_stay_chinese_in_any_locale(monkeypatch):
    """The notes a student reads on the feedback page (and the instructor in the table, as the
    student read them) are not translated: grader/messages.py has no catalogue."""
    for lang in ("en_US.UTF-8", "zh_CN.UTF-8"):
        monkeypatch.setenv("LANG", lang)
        note = messages.extra_notebooks("softplus.ipynb", "softplus.ipynb", ["softplus-Copy1.ipynb"])
        assert note.startswith("提交里另有 1 个 notebook 没有评分：softplus-Copy1.ipynb"), note
    source = (REPO / "grader" / "messages.py").read_text(encoding="utf-8")
    assert "i18n" not in source and "gettext" not in source
    feedback = (REPO / "grader" / "output" / "feedback.py").read_text(encoding="utf-8")
    assert "i18n" not in feedback


LONG = (
    "提交里另有 2 个 notebook 没有评分：softplus-Copy1.ipynb、backup/softplus.ipynb。"
    "评分的只有 softplus.ipynb；其余的删掉"
)


def test_a_progress_line_fits_80_columns_and_is_cut_between_words():
    """CJK characters take two columns: the old cut at 70 characters made lines of up to 140
    columns, which the terminal broke anywhere (#45 item 10)."""
    prefix = "  [ 7/40] a-student-id/softplus: "
    for width in (80, 60, 50):
        line = report.progress_line(prefix, LONG, width)
        assert cell_len(line) <= width and line.endswith("…"), (width, line)
        kept = line[len(prefix) : -1]
        assert LONG.startswith(kept), line
        after = LONG[len(kept) :]
        # the cut is between words: before a space, or next to a CJK character, never inside a name
        assert after[0].isspace() or CJK.search(after[0]) or CJK.search(kept[-1]) or after[0] in "，。；：、（）", line
        for name in ("softplus-Copy1.ipynb", "backup/softplus.ipynb", "softplus.ipynb"):
            assert name in kept or not any(name[:k] == kept[-k:] for k in range(1, len(name))), line
    assert report.progress_line(prefix, "ok", 80) == prefix + "ok"


def test_grade_help_gives_every_default():
    """#52 item 6: `grade --help` omitted the defaults of --jobs, --ceiling and --cell-timeout."""
    from grader import course

    def described(text: str, option: str) -> str:
        """The help of `option` in the options part of --help, on one line."""
        part = text.split("\n  " + option + " ", 1)[1]
        return " ".join(re.split(r"\n  -", part, maxsplit=1)[0].split())

    english = grader_cli("grade", "--help", lang="en_US.UTF-8").stdout
    chinese = grader_cli("grade", "--help", lang="zh_CN.UTF-8").stdout
    defaults = {
        "--jobs": os.cpu_count() or 1,
        "--ceiling": course.CEILING_SECONDS,
        "--cell-timeout": course.CELL_TIMEOUT,
    }
    for option, default in defaults.items():
        assert f"(default: {default}" in described(english, option), (option, described(english, option))
        assert f"（默认：{default}" in described(chinese, option), (option, described(chinese, option))
    assert (defaults["--ceiling"], defaults["--cell-timeout"]) == (300, 60)


def test_every_test_has_a_title_in_both_languages_and_its_chinese_is_the_exercises_own():
    """The class report shows what each test checks beside its students' messages (#52 item 6):
    grader/output/titles.py has an English title for every test cell of every assignment and no
    other, and the catalogue's Chinese for it is taken from the test's own title comment in the
    exercise, so the two cannot drift apart unnoticed."""
    import nbformat

    from grader import course
    from grader.judging import verdict
    from grader.output import titles

    with open(PO, "rb") as handle:
        catalogue = {m.id: m.string for m in read_po(handle) if m.id}
    for assignment in course.ASSIGNMENTS:
        nb = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
        cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells if verdict.is_test(c)}
        assert set(titles.TITLES[assignment]) == set(cells), assignment
        for test, source in cells.items():
            comment = "".join(
                line.lstrip("#").strip()
                for line in source.splitlines()[1:]
                if line.startswith("# ") and not line.startswith("###")
            )
            chinese = catalogue[titles.TITLES[assignment][test]]
            assert chinese and chinese in comment, (assignment, test, chinese)
    assert set(titles.TITLES) == set(course.ASSIGNMENTS)
