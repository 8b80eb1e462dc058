"""Every promise README.md makes to instructors names the test that proves it (CONTRIBUTING.md,
"Every promise has a test").

A guarantee sentence, exactly as CONTRIBUTING defines it: a sentence of a bullet point (nested
ones included) in the English instructor sections of README.md (from `## For instructors:
grading a class` to `## For maintainers`), code blocks and tables left out, the Speed bullet left
out (it reports measurements of `python -m grader.benchmark`); plus each comment in those
sections' command blocks that states a default. The map in CONTRIBUTING.md gives each of them, by its opening
words, the tests that prove it; these tests hold the two together, so a new promise without a
test, a reworded one, or a test that no longer exists fails the suite.
"""

import ast
import re

from grader import REPO

README, CONTRIBUTING = REPO / "README.md", REPO / "CONTRIBUTING.md"
SECTIONS = ("## For instructors: grading a class", "## For maintainers")
SECTIONS_ZH = ("### 教师：给全班评分", "### 维护者")
MAP_TITLE = "## Every promise has a test"
LEFT_OUT = "Speed ("  # the bullet of measurements
# A sentence ends at . ! or ? (a closing parenthesis may follow) before a space and a capital
# letter, a backtick, * or (; never after "e.g." or "i.e.".
SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?:(?<=[.!?])|(?<=[.!?]\)))\s+(?=[A-Z`*(])")
TEST = re.compile(r"`(tests/test_\w+\.py)::(test_\w+)`")


def _between(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


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
    part = _between(README.read_text(encoding="utf-8").split("\n## 中文")[0], *SECTIONS)
    sentences = []
    for bullet in bullets(part):
        if not bullet.startswith(LEFT_OUT):
            sentences += SENTENCE_END.split(bullet)
    for block in re.findall(r"```.*?```", part, flags=re.S):
        sentences += [c.strip() for c in re.findall(r"#\s*([^#\n]*\bdefault\b[^#\n]*)$", block, flags=re.M)]
    return sentences


def promise_map() -> list[tuple[str, list[tuple[str, str]]]]:
    """(sentence opening, [(test file, test name)]) for each row of the map in CONTRIBUTING."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    table = text[text.index(MAP_TITLE) :].split("\n## ")[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")] if line.startswith("| ") else []
        if len(cells) == 2 and not set(cells[1]) <= {"-", " "} and cells[1] != "proven by":
            rows.append((cells[0].removesuffix("…").strip(), TEST.findall(cells[1])))
    return rows


def test_the_definition_finds_the_promises():
    """The splitter on the README as it is: enough sentences, each a whole one."""
    sentences = guarantee_sentences()
    assert len(sentences) >= 50, len(sentences)
    assert "A killed worker's task runs again elsewhere." in sentences
    assert "--nworkers N, default one per core" in sentences
    assert not [s for s in sentences if s.startswith(LEFT_OUT) or s.endswith(("e.g.", "i.e."))]


def test_every_guarantee_sentence_has_exactly_one_row_of_the_map():
    rows = [opening for opening, _ in promise_map()]
    unmapped = [s for s in guarantee_sentences() if sum(s.startswith(o) for o in rows) != 1]
    assert not unmapped, f"README sentences with no row (or several) in CONTRIBUTING's map: {unmapped}"
    stale = [o for o in rows if sum(s.startswith(o) for s in guarantee_sentences()) != 1]
    assert not stale, f"map rows that open no README sentence (or several): {stale}"


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


def test_the_chinese_sections_have_as_many_bullets():
    """The English sections are the reference; a promise added in one language only fails here."""
    readme = README.read_text(encoding="utf-8")
    english, chinese = _between(readme, *SECTIONS), _between(readme, *SECTIONS_ZH)

    def per_section(part):
        return [len(bullets(section)) for section in re.split(r"\n(?=#{2,4} )", part)]

    assert per_section(english) == per_section(chinese)
