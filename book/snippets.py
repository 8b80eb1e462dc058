"""Search results with snippets on a site opened from disk (a Sphinx extension, book/conf.py).

Sphinx's search page shows each result's snippet by fetching the result's page, which a browser
refuses for a page opened from `file://`: the results came without snippets. While writing the
site, this extension keeps the text of every page, section by section, as `_static/ch4-page-text.js`
(`window.CH4_PAGE_TEXT = {docname: "<div role=main><section id=…>text…</section></div>"}`), in the
shape Sphinx's own `htmlToText` reads; on the search page only, `ch4-search-snippets.js` (book/static/)
answers Sphinx's fetch of a page of this site from it. Served over HTTP the same text is used.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from docutils import nodes

TEXT_FILE = "ch4-page-text.js"
SHIM_FILE = "ch4-search-snippets.js"
SPACE = re.compile(r"\s+")


def section_html(node: nodes.Element) -> str:
    """A section (or a whole document) as Sphinx's snippet code reads it: its own text, then its
    subsections, each in a <section id=…> of its own, so that a result anchored to a section shows
    text of that section."""
    own, inner = [], []
    for child in node.children:
        if isinstance(child, nodes.section):
            inner.append(section_html(child))
        elif not isinstance(child, (nodes.comment, nodes.raw, nodes.substitution_definition)):
            own.append(child.astext())
    text = html.escape(SPACE.sub(" ", " ".join(own)).strip(), quote=False)
    body = text + "".join(inner)
    if isinstance(node, nodes.section) and node.get("ids"):
        return f'<section id="{html.escape(node["ids"][0])}"> {body}</section>'
    return body


def _keep_text(app, doctree, docname) -> None:
    app.ch4_page_text[docname] = f'<div role="main">{section_html(doctree)}</div>'


def _on_page(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":  # Sphinx resets a page's scripts after writing it: the other pages get neither
        app.add_js_file(TEXT_FILE)
        app.add_js_file(SHIM_FILE)


def _write_text(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        texts = json.dumps(dict(sorted(app.ch4_page_text.items())), ensure_ascii=False)
        Path(app.outdir, "_static", TEXT_FILE).write_text(f"window.CH4_PAGE_TEXT = {texts};\n", encoding="utf-8")


def setup(app):
    app.ch4_page_text = {}
    app.connect("doctree-resolved", _keep_text)
    app.connect("html-page-context", _on_page)
    app.connect("build-finished", _write_text)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
