"""Sphinx configuration of the course website (`make book`; docs/book.md says why each choice).

The source folder is assembled by `python -m book` under build/book-src/ from the executed
notebooks that `make test` keeps (build/executed/) and the released exercise statements; this
file is the configuration folder (`sphinx-build -c book/`), so nothing here is a page.
"""

import os

project = "第4章 进阶自动微分"
author = "课程组"
copyright = "课程组"
language = "zh_CN"
# book/snippets.py: search results with snippets from file://; book/search.py: the index and the
# query cut into the same words, the course's terms among them.
extensions = ["myst_nb", "book.snippets", "book.search"]

# Notebooks arrive executed (build/executed/, checked against the hash of their source by
# `python -m book`, which re-executes a stale or missing one). Sphinx must never run a kernel.
nb_execution_mode = "off"
# `$…$` and `$$…$$` as in Jupyter; headings get anchors the way the notebooks link to them
# (`4.3_vjp.ipynb#🟢-必读：…`: the heading's text with spaces as hyphens, see tests/test_links.py).
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 6
myst_heading_slug_func = "book.jupyter_slug"  # by name: Sphinx pickles its configuration
# Pygments' IPython traceback lexer stops at a backtick in an error message and falls back to
# plain text: the traceback is shown whole, only less coloured. Every other warning fails the build.
suppress_warnings = ["misc.highlighting_failure"]
# A notebook cell that prints text full of `<`, `>` and escapes is shown as text, not HTML.
nb_render_markdown_format = "myst"

# Chinese search: Sphinx segments the text with jieba (requirements.in), in its search mode; book/search.py
# gives jieba the course's words as a user dictionary and cuts the query against the index's words.
html_search_language = "zh"

# Math offline: MathJax 2 from the jupyter-server-mathjax package (the feedback pages use the
# same copy), put into _static/mathjax by `python -m book`. No CDN: the machines have no internet.
# book/static/ (relative to this folder): the site's own styles and the search page's snippet script.
html_static_path = [os.environ.get("CH4_BOOK_STATIC", "_static"), "static"]
html_css_files = ["ch4-book.css"]
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
# That package ships the HTML-CSS output with the STIX-Web fonts only (as grader/templates'
# feedback pages set too); MyST's own settings are for MathJax 3, so it leaves them out.
mathjax2_config = {
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
    "messageStyle": "none",
}
myst_update_mathjax = False

html_theme = "sphinx_book_theme"
html_title = project
html_last_updated_fmt = None
html_copy_source = False  # the executed notebooks are large; the student edition is where to run them
html_show_sourcelink = False
html_theme_options = {
    "use_download_button": False,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    # Shown on every page, to the student who reads it: this site is read-only; the student edition
    # (the instructor hands it out) is where to run the code. Its colours: book/static/ch4-book.css.
    "announcement": "这个网站只能阅读。要运行代码、完成计分练习，请打开老师发给你的学生版"
    "（<code>student.zip</code> 解压后的文件夹），在其中运行 <code>make lab</code>。",
}
