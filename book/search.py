"""Chinese search that finds the course's own words (a Sphinx extension, book/conf.py).

Sphinx cuts each page into words with jieba's search mode (`html_search_language = "zh"`) and
keeps words of two characters or more; the search page cut no query at all, so a query matched
only when it happened to be one word of the index (雅可比矩阵 was cut 雅/可比/矩阵 and never found).
Both sides now cut the same way:

* the index: jieba learns the glossary's terms (glossary.txt, from STYLE.md) and the course's
  other words (words.txt) as a user dictionary, so 雅可比 and 雅可比矩阵 are words of the index;
* the query: `ch4-search-words.js`, on the search page only, cuts each run of Chinese characters
  into the longest words the index holds, left to right, dropping what is left as single
  characters (the index holds none).
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
GLOSSARY = HERE / "glossary.txt"
COURSE_WORDS = HERE / "words.txt"
QUERY_FILE = "ch4-search-words.js"
HAN_WORD = re.compile(r"[\u4e00-\u9fff]{2,}")  # jieba's user dictionary: one word a line, no spaces


def terms(path: Path) -> list[str]:
    """The lines of a word list, comments (#) and blank lines left out."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def dictionary() -> list[str]:
    """jieba's user dictionary: each run of Chinese characters of the two lists, once. A term
    written with hyphens or a digit (雅可比-向量积, 刷成 0) gives its parts, which is also how the
    search page splits such a query."""
    words = [word for path in (GLOSSARY, COURSE_WORDS) for term in terms(path) for word in HAN_WORD.findall(term)]
    return list(dict.fromkeys(words))


def _use_dictionary(app, config) -> None:
    path = Path(app.doctreedir) / "jieba-words.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(dictionary()) + "\n", encoding="utf-8")
    config.html_search_options = {**config.html_search_options, "dict": str(path)}


def _on_page(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":  # as in book/snippets.py: the search page alone loads it
        app.add_js_file(QUERY_FILE)


def setup(app):
    app.connect("config-inited", _use_dictionary)
    app.connect("html-page-context", _on_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
