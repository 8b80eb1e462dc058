"""The course website (`make book`, docs/book.md): it builds from the notebooks `make test`
executed, shows no answer, has no broken link, is read in Chromium offline (figures, math,
Chinese search), and never shows a stale output.

The whole course is built once per session (`site`); the stale-output and planted-answer checks
build a tiny project of one notebook and one exercise instead, so they stay fast. conftest.py
puts these tests last, after the notebook tests that fill build/executed/; run alone, the build
executes what is missing itself.
"""

import html
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest
from helpers import chromium, only_requests_to

import book
from book import links, search
from grader import REPO, course, nbtools
from grader.instructor import edition
from proof import answers

pytestmark = pytest.mark.xdist_group("book")  # one worker builds the site once
FAST = "safe_norm"


@pytest.fixture(scope="session")
def site():
    """`python -m book` as `make book` runs it: the real course into build/book/."""
    done = subprocess.run([sys.executable, "-m", "book"], cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    return book.SITE, done.stdout


def page(site_dir: Path, name: str) -> str:
    return (site_dir / name).read_text(encoding="utf-8")


def test_every_chapter_notebook_and_exercise_has_a_page_in_reading_order(site):
    site_dir, log = site
    print(log)
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        assert (site_dir / "notebooks" / f"{path.stem}.html").is_file(), f"no page for {path.name}"
    for assignment in course.ASSIGNMENTS:
        assert (site_dir / "exercises" / assignment / f"{assignment}.html").is_file(), f"no page for {assignment}"
    order = list(dict.fromkeys(re.findall(r'href="notebooks/([^"#]+)\.html"', page(site_dir, "index.html"))))
    assert sorted(order) == [p.stem for p in notebooks], f"the index lists {order}"
    parts = ["intro", "main", "closing", "appendix"]
    kind = [
        parts[0] if n == "00_intro" else parts[1] if n.startswith("4.") else parts[2] if n == "99_closing" else parts[3]
        for n in order
    ]
    assert kind == sorted(kind, key=parts.index), f"not intro, main line, closing, appendices: {order}"
    main = [n for n in order if n.startswith("4.")]
    assert main[0].startswith("4.1_") and main[-1].startswith("4.10c_"), main
    assert main.index("4.9c_softmax_case_study") < main.index("4.10a_when_custom_rules"), main
    appendix = page(site_dir, "notebooks/A_4.4_taylor_jet.html")
    assert "⚪ 选读：这是附录" in appendix, "an appendix is not marked optional"
    assert "这是附录" not in page(site_dir, "notebooks/4.4_higher_order.html")
    assert "附录（⚪ 选读）" in page(site_dir, "index.html"), "the index does not mark the appendices optional"


def test_pages_show_the_outputs_markers_reading_times_and_the_student_edition(site):
    site_dir, _ = site
    chapter = page(site_dir, "notebooks/4.1_modes_linearize.html")
    assert "预计学习时间" in chapter and "cell_output" in chapter, "no reading time or no executed output"
    assert re.search(r'<img [^>]*src="../_images/[^"]+\.png"', chapter), "the chapter's figure is missing"
    text = "".join(page(site_dir, f"notebooks/{p.stem}.html") for p in (REPO / "notebooks").glob("*.ipynb"))
    for marker in ("❌", "✅", "🧪", "🟢 必读"):
        assert marker in text, f"{marker} is not shown anywhere"
    # Students read the site: it sends them to the edition their instructor hands out, and never
    # asks them to run an instructor's command (make student builds the edition in the course repository).
    for name in ("index.html", "notebooks/4.1_modes_linearize.html", "exercises/index.html"):
        shown = as_text(site_dir / name)
        assert "student.zip" in shown and "make lab" in shown, f"{name} does not say how a student runs the code"
    instructor = [p.name for p in site_dir.rglob("*.html") if re.search(r"make student|build/student", as_text(p))]
    assert not instructor, f"pages that tell a student to run an instructor's command: {instructor}"


class _Text(HTMLParser):
    """The text a reader sees in a page (code highlighting splits lines into many spans)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


def as_text(path: Path) -> str:
    if path.suffix != ".html":
        return path.read_text(encoding="utf-8", errors="replace")
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return html.unescape("".join(parser.parts))


PUBLISHED = {".html", ".js", ".txt", ".ipynb", ".json"}


def site_as_text(site_dir: Path, scratch: Path) -> list[Path]:
    """The text of every published page and file of the site (MathJax aside), one file each."""
    published = []
    for path in sorted(site_dir.rglob("*")):
        if path.is_file() and path.suffix in PUBLISHED and "mathjax" not in path.parts:
            text = scratch / str(path.relative_to(site_dir)).replace("/", "__")
            text.write_text(as_text(path), encoding="utf-8")
            published.append(text)
    return published


@pytest.fixture(scope="module")
def site_text(site, tmp_path_factory):
    return site_as_text(site[0], tmp_path_factory.mktemp("site-text"))


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_the_site_shows_no_solution_hidden_test_or_catalogued_answer(site, site_text, assignment):
    site_dir, _ = site
    secrets = edition.secret_passages(assignment) | edition.catalogue_passages(assignment)
    assert secrets, f"{assignment}: found nothing to protect, so the check would prove nothing"
    statement = as_text(site_dir / "exercises" / assignment / f"{assignment}.html")
    assert "可见测试" in statement, "the exercise page lost its visible tests"
    found = edition.leaks(secrets, site_text)
    assert not found, "the website publishes:\n" + "\n".join(found)


def test_no_local_link_of_the_site_is_broken(site):
    site_dir, _ = site
    broken, external = links.check(site_dir)
    assert not broken, "broken links:\n" + "\n".join(broken)
    print("external links (not fetched):", *external, sep="\n  ")
    inner = page(site_dir, "notebooks/99_closing.html")
    assert 'href="00_intro.html#' in inner, "a link to another notebook's heading was not resolved to its page"
    assert 'href="../exercises/' in page(site_dir, "notebooks/00_intro.html"), "no link to the exercises"


def test_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.html").write_text('<p id="here"></p><a href="b.html#there">x</a><img src="gone.png">')
    (tmp_path / "b.html").write_text('<a href="a.html#here">ok</a><a href="https://example.org/">web</a>')
    broken, external = links.check(tmp_path)
    assert broken == ["a.html: b.html#there (no such anchor)", "a.html: gone.png (no such file)"], broken
    assert external == ["https://example.org/"]


def test_chromium_reads_the_site_offline_with_figures_math_and_chinese_search(site):
    executable = chromium()
    from playwright.sync_api import sync_playwright

    site_dir, _ = site
    outside = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport={"width": 1300, "height": 1000})
            tab.route("**/*", only_requests_to("file://", outside))
            tab.goto((site_dir / "index.html").as_uri())
            assert "第 4 章 进阶自动微分" in tab.title()
            tab.goto((site_dir / "notebooks" / "4.1_modes_linearize.html").as_uri())
            tab.wait_for_function(
                "window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                " && document.querySelectorAll('.MathJax, .MathJax_Display').length > 0",
                timeout=60_000,
            )
            figures = tab.evaluate(
                "[...document.querySelectorAll('.cell_output img')].map(i => i.complete && i.naturalWidth)"
            )
            math = tab.locator(".MathJax").count()
            tab.screenshot(path=str(REPO / "build" / "book-4.1.png"))
            found = {}
            for term in ("余切", "残差"):
                tab.goto((site_dir / "index.html").as_uri())
                box = tab.locator("input[name=q]").first
                if not box.is_visible():  # the theme folds the search field into a button on narrow pages
                    tab.keyboard.press("Control+k")
                box = tab.locator("input[name=q]:visible").first
                box.fill(term)
                box.press("Enter")
                # Sphinx shows the results one by one, then writes the summary line; each result's
                # snippet arrives after it (book/snippets.py: the page's text, also from file://).
                tab.wait_for_function(
                    "document.querySelector('#search-results .search-summary')?.innerText.length > 0", timeout=60_000
                )
                tab.wait_for_function(SNIPPETS_SHOWN, timeout=30_000)
                results = tab.eval_on_selector_all("#search-results ul.search li", RESULTS)
                found[term] = {Path(href.split("?")[0].split("#")[0]).stem: snippet for href, snippet in results}
        finally:
            browser.close()
    assert not outside, f"the site asked the network for {outside}"
    assert figures and all(figures), f"figures that did not load: {figures}"
    assert math > 0, "no math rendered"
    assert "4.3_vjp" in found["余切"], found["余切"]
    assert {"4.4_higher_order", "4.6_custom_vjp"} <= set(found["残差"]), found["残差"]
    for term, results in found.items():  # every result has a snippet, and the pages above show the word
        assert all(results.values()), f"results for {term} without a snippet: {results}"
    for term, stem in (("余切", "4.3_vjp"), ("残差", "4.4_higher_order"), ("残差", "4.6_custom_vjp")):
        assert term in found[term][stem], f"the snippet of {stem} for {term}: {found[term][stem]}"


# —— search: every term a reader types finds the page that teaches it (issue #52) ——

# The page that teaches each Chinese term of STYLE.md's glossary (book/glossary.txt), and the
# course's words that a newcomer searched for in vain (issue #52).
TAUGHT_IN = {
    "原始值": "4.2_jvp",
    "切向量": "4.2_jvp",
    "余切": "4.3_vjp",
    "余切向量": "4.3_vjp",
    "雅可比-向量积": "4.2_jvp",
    "向量-雅可比积": "4.3_vjp",
    "海森-向量积": "4.4_higher_order",
    "线性化": "4.1b_linearize_costs",
    "转置": "4.1b_linearize_costs",
    "前向模式": "4.1_modes_linearize",
    "反向模式": "4.1_modes_linearize",
    "扰动混淆": "A_4.4_perturbation_confusion",
    "着色": "4.5b_sparse_coloring",
    "隐函数定理": "4.10b_implicit_adjoint",
    "伴随": "4.10b_implicit_adjoint",
    "不动点": "A_4.6_implicit_fixed_point",
    "直通估计器": "4.9b_stop_gradient_patterns",
    "停止梯度": "4.9b_stop_gradient_patterns",
    "追踪": "4.8b_loops",
    "非规格化数": "A_4.10_silent_float_failures",
    "刷成 0": "A_4.10_silent_float_failures",
    "对照": "A_4.8_scan_rnn_bptt",
    "核对": "A_4.9a_spectral_gradients",
    "循环状态": "4.8a_cond_scan",
    "残差": "4.1_modes_linearize",
    "残量": "A_4.6_custom_root",
    "批量维": "A_4.3_per_example_gradients",
    "下译": "A_4.8_checkpoint_policies",
    "高斯-牛顿-向量积": "A_4.5_curvature_products",
    "承诺损失": "4.9b_stop_gradient_patterns",
    "雅可比矩阵": "4.5_jacobians_hessians",
    "雅可比": "4.5_jacobians_hessians",
    "海森矩阵": "4.5_jacobians_hessians",
    "自动微分": "A_4.1_why_autodiff",
    "稀疏着色": "4.5b_sparse_coloring",
}
# The words a reader would type to find each page, each taken from the page's title.
TITLE_TERMS = {
    "00_intro": ["进阶自动微分", "环境检查"],
    "4.1_modes_linearize": ["前向模式", "反向模式"],
    "4.1b_linearize_costs": ["线性化", "转置", "代价"],
    "4.2_jvp": ["雅可比-向量积", "JVP", "jax.jvp"],
    "4.3_vjp": ["向量-雅可比积", "VJP", "jax.vjp"],
    "4.4_higher_order": ["高阶导数"],
    "4.5_jacobians_hessians": ["雅可比矩阵", "海森矩阵"],
    "4.5b_sparse_coloring": ["稀疏雅可比矩阵", "着色法"],
    "4.6_custom_vjp": ["jax.custom_vjp", "反向规则"],
    "4.7_custom_jvp": ["jax.custom_jvp", "前向规则"],
    "4.8a_cond_scan": ["控制流", "cond", "scan", "jax.checkpoint"],
    "4.8b_loops": ["对循环求导", "fori_loop", "while_loop"],
    "4.9a_nondifferentiable": ["不可微"],
    "4.9b_stop_gradient_patterns": ["停止梯度", "直通估计器", "固定目标"],
    "4.9c_softmax_case_study": ["jax.nn.softmax", "x_max"],
    "4.10a_when_custom_rules": ["求导规则"],
    "4.10b_implicit_adjoint": ["隐式层", "连续伴随法"],
    "4.10c_adjoint_stability": ["连续伴随法", "稳定性"],
    "99_closing": ["测验", "小结"],
    "A_4.1_linear_programs": ["计算量", "盲区", "vmap(f_lin)"],
    "A_4.1_why_autodiff": ["自动微分", "有限差分", "符号求导"],
    "A_4.2_dtypes_float0": ["dtype", "float0", "aux"],
    "A_4.3_per_example_gradients": ["逐样本梯度", "批处理规则", "DP-SGD", "custom_vmap"],
    "A_4.4_perturbation_confusion": ["扰动混淆"],
    "A_4.4_taylor_jet": ["Taylor 模式", "jax.experimental.jet"],
    "A_4.5_complex_numbers": ["复数", "共轭约定", "holomorphic"],
    "A_4.5_curvature_products": ["曲率", "Fisher", "Hutchinson"],
    "A_4.5_hessian_custom_vjp": ["jax.hessian", "custom_vjp"],
    "A_4.5_sparse_coloring": ["稀疏雅可比矩阵", "自动探测", "贪心着色", "BCOO"],
    "A_4.6_custom_linear_solve": ["隐式求导", "lax.custom_linear_solve"],
    "A_4.6_custom_root": ["隐式求导", "lax.custom_root"],
    "A_4.6_custom_vjp_extras": ["custom_vjp", "闭包", "梯度反转层"],
    "A_4.6_implicit_fixed_point": ["不动点"],
    "A_4.7_custom_jvp_extras": ["defjvps", "pure_callback", "nondiff_argnums"],
    "A_4.8_checkpoint_policies": ["jax.checkpoint", "策略", "重算"],
    "A_4.8_checkpoint_scan_memory": ["jax.checkpoint", "重算", "内存"],
    "A_4.8_fori_while_details": ["谓词", "跳变"],
    "A_4.8_scan_rnn_bptt": ["scan", "RNN", "BPTT"],
    "A_4.9a_spectral_gradients": ["特征分解", "奇异值分解"],
    "A_4.9b_more_stop_gradient": ["SimSiam", "截断 BPTT", "平滑替代"],
    "A_4.10_rules_extras": ["symbolic_zeros", "伴随法", "jax.closure_convert"],
    "A_4.10_silent_float_failures": ["浮点", "静默失败"],
    "A_99_cheat_sheet": ["速查表"],
    "A_99_update_notes": ["更新说明"],
    "clip_global_norm": ["全局范数", "裁剪梯度"],
    "coloring": ["着色", "带状雅可比矩阵"],
    "ode_adjoint": ["连续伴随法", "ODE 求解器"],
    "residuals": ["残差", "保存还是重算"],
    "safe_norm": ["向量范数", "custom_jvp"],
    "soft_values": ["软贝尔曼方程", "不动点"],
    "softplus": ["softplus", "jax.custom_vjp"],
    "stop_gradient": ["stop_gradient"],
}


def glossary_terms(style: str) -> list[str]:
    """The Chinese terms of STYLE.md's glossary table, in its order: each form a row gives, its
    asides left out (parentheses, "; not …", ", as …", English words such as "on first use")."""
    table = style.split("| English | 中文 |", 1)[1].split("\n\n", 1)[0]
    found = []
    for row in table.strip().splitlines()[1:]:
        chinese = re.split(r"[;,]", re.sub(r"\([^)]*\)", "", row.strip("|").split("|")[1]))[0]
        for form in chinese.split(" / "):
            term = " ".join(re.sub(r"[A-Za-z`_]+", " ", form).split())
            if re.search(r"[\u4e00-\u9fff]", term):
                found.append(term)
    return found


def style_guide() -> Path | None:
    """STYLE.md, kept beside the course's main checkout (../shared/); a worktree finds the main
    checkout through its git directory."""
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    checkouts = [REPO] + ([Path(common).parent] if common else [])
    return next(
        (p.parent / "shared" / "STYLE.md" for p in checkouts if (p.parent / "shared" / "STYLE.md").is_file()), None
    )


def test_glossary_terms_reads_each_form_of_a_row_without_its_asides():
    style = """| English | 中文 |
| --- | --- |
| cotangent | 余切 / 余切向量 |
| stop gradient | 停止梯度 (`stop_gradient`) |
| trace / tracer | 追踪 / tracer |
| flush to zero | 刷成 0 (one term; not 冲成 0 / 刷零) |
| lowering | 下译 (lowering) on first use; not 降级 |
| GN product | 高斯-牛顿-向量积, as 海森-向量积 |

Markers"""
    assert glossary_terms(style) == ["余切", "余切向量", "停止梯度", "追踪", "刷成 0", "下译", "高斯-牛顿-向量积"]


def test_the_book_s_glossary_list_is_style_md_s_glossary():
    style = style_guide()
    if style is None:
        pytest.skip("../shared/STYLE.md is not beside this checkout: book/glossary.txt was not compared with it")
    assert search.terms(search.GLOSSARY) == glossary_terms(style.read_text(encoding="utf-8")), (
        "book/glossary.txt differs from STYLE.md's glossary: write there the terms glossary_terms derives"
    )


def page_titles() -> dict[str, str]:
    paths = book.Project().notebooks + book.Project().exercises
    return {path.stem: book.title(nbformat.read(path, as_version=4)) for path in paths}


def test_every_glossary_term_and_every_page_title_has_its_search_words():
    titles = page_titles()
    untaught = [term for term in search.terms(search.GLOSSARY) if term not in TAUGHT_IN]
    assert not untaught, f"glossary terms without the page that teaches them in TAUGHT_IN: {untaught}"
    assert set(TAUGHT_IN.values()) <= set(titles), set(TAUGHT_IN.values()) - set(titles)
    assert sorted(TITLE_TERMS) == sorted(titles), "TITLE_TERMS names a page for each notebook and exercise"
    for stem, words in TITLE_TERMS.items():
        assert words and all(word in titles[stem] for word in words), f"{stem}: {words} not all in {titles[stem]!r}"


def test_chromium_search_finds_the_page_that_teaches_each_term(site):
    """Each glossary term, each word a newcomer tried, and the key words of every page's title,
    written as a reader types them: the page that teaches it is among the results. The first
    query arrives through the search page's address, as the search box sends it; the others are
    run on the same page as it runs that one (reloading the page's index for each query took a
    minute more)."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    site_dir, _ = site
    searches = sorted(set(TAUGHT_IN.items()) | {(word, stem) for stem, words in TITLE_TERMS.items() for word in words})
    found, outside = {}, []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            tab.route("**/*", only_requests_to("file://", outside))
            terms = list(dict.fromkeys(term for term, _ in searches))
            tab.goto(f"{(site_dir / 'search.html').as_uri()}?q={quote(terms[0])}")  # as the search box sends it
            for term in terms:
                found[term] = [Path(href.split("?")[0].split("#")[0]).stem for href in tab.evaluate(SEARCH, term)]
        finally:
            browser.close()
    assert not outside, f"the search asked the network for {outside}"
    missed = {f"{term} → {stem}": found[term][:8] for term, stem in searches if stem not in found[term]}
    assert not missed, f"{len(missed)} of {len(searches)} searches miss the page (first results shown): {missed}"


# A query on the search page as the page runs the one in its address (Sphinx's Search.performSearch,
# once the index is loaded): the results' links once Sphinx has written its summary line.
SEARCH = """async (term) => {
  const out = document.getElementById('search-results');
  const done = async () => {
    while (!out.querySelector('.search-summary')?.innerText) await new Promise((r) => setTimeout(r, 20));
  };
  await done();  // the query of the page's address first
  out.replaceChildren();
  Search.performSearch(term);
  await done();
  return [...out.querySelectorAll('ul.search li > a')].map((a) => a.href);
}"""


SNIPPETS_SHOWN = (
    "() => [...document.querySelectorAll('#search-results ul.search li')].every(li => li.querySelector('p.context'))"
)
RESULTS = "lis => lis.map(li => [li.querySelector('a').href, li.querySelector('p.context')?.textContent || ''])"
# WCAG 2 contrast of each piece of the banner's text against what is behind it: the colours as
# Chromium computed them, backgrounds composited down to the page (an rgba one over its parents').
BANNER_CONTRAST = """() => {
  const parse = s => {
    const v = (s.match(/[\\d.]+/g) || []).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a)];
  const behind = e => {
    const layers = [];
    for (; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255]);
  };
  const luminance = rgb => rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + [0.2126, 0.7152, 0.0722][i] * v, 0);
  const banner = document.querySelector('.bd-header-announcement');
  return [banner, ...banner.querySelectorAll('*')].flatMap(e => {
    const text = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!text) return [];
    const bg = behind(e), fg = over(parse(getComputedStyle(e).color), bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    return [[text, (hi + 0.05) / (lo + 0.05)]];
  });
}"""
# Font sizes in CSS pixels where a student reads: prose, code and its outputs, and the two sidebars.
FONT_SIZES = """() => Object.fromEntries([
  ['prose', 'article.bd-article p'], ['code', 'article.bd-article div.highlight pre'],
  ['output', 'article.bd-article .cell_output pre'], ['contents', '.bd-sidebar-primary .bd-links a'],
  ['this page', '.bd-sidebar-secondary .toc-entry a'],
].map(([what, selector]) => [what, [...document.querySelectorAll(selector)]
  .map(e => parseFloat(getComputedStyle(e).fontSize))]))"""
LAPTOP = {"width": 1366, "height": 768}
MIN_PX = {"prose": 17, "code": 15, "output": 15, "contents": 15, "this page": 15}


def test_the_banner_meets_wcag_aa_and_the_text_is_readable_on_a_laptop(site):
    """On a laptop's screen (1366 x 768), in the theme's light and dark modes: every piece of the
    banner's text, inline code included, has a contrast of at least 4.5:1 (WCAG 2 AA for normal
    text) with what is behind it; prose is at least 17 px, code, outputs and the sidebars 15 px."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    site_dir, _ = site
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport=LAPTOP)
            tab.goto((site_dir / "notebooks" / "4.1_modes_linearize.html").as_uri())
            contrast = {}
            for mode in ("light", "dark"):
                tab.evaluate(f"document.documentElement.dataset.theme = '{mode}'")
                contrast[mode] = tab.evaluate(BANNER_CONTRAST)
            sizes = tab.evaluate(FONT_SIZES)
            tab.screenshot(path=str(REPO / "build" / "book-laptop.png"))
        finally:
            browser.close()
    for mode, pieces in contrast.items():
        assert pieces and any("make lab" in text for text, _ in pieces), f"{mode}: the banner's text: {pieces}"
        low = [(text, round(ratio, 2)) for text, ratio in pieces if ratio < 4.5]
        assert not low, f"{mode} mode: banner text below 4.5:1: {low}"
    for what, least in MIN_PX.items():
        assert sizes[what] and min(sizes[what]) >= least, f"{what}: {sorted(set(sizes[what]))} px, want >= {least}"


# —— a tiny project: the executed-copy cache and the planted answer ——

TINY_TITLE = "# 小测试页\n\n预计学习时间：约 1 分钟"
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def build(project: book.Project) -> book.Assembly:
    assembly = book.assemble(project)
    done = book.sphinx(project)
    assert done.returncode == 0, done.stdout + done.stderr
    return assembly


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One notebook whose executed copy `make test` kept, and an exercise with an answer planted
    in it; built once (a second build is the stale-output test's own)."""
    root = tmp_path_factory.mktemp("tiny-course")
    project = book.Project(root=root, cache=root / "executed", source=root / "src", site=root / "site")
    (root / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook(metadata=nbtools.KERNEL_METADATA)
    nb.cells = [nbformat.v4.new_markdown_cell(TINY_TITLE), nbformat.v4.new_code_cell("print(6 * 7)")]
    source = root / "notebooks" / "00_tiny.ipynb"
    nbformat.write(nb, source)
    # What `make test` keeps, with an output the real run would never print: seeing it in the page
    # proves the page came from the kept copy, not from a second execution.
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="kept-by-make-test\n")]
    nb.metadata[nbtools.SOURCE_DIGEST_KEY] = nbtools.source_digest(source)
    nbtools.keep(nb, nbtools.executed_copy(source, project.cache, project.root))

    planted = answers.with_answer(answers.release_notebook(FAST), answers.reference_answer(FAST))
    for cell in planted.cells:  # its links lead to chapters this tiny course does not have
        cell.source = LINK.sub(r"\1", cell.source) if cell.cell_type == "markdown" else cell.source
    (root / "exercises" / FAST).mkdir(parents=True)
    nbformat.write(planted, root / "exercises" / FAST / f"{FAST}.ipynb")
    assembly = build(project)
    return project, source, assembly, page(project.site, "notebooks/00_tiny.html")


def test_the_book_renders_the_kept_copy_and_executes_a_changed_or_missing_notebook_again(tiny):
    project, source, first, shown = tiny
    assert (first.reused, first.executed) == (["00_tiny.ipynb"], [])
    assert "kept-by-make-test" in shown

    nb = nbformat.read(source, as_version=4)
    nb.cells[1].source = "print(6 * 8)"
    nbformat.write(nb, source)
    second = build(project)
    shown = page(project.site, "notebooks/00_tiny.html")
    assert second.executed == ["00_tiny.ipynb"], "a changed notebook was not executed again"
    assert "48" in shown and "kept-by-make-test" not in shown, "the page shows a stale output"
    copy = nbtools.executed_copy(source, project.cache, project.root)
    assert nbtools.fresh_executed_copy(source, copy), "the new run was not kept for the next build"
    copy.unlink()
    assert book.assemble(project).executed == ["00_tiny.ipynb"], "a missing copy was not executed"
    assert nbtools.fresh_executed_copy(source, copy)


def test_the_leak_check_finds_an_answer_planted_in_an_exercise_page(tiny, tmp_path):
    project = tiny[0]
    found = edition.leaks(edition.secret_passages(FAST), site_as_text(project.site, tmp_path))
    assert any(name.startswith(f"exercises__{FAST}__{FAST}.html") for name in found), found
