"""The figures' Chinese renders wherever one of the course's fonts is installed (issue #51, item 12).

The font list is named once, in kit/ch4style.py; every notebook that draws calls its
`use_chinese_fonts` and names no font itself. For each such notebook, one figure is drawn with every
string its code gives a figure (labels, titles, legends, text) and every Chinese character its code
holds anywhere (a label may come from a variable), and drawing it must warn of no missing glyph.
On a machine with none of the fonts this fails, as it should: there every label is a row of boxes.
The harness checks the real figures too (`nbtools` fails a notebook whose output warns of a
missing glyph)."""

from __future__ import annotations

import ast
import re
import warnings

import ch4style
import matplotlib
import matplotlib.pyplot as plt
import nbformat
import pytest
from matplotlib import font_manager

from grader import REPO, nbtools

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
DRAWS = re.compile(r"\bplt\.|\.subplots\(|\bax\.")
# Calls whose string arguments end up in a figure, and keywords that do wherever they appear.
TEXT_CALLS = {
    "set_xlabel",
    "set_ylabel",
    "set_title",
    "suptitle",
    "title",
    "xlabel",
    "ylabel",
    "text",
    "annotate",
    "legend",
    "set_xticklabels",
    "set_yticklabels",
    "set_xticks",
    "set_yticks",
    "table",
    "colorbar",
}
TEXT_KEYWORDS = {"label", "labels", "xlabel", "ylabel", "title", "xticklabels", "yticklabels", "s"}
CHINESE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
MISSING = "missing from font"


def code_of(path):
    """The notebook's code cells, without IPython's magic and shell lines (not Python)."""
    nb = nbformat.read(path, as_version=4)
    return [
        "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for c in nb.cells
        if c.cell_type == "code"
    ]


def strings_in(node) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def figure_texts(path) -> list[str]:
    """What the notebook's code may write into a figure (see the module's docstring)."""
    texts, chinese = [], set()
    for source in code_of(path):
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                chinese |= set(CHINESE.findall(node.value))
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in TEXT_CALLS:
                texts += [s for arg in node.args for s in strings_in(arg)]
            texts += [s for kw in node.keywords if kw.arg in TEXT_KEYWORDS for s in strings_in(kw.value)]
    return texts + ["".join(sorted(chinese))]


def drawing_notebooks():
    return [p for p in NOTEBOOKS if any(DRAWS.search(src) for src in code_of(p))]


def missing_glyphs(texts) -> list[str]:
    """Draw one figure holding `texts` with the course's fonts; the missing-glyph warnings it gave."""
    with matplotlib.rc_context(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ch4style.use_chinese_fonts()
        fig = plt.figure(figsize=(8, 2 + len(texts) / 4))
        for i, text in enumerate(texts):
            fig.text(0.01, 1 - (i + 1) / (len(texts) + 1), text, parse_math=False)
        fig.canvas.draw()
        plt.close(fig)
    return [str(w.message) for w in caught if MISSING in str(w.message) or "中文字体" in str(w.message)]


def test_every_figure_uses_the_one_font_list():
    drawing = drawing_notebooks()
    assert len(drawing) >= 20, f"only {len(drawing)} notebooks draw figures: is DRAWS still right?"
    for path in NOTEBOOKS:
        source = "\n".join(code_of(path))
        assert "font.sans-serif" not in source and "font.family" not in source, f"{path.name} names fonts itself"
        if path in drawing:
            assert "use_chinese_fonts()" in source, f"{path.name} draws figures without ch4style.use_chinese_fonts()"


@pytest.mark.parametrize("path", drawing_notebooks(), ids=lambda p: p.stem)
def test_figure_text_renders_without_missing_glyphs(path):
    texts = figure_texts(path)
    assert CHINESE.search(texts[-1]), f"{path.name}: no Chinese found to draw"
    missing = missing_glyphs(texts)
    assert not missing, f"{path.name}: installed {ch4style.installed_chinese_fonts()}: {missing[:3]}"


def test_without_any_of_the_fonts_the_check_fails(monkeypatch):
    """The check above can fail: with the course's fonts removed from matplotlib's list, it warns."""
    kept = [f for f in font_manager.fontManager.ttflist if f.name not in ch4style.CHINESE_FONTS]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", kept)
    font_manager.fontManager._findfont_cached.cache_clear()
    try:
        assert ch4style.installed_chinese_fonts() == []
        missing = missing_glyphs(["梯度的值"])
    finally:
        monkeypatch.undo()
        font_manager.fontManager._findfont_cached.cache_clear()
    assert any("中文字体" in m for m in missing), "use_chinese_fonts must say that no Chinese font is installed"
    assert any(MISSING in m for m in missing), "with no Chinese font, drawing Chinese must warn of missing glyphs"


def test_fonts_present_here_are_used_first():
    fonts = ch4style.installed_chinese_fonts()
    assert fonts, "none of ch4style.CHINESE_FONTS is installed: every Chinese label would be boxes (docs/students.md)"
    with matplotlib.rc_context():
        assert ch4style.use_chinese_fonts() == fonts
        assert matplotlib.rcParams["font.sans-serif"] == [*fonts, ch4style.LAST_RESORT]


def test_the_harness_fails_a_figure_with_boxes(tmp_path):
    """What the notebooks' own runs check: a figure drawn without a Chinese font fails its notebook."""
    nb = nbformat.v4.new_notebook(metadata=nbtools.KERNEL_METADATA)
    draw = 'import matplotlib.pyplot as plt\nplt.rcParams["font.sans-serif"] = ["DejaVu Sans"]\nplt.title("梯度")'
    nb.cells = [nbformat.v4.new_code_cell(draw)]
    nbformat.write(nb, tmp_path / "boxes.ipynb")
    result = nbtools.execute_notebook(tmp_path / "boxes.ipynb", timeout=60)
    assert result.problems and "missing from font" in result.problems[0], result.problems
