"""What the docs count about the course is what the tree holds (issue #52): how many exercises,
how many chapter notebooks, where the main line starts and ends. docs/performance.md is left
out: it is a record of measurements, each stating the counts of the run it measured."""

import re

import pytest

import book
from grader import REPO, course

DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md"] + sorted(
    p for p in (REPO / "docs").glob("*.md") if p.name != "performance.md"
)
WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
NUMBERS = {word: n for n, word in enumerate(WORDS, 1)} | {word: n for n, word in enumerate("一二三四五六七八九十", 1)}
PROJECT = book.Project()
MAIN_LINE = [p.stem.split("_")[0] for p in PROJECT.notebooks if book.MAIN_LINE.match(p.stem)]
# What each phrase counts; a count in words or digits.
COUNTED = {
    "exercises": (r"(?<!other )\b(\w+) (?:graded )?(?:exercises|assignments)\b", len(course.ASSIGNMENTS)),
    "the other … assignments": (r"\bother (\w+) (?:exercises|assignments)\b", len(course.ASSIGNMENTS) - 1),
    "(all …)": (r"\(all (\w+)\)", len(course.ASSIGNMENTS)),
    "`make check` runs all …": (r"`make check` runs all (\w+)\b", len(course.ASSIGNMENTS)),
    "… 道练习": (r"(\w+) 道(?:计分)?练习|全部 (\w+) 道", len(course.ASSIGNMENTS)),
    "chapter notebooks": (r"\b(\w+) chapter (?:notebooks|pages)\b", len(PROJECT.notebooks)),
}
MAIN_LINE_RANGE = re.compile(r"(4\.\d+[a-z]?) … (4\.\d+[a-z]?)")


def number(word: str) -> int | None:
    return int(word) if word.isdigit() else NUMBERS.get(word.lower())


def counts(text: str, pattern: str) -> list[int]:
    return [n for match in re.finditer(pattern, text) for word in match.groups() if word and (n := number(word))]


def test_the_counting_finds_words_and_digits():
    assert counts("solve eight graded exercises; 7 exercises; the exercises", COUNTED["exercises"][0]) == [8, 7]
    assert counts("完成 8 道计分练习；检查全部 8 道", COUNTED["… 道练习"][0]) == [8, 8]
    assert number("Eight") == 8 and number("several") is None


@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_the_docs_counts_are_the_tree_s(doc):
    text = doc.read_text(encoding="utf-8")
    wrong = [
        f"{what}: says {n}, the tree has {actual}"
        for what, (pattern, actual) in COUNTED.items()
        for n in counts(text, pattern)
        if n != actual
    ]
    ends = (MAIN_LINE[0], MAIN_LINE[-1])
    wrong += [
        f"main line {a} … {b}: it is {ends[0]} … {ends[1]}" for a, b in MAIN_LINE_RANGE.findall(text) if (a, b) != ends
    ]
    assert not wrong, f"{doc.relative_to(REPO)}: " + "; ".join(wrong)


def test_the_docs_do_state_counts():
    """The check above sees the phrases it is meant for (a change of wording would hide them)."""
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)
    seen = {what for what, (pattern, _) in COUNTED.items() if counts(text, pattern)}
    assert seen >= {"exercises", "the other … assignments", "(all …)", "`make check` runs all …", "… 道练习"}, seen
    assert MAIN_LINE_RANGE.search(text), "no doc names the main line's ends"
