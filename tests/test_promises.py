"""Every promise the instructor pages in docs/ make names the test that proves it (the map is
docs/promises.md; CONTRIBUTING.md, "Every promise has a test", says how to keep it).

A guarantee sentence, exactly as docs/promises.md defines it: a sentence of a bullet point
(nested ones included) on an instructor page (`PAGES`: grading a class, a big class on a
cluster, nbgrader's tools, the shared server), code blocks and tables left out; plus each
comment in those pages' command blocks that states a default. Measurements live on
docs/performance.md, which is not an instructor page. The map in docs/promises.md gives each of
them, by its opening words, the tests that prove it; these tests hold the two together, so a new
promise without a test, a reworded one, or a test that no longer exists fails the suite.
"""

import ast
import re

from grader import REPO

DOCS = REPO / "docs"
PAGES = tuple(DOCS / name for name in ("grading.md", "cluster.md", "nbgrader-tools.md", "shared-server.md"))
MAP, README = DOCS / "promises.md", REPO / "README.md"
MAP_TITLE = "## The map"
CHINESE = "\n## 中文"  # README: the English part, then the Chinese one
# A sentence ends at . ! or ? (a closing parenthesis may follow) before a space and a capital
# letter, a backtick, * or (; never after "e.g." or "i.e.".
SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?:(?<=[.!?])|(?<=[.!?]\)))\s+(?=[A-Z`*(])")
TEST = re.compile(r"`(tests/test_\w+\.py)::(test_\w+)`")


def bullets(part: str) -> list[str]:
    """The bullet points of `part`, nested ones included, each joined into one line (code blocks
    and tables left out)."""
    found, current = [], None
    for line in re.sub(r"```.*?```", "", part, flags=re.S).splitlines():
        if bullet := re.match(r" *- ", line):
            current = [line[bullet.end() :].strip()]
            found.append(current)
        elif current is not None and line.startswith("  ") and not line.strip().startswith("|"):
            current.append(line.strip())
        else:
            current = None
    return [" ".join(b) for b in found]


def guarantee_sentences() -> list[str]:
    sentences = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for bullet in bullets(text):
            sentences += SENTENCE_END.split(bullet)
        for block in re.findall(r"```.*?```", text, flags=re.S):
            sentences += [c.strip() for c in re.findall(r"#\s*([^#\n]*\bdefault\b[^#\n]*)$", block, flags=re.M)]
    return sentences


def promise_map() -> list[tuple[str, list[tuple[str, str]]]]:
    """(sentence opening, [(test file, test name)]) for each row of the map in docs/promises.md."""
    text = MAP.read_text(encoding="utf-8")
    table = text[text.index(MAP_TITLE) :].split("\n## ")[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")] if line.startswith("| ") else []
        if len(cells) == 2 and not set(cells[1]) <= {"-", " "} and cells[1] != "proven by":
            rows.append((cells[0].removesuffix("…").strip(), TEST.findall(cells[1])))
    return rows


def test_the_definition_finds_the_promises():
    """The splitter on the pages as they are: enough sentences, each a whole one."""
    sentences = guarantee_sentences()
    assert len(sentences) >= 50, len(sentences)
    assert "A killed worker's task runs again elsewhere." in sentences
    assert "--nworkers N, default one per core" in sentences
    assert not [s for s in sentences if s.endswith(("e.g.", "i.e."))]


def test_every_guarantee_sentence_has_exactly_one_row_of_the_map():
    rows = [opening for opening, _ in promise_map()]
    unmapped = [s for s in guarantee_sentences() if sum(s.startswith(o) for o in rows) != 1]
    assert not unmapped, f"sentences of the instructor pages with no row (or several) in docs/promises.md: {unmapped}"
    stale = [o for o in rows if sum(s.startswith(o) for s in guarantee_sentences()) != 1]
    assert not stale, f"map rows that open no sentence of the instructor pages (or several): {stale}"


def functions_in(path: str) -> set[str]:
    if not (REPO / path).is_file():
        return set()
    module = ast.parse((REPO / path).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def test_every_row_names_tests_that_exist():
    for opening, tests in promise_map():
        assert tests, f"the map names no test for: {opening}"
        missing = [f"{path}::{name}" for path, name in tests if name not in functions_in(path)]
        assert not missing, f"the map names, for '{opening}', tests that do not exist: {missing}"


def test_the_readme_says_the_same_in_both_languages():
    """README's English part is the reference; its Chinese part has the same sections, the same
    bullets in each, the same commands and the same links to the pages, so a step or a page added
    in one language only fails here."""
    english, chinese = README.read_text(encoding="utf-8").split(CHINESE)

    def sections(part):
        return [len(bullets(section)) for section in re.split(r"\n(?=#{2,4} )", part)]

    def commands(part):
        return [
            line.split("#")[0].strip()
            for block in re.findall(r"```.*?```", part, flags=re.S)
            for line in block.splitlines()[1:-1]
        ]

    def links(part):
        return sorted(target for target in re.findall(r"\]\(([^)\s]+)\)", part) if not target.startswith("#"))

    assert sections(english) == sections(chinese)
    assert commands(english) == commands(chinese)
    assert links(english) == links(chinese)
