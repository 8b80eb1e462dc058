"""The link check of the built site: every local href and src resolves, offline.

A relative link must name a file of the site and, with a #fragment, an id or name in that page.
Links to the web are only collected (the machines have no internet to fetch them).
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL_SCHEMES = ("http", "https", "mailto", "data", "javascript")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.targets: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag != "meta" else ():
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) is not None and tag != "base":
                self.targets.append(html.unescape(attrs[key]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def check(site: Path) -> tuple[list[str], list[str]]:
    """(broken local links as 'page: target (why)', external links) over every page of `site`."""
    pages, broken, external = {}, [], set()

    def parsed(path: Path) -> _Page:
        if path not in pages:
            pages[path] = _parse(path)
        return pages[path]

    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] == "_static":
            continue  # the theme's templates and MathJax's files, not pages
        for target in parsed(page).targets:
            parts = urlsplit(target)
            if parts.scheme in EXTERNAL_SCHEMES or target.startswith("//"):
                external.add(target)
                continue
            if parts.scheme:
                broken.append(f"{page.relative_to(site)}: {target} (scheme {parts.scheme}: not offline)")
                continue
            file = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if file.is_dir():
                file = file / "index.html"
            if not file.is_file():
                broken.append(f"{page.relative_to(site)}: {target} (no such file)")
            elif parts.fragment and file.suffix == ".html" and unquote(parts.fragment) not in parsed(file).ids:
                broken.append(f"{page.relative_to(site)}: {target} (no such anchor)")
    return broken, sorted(external)
