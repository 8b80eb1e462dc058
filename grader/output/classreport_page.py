"""The class report drawn (#33): its page, tests.csv and figures.

They show the numbers grader/output/classreport.py read out of a graded run (the summary that
class.json keeps), and nothing else: this module reads nothing of the run itself.

Everything a student wrote (ids, notes, the exception messages quoted in them) is data: the page
is rendered by Jinja2 with autoescaping and control or bidirectional characters shown as their
escapes (`report.escaped`), tests.csv cells go through `report.spreadsheet_cell`. The figures are
SVG with their text as paths, in a Chinese font when one is installed; without one, the page says
so once and gives the command that draws them again.
"""

from __future__ import annotations

import csv
import functools
import warnings
from pathlib import Path

import jinja2

from grader import i18n
from grader.i18n import _, ngettext
from grader.output import history, report, titles

TEMPLATES = Path(__file__).parent.parent / "templates" / "class_report"
MESSAGE_GROUPS_SHOWN = 5  # per test on the page; class.json keeps them all


def write_tests_csv(path: Path, assignments: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["assignment", "test", "points", "passed", "failed", "pass_rate"])
        for a in assignments:
            for t in a["tests"]:
                rate = "" if t["pass_rate"] is None else f"{t['pass_rate']:.4g}"
                row = [a["assignment"], t["test"], f"{t['points']:g}", str(t["passed"]), str(t["failed"]), rate]
                writer.writerow([report.spreadsheet_cell(cell) for cell in row])


def shown(text) -> str:
    """Student text for the page: control and bidirectional characters as their escapes, lines kept."""
    return "\n".join(report.escaped(line) for line in str(text).split("\n"))


def render(summary: dict, redraw: str = "") -> str:
    """The page; `redraw`, when set, is the command that draws the figures again once a Chinese
    font is installed (the page then says the figures show boxes)."""
    loader = jinja2.FileSystemLoader(TEMPLATES)
    env = jinja2.Environment(
        loader=loader, autoescape=True, undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.i18n"]
    )
    env.install_gettext_translations(i18n.translation(), newstyle=True)  # the instructor's language
    env.filters["shown"] = shown
    env.filters["percent"] = lambda rate: "—" if rate is None else f"{rate:.0%}"
    env.filters["points"] = lambda value: "—" if value is None else f"{value:g}"
    env.filters["when"] = history.shown_time
    env.globals["title"] = titles.title  # what a test checks, beside its students' messages
    env.globals["not_graded"] = lambda item: report.not_graded_reason(item["student"], item["found"], item["reason"],
                                                                       item["fix"])  # fmt: skip
    env.globals["where"] = report.where
    return env.get_template("index.html.j2").render(
        summary=summary, groups_shown=MESSAGE_GROUPS_SHOWN, redraw=redraw, lang=i18n.language()
    )


def use_agg() -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, in a grading run as anywhere


@functools.cache
def cjk_font() -> str | None:
    """A font with Chinese glyphs, if one is installed (fonts-noto-cjk); else figures keep DejaVu."""
    from matplotlib import font_manager

    def found():
        return sorted({f.name for f in font_manager.fontManager.ttflist if "CJK" in f.name or "Hei" in f.name})

    if not found():  # matplotlib's font cache may predate the font: look at the system's fonts once
        for path in font_manager.findSystemFonts():
            if "CJK" in Path(path).name:
                font_manager.fontManager.addfont(path)
    names = found()
    preferred = [n for n in names if "Sans" in n and "SC" in n] + [n for n in names if "Sans" in n] + names
    return preferred[0] if preferred else None


def draw_figures(folder: Path, a: dict) -> None:
    """<assignment>-scores.svg (a histogram) and <assignment>-tests.svg (pass rates), text as paths."""
    import matplotlib

    use_agg()
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fonts = ["DejaVu Sans", *filter(None, [cjk_font()])]
    with (
        matplotlib.rc_context({"font.family": fonts, "svg.fonttype": "path", "svg.hashsalt": "ch04"}),
        warnings.catch_warnings(),
    ):
        # Without a Chinese font matplotlib warns once per missing glyph (dozens of lines on the
        # grading command's stderr); the page says it once instead (`redraw` in render).
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        fig = Figure(figsize=(6, 2.6))
        ax = fig.subplots()
        top = a["max_score"]
        bins = [x - 0.5 for x in range(int(top) + 2)] if top <= 30 else 10  # scores are whole points, mostly
        ax.hist(a["scores"], bins=bins, range=(0, top), color="#4a7ab8")
        title = ngettext(
            "{assignment}: scores ({count} submission)", "{assignment}: scores ({count} submissions)", a["submissions"]
        ).format(assignment=a["assignment"], count=a["submissions"])
        ax.set(xlabel=_("score"), ylabel=_("submissions"), title=title)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        fig.tight_layout()
        fig.savefig(folder / f"{a['assignment']}-scores.svg", metadata={"Date": None})

        tests = [t for t in a["tests"] if t["pass_rate"] is not None][::-1]
        if not tests:
            return  # nothing graded yet: the page says so
        fig = Figure(figsize=(6, 0.9 + 0.32 * max(1, len(tests))))
        ax = fig.subplots()
        labels = [t["test"] + (_(" (hidden)") if t["hidden"] else "") for t in tests]
        ax.barh(labels, [100 * t["pass_rate"] for t in tests], color="#5a9e6f")
        title = _("{assignment}: pass rate of each test").format(assignment=a["assignment"])
        ax.set(xlim=(0, 100), xlabel=_("pass rate (%)"), title=title)
        fig.tight_layout()
        fig.savefig(folder / f"{a['assignment']}-tests.svg", metadata={"Date": None})
