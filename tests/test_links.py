"""Every relative link in the course text points at a file (and heading) that exists."""

import re
from urllib.parse import unquote

import nbformat
import pytest

from grader import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "exercises").glob("*/*.ipynb"))
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]


def markdown_of(path):
    if path.suffix == ".ipynb":
        return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


def headings(path):
    return {
        line.lstrip("#").strip().replace(" ", "-") for line in markdown_of(path).splitlines() if line.startswith("#")
    }


@pytest.mark.parametrize("page", PAGES + DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(markdown_of(page)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # web links and in-page anchors are not checked here
        file, _, anchor = unquote(target).partition("#")
        path = (page.parent / file).resolve()
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".ipynb" and anchor not in headings(path):
            broken.append(target + " (no such heading)")
    assert not broken, f"{page.relative_to(REPO)}: broken links {broken}"
