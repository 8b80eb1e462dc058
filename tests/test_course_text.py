"""The course text keeps one form everywhere (CONTRIBUTING.md, "Notebooks"): a title, then
sections marked 🟢 必读 or ⚪ 选读 (appendices are all ⚪), one version banner, one term for each
idea, and no word that points at material students do not have."""

import ast
import re

import nbformat
import pytest

from grader import REPO, nbtools

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
EXERCISES = sorted((REPO / "solutions").glob("*/*.ipynb"))
BANNER = "> 本 notebook 的结果在 jax 0.12.0.1（CPU）上验证。"
TITLE = re.compile(r"^# (第 4 章|4\.\d+[abc]? |A_[\d.]+ )")
# Words that quote a source the students never see, or hedge a claim instead of proving it.
UNSEEN_SOURCE = ("参考资料", "实测", "固定版本")
ONE_TERM = {  # STYLE.md
    "拉回": "回拉",
    "次正规数": "非规格化数",
    "冲成 0": "刷成 0",
    "刷零": "刷成 0",
    "对拍": "对照 or 核对",
    "批维度": "批量维",
    "降级": "下译（lowering）",  # 降级 reads as "downgrade"
    "守约损失": "承诺损失",
    "高斯-牛顿积": "高斯-牛顿-向量积",  # the pattern of 海森-向量积
}
# STYLE.md: a term a reader may not know is glossed where a notebook first uses it.
GLOSSED_ON_FIRST_USE = {"残量": "方程两边之差", "下译": "lowering"}
GLOSS_WINDOW = 20  # characters after the term within which its gloss must start


def markdown(path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def headings(path) -> list[str]:
    return [line for text in markdown(path) for line in text.splitlines() if line.startswith("#")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_one_heading_convention(path):
    found = headings(path)
    titles = [h for h in found if h.startswith("# ")]
    assert len(titles) == 1 and TITLE.match(titles[0]), f"{path.name}: one title '# 4.x …' first, got {titles}"
    assert found[0] == titles[0], f"{path.name}: the title comes first"
    allowed = ("## ⚪ 选读：",) if path.name.startswith("A_") else ("## 🟢 必读：", "## ⚪ 选读：")
    loose = [h for h in found if h.startswith("## ") and not h.startswith(allowed)]
    assert not loose, f"{path.name}: sections start with {' or '.join(allowed)}: {loose}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_one_version_banner_right_after_the_time(path):
    texts = markdown(path)
    assert sum(t.count(BANNER) for t in texts) == 1, f"{path.name}: exactly one '{BANNER}'"
    assert BANNER in texts[0], f"{path.name}: the banner belongs in the first cell"


@pytest.mark.parametrize("path", NOTEBOOKS + EXERCISES, ids=[str(p.relative_to(REPO)) for p in NOTEBOOKS + EXERCISES])
def test_words_students_can_follow(path):
    text = path.read_text(encoding="utf-8")
    assert not [w for w in UNSEEN_SOURCE if w in text], f"{path.name}: says {[w for w in UNSEEN_SOURCE if w in text]}"
    assert not [w for w in ONE_TERM if w in text], f"{path.name}: write {ONE_TERM}"


def unglossed_first_uses(text: str) -> list[str]:
    """The terms of GLOSSED_ON_FIRST_USE whose first occurrence in text is not followed by its gloss."""
    found = []
    for term, gloss in GLOSSED_ON_FIRST_USE.items():
        at = text.find(term)
        if at >= 0 and gloss not in text[at : at + len(term) + GLOSS_WINDOW]:
            found.append(term)
    return found


def test_first_use_gloss_spots_a_bare_term():
    assert unglossed_first_uses("方程残量（residual：方程两边之差）很小；残量再缩小") == []
    late_gloss = "让 solve 把残量作为辅助输出，用 has_aux=True 带出来。方程残量（方程两边之差）"
    assert unglossed_first_uses(late_gloss) == ["残量"]
    assert unglossed_first_uses("JAX 下译（lowering）时") == [] and unglossed_first_uses("下译时不插标记") == ["下译"]


@pytest.mark.parametrize("path", NOTEBOOKS + EXERCISES, ids=[str(p.relative_to(REPO)) for p in NOTEBOOKS + EXERCISES])
def test_terms_are_glossed_where_first_used(path):
    text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    bare = unglossed_first_uses(text)
    assert not bare, f"{path.name}: gloss {[f'{t}（{GLOSSED_ON_FIRST_USE[t]}）' for t in bare]} where first used"


# STYLE.md's glossary, one term each (issue #46). Checked over the course notebooks; two exercise
# statements still say 次正规数 / 冲成 0 / 对拍 and move to ONE_TERM once their owners change them.
NOTEBOOK_TERMS = {
    "对拍": "对照 or 核对",
    "次正规数": "非规格化数",
    "冲成 0": "刷成 0",
    "刷零": "刷成 0",
    "真身": "plain words",
    "变不成数组": "不是 JAX 类型",
}
INLINE_CODE = re.compile(r"`[^`\n]*`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_keep_the_glossary_terms(path):
    text = path.read_text(encoding="utf-8")
    found = {word: term for word, term in NOTEBOOK_TERMS.items() if word in text}
    assert not found, f"{path.name}: write {found}"
    prose = INLINE_CODE.sub("", "\n".join(markdown(path))).replace("循环状态 (carry)", "")
    assert "carry" not in prose, f"{path.name}: a scan's carry is 循环状态, glossed 循环状态 (carry) once"


CHAPTER = [p for p in NOTEBOOKS if re.match(r"(4\.\d+[abc]?|99)_", p.name)]


@pytest.mark.parametrize("path", CHAPTER, ids=[p.name for p in CHAPTER])
def test_every_chapter_notebook_asks_the_reader_to_do_something(path):
    """A 🤔 prompt, and an ungraded ✍️ task in the documented pattern (CONTRIBUTING.md, "Practice"):
    the task cell, a visible self-check right after it, then a collapsed reference solution that
    proves the self-check accepts a right answer and rejects a wrong one. Nothing graded."""
    cells = nbformat.read(path, as_version=4).cells
    assert any("🤔" in c.source for c in cells if c.cell_type == "markdown"), f"{path.name}: no 🤔 先预测 prompt"
    code = [c for c in cells if c.cell_type == "code"]
    tasks = [i for i, c in enumerate(code) if nbtools.is_task(c)]
    assert tasks, f"{path.name}: no ungraded task (a code cell starting with '# ✍️')"
    for i in tasks:
        check, reference = code[i + 1], code[i + 2]
        assert not nbtools.is_collapsed(check), f"{path.name}: the self-check after a ✍️ task must be visible"
        assert nbtools.is_collapsed(reference), f"{path.name}: the reference solution after the self-check is collapsed"
        assert "is True" in reference.source and "is False" in reference.source, (
            f"{path.name}: the reference cell asserts the self-check accepts it and rejects a wrong answer"
        )
    graded = [c for c in cells if "nbgrader" in c.metadata or c.source.lstrip().startswith("%%ch4test")]
    assert not graded, f"{path.name}: chapter tasks are ungraded (no nbgrader metadata, no %%ch4test)"


# Drawing calls on a matplotlib Axes (or pyplot): what puts data on a figure.
DRAWING_CALLS = {
    "plot",
    "loglog",
    "semilogx",
    "semilogy",
    "imshow",
    "matshow",
    "spy",
    "bar",
    "barh",
    "scatter",
    "hist",
    "step",
    "fill_between",
    "errorbar",
    "contour",
    "contourf",
    "pcolormesh",
}
FIGURES_AT_LEAST = 16


def is_figure_cell(cell) -> bool:
    """A code cell that draws data and shows it: it calls plt.show() and at least one drawing method.
    Parsed, not searched, so a comment or a string that mentions plt.show() does not count."""
    if cell.cell_type != "code":
        return False
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return False
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    shows = any(f.attr == "show" and isinstance(f.value, ast.Name) and f.value.id == "plt" for f in calls)
    return shows and any(f.attr in DRAWING_CALLS for f in calls)


def test_figure_cell_is_a_cell_that_draws_and_shows():
    draws = nbformat.v4.new_code_cell("fig, ax = plt.subplots()\nax.plot([1, 2], [3, 4])\nplt.show()")
    assert is_figure_cell(draws)
    assert not is_figure_cell(nbformat.v4.new_code_cell('# plt.show()\nprint("ax.plot(x)")'))
    assert not is_figure_cell(nbformat.v4.new_code_cell("fig, ax = plt.subplots()\nplt.show()"))
    assert not is_figure_cell(nbformat.v4.new_markdown_cell("ax.plot(x)\nplt.show()"))


CJK = re.compile(r"[\u4e00-\u9fff]")
LABEL_KEYWORDS = {"label", "xlabel", "ylabel", "title"}
LABEL_CALLS = {"set_xlabel", "set_ylabel", "set_title", "suptitle", "title", "xlabel", "ylabel", "text"}


def figure_texts(source: str) -> list[str]:
    """The constant parts of the strings a cell passes as figure labels, titles, legends or text."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    texts = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        values = [k.value for k in call.keywords if k.arg in LABEL_KEYWORDS]
        values += call.args if name in LABEL_CALLS else []
        for value in values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                texts.append(value.value)
            elif isinstance(value, ast.JoinedStr):
                texts.append("".join(v.value for v in value.values if isinstance(v, ast.Constant)))
    return texts


def english_phrase(text: str) -> bool:
    """Two or more English words and no Chinese, once math and code such as `jax.grad(f)` are set aside."""
    plain = re.sub(r"[\w.]+\([^)]*\)", "", re.sub(r"\$[^$]*\$", "", text))
    return not CJK.search(text) and bool(re.search(r"[A-Za-z]{2,}[\s:,]+[A-Za-z]{2,}", plain))


def test_english_phrase_spots_labels_a_chinese_reader_must_translate():
    assert english_phrase("number of Euler steps N") and english_phrase("forward value")
    assert not english_phrase("欧拉法的步数 N") and not english_phrase("jax.grad(round)")
    assert not english_phrase("$x_1$ and $x_2$")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_figure_labels_are_chinese(path):
    """Issue #46: axis labels, titles and legends in Chinese (code and formulas may stay as they are)."""
    cells = nbformat.read(path, as_version=4).cells
    found = [t for c in cells if c.cell_type == "code" and "plt" in c.source for t in figure_texts(c.source)]
    english = [t for t in found if english_phrase(t)]
    assert not english, f"{path.name}: figure text in English {english}"


def test_the_course_has_enough_figures():
    """Where a reader would rather look than read (issue #35): at least 16 figure cells in the course."""
    counts = {p.name: sum(map(is_figure_cell, nbformat.read(p, as_version=4).cells)) for p in NOTEBOOKS}
    total = sum(counts.values())
    found = {name: n for name, n in counts.items() if n}
    assert total >= FIGURES_AT_LEAST, f"{total} figure cells, want ≥ {FIGURES_AT_LEAST}: {found}"


# residuals (STYLE.md's glossary): what the forward pass saves for the backward pass is 残差; an
# equation's residual (4.3's r = sW + c, the DEQ's f(z) - z, the TD error δ) is 方程残量, then 残量.
EQUATION_RESIDUAL_NOTEBOOKS = ("4.3_vjp.ipynb", "4.9b_stop_gradient_patterns.ipynb", "A_4.10_rules_extras.ipynb")
# The phrases that once called an equation's residual 残差 ("残差向量 r = sW + c", "两条残差曲线", "残差梯度", ...).
EQUATION_RESIDUAL_AS_SAVED = re.compile(r"残差(向量|曲线|范数|梯度|在 1e-)")


@pytest.mark.parametrize("path", NOTEBOOKS + EXERCISES, ids=[str(p.relative_to(REPO)) for p in NOTEBOOKS + EXERCISES])
def test_residuals_keep_the_glossary_terms(path):
    text = path.read_text(encoding="utf-8")
    assert "反向保存量" not in text, f"{path.name}: the glossary's term for saved residuals is 残差, not 反向保存量"
    found = EQUATION_RESIDUAL_AS_SAVED.findall(text)
    assert not found, f"{path.name}: an equation's residual is 方程残量 (残量), not 残差: 残差{found}"
    if path.name in EQUATION_RESIDUAL_NOTEBOOKS:
        assert "方程残量（residual：" in text, (
            f"{path.name}: gloss the equation residual once as 方程残量（residual：…）"
        )
