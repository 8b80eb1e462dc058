"""The package layout holds (docs/architecture.md): the grading core (`grader`) never imports its
proof (`proof`: catalogue, attacks, sample classes, demo, benchmark, compile counter), no two
modules of the grader import each other, directly or around a loop, at the top or inside a
function, and its subpackages stand in layers (`LAYERS`). Fast: every module is imported once,
in a fresh interpreter, without running anything."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from grader import REPO

GRADER = REPO / "grader"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def grader_modules() -> dict[str, Path]:
    """Every module of the grader package (templates hold no Python)."""
    return {module_name(p): p for p in sorted(GRADER.rglob("*.py")) if "__pycache__" not in p.parts}


def imported(path: Path, name: str) -> set[str]:
    """The modules a module's code imports, wherever in it (top level or inside a function),
    resolved to the most specific name: `from grader.kernels import sandbox` is grader.kernels.sandbox."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the grader modules it imports (a name that is not a module, like grader.REPO, is
    the package it comes from; a module's own package's __init__ is not an edge)."""
    edges = {}
    for name, path in modules.items():
        targets = set()
        for target in imported(path, name):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                targets.add(target)
        edges[name] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One loop per strongly connected group of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_grader_module_imports_the_proof():
    offending = {
        name: sorted(t for t in imported(path, name) if t == "proof" or t.startswith("proof."))
        for name, path in grader_modules().items()
    }
    assert not {k: v for k, v in offending.items() if v}, offending


def test_no_import_cycle_between_grader_modules():
    edges = graph(grader_modules())
    assert edges["grader.kernels.forkserver"] >= {"grader.kernels.sandbox"}, "the graph does not see imports"
    assert not cycles(edges), cycles(edges)


# The subpackages in layers, each built on the ones before it: a kernel runs code; the judging
# reads what it exported; the output shows the verdicts; the pipeline takes one submission through
# all of them into the gradebook; the cluster runs many pipelines. `instructor` (nbgrader's own
# tools, the student edition) needs none of them. Any subpackage may use the shared modules
# (course, i18n, messages, nbtools); grade.py and __main__.py, the commands, may use everything.
LAYERS = ("instructor", "kernels", "judging", "output", "pipeline", "cluster")
SHARED = {"grader", "grader.course", "grader.i18n", "grader.messages", "grader.nbtools"}


def layering_violations(edges: dict[str, set[str]]) -> list[str]:
    def layer(module: str) -> int | None:
        part = module.split(".")[1] if "." in module else None
        return LAYERS.index(part) if part in LAYERS else None

    found = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            mine, theirs = layer(source), layer(target)
            if source in SHARED and target not in SHARED:
                found.append(f"{source} (shared) imports {target}")
            elif mine is not None and theirs is not None and theirs > mine:
                found.append(f"{source} imports {target}, a layer above it")
            elif mine is not None and theirs is None and target not in SHARED:
                found.append(f"{source} imports the command module {target}")
    return found


def test_subpackages_only_build_on_the_layers_below():
    edges = graph(grader_modules())
    subpackages = {p.name for p in GRADER.iterdir() if (p / "__init__.py").exists()}
    assert set(LAYERS) == subpackages, "a subpackage has no layer"
    assert not layering_violations(edges), layering_violations(edges)


def test_the_layer_check_finds_an_upward_import():
    assert layering_violations({"grader.kernels.x": {"grader.output.y"}, "grader.output.y": {"grader.kernels.x"}}) == [
        "grader.kernels.x imports grader.output.y, a layer above it"
    ]
    assert layering_violations({"grader.course": {"grader.kernels.x"}, "grader.pipeline.z": {"grader.grade"}}) == [
        "grader.course (shared) imports grader.kernels.x",
        "grader.pipeline.z imports the command module grader.grade",
    ]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_importing_every_grader_module_loads_nothing_of_the_proof():
    """In a fresh interpreter, as a grading worker would start: import all of the grader, then
    look for any `proof` module among everything loaded."""
    names = sorted(grader_modules())
    code = (
        "import importlib, json, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'proof' or m.startswith('proof.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd="/tmp", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [], done.stdout


def test_no_module_is_much_over_400_lines():
    long = {
        str(p.relative_to(REPO)): n
        for root in ("grader", "proof", "kit")
        for p in sorted((REPO / root).rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert not long, long


def test_every_module_has_its_row_in_the_architecture_page():
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [
        f"{root}/{rel}"
        for root in ("grader", "proof", "kit")
        for p in sorted((REPO / root).rglob("*.py"))
        if p.name != "__init__.py" and not ({"catalogue", "attacks", "__pycache__"} & set(p.parts))
        if f"`{(rel := p.relative_to(REPO / root).as_posix())}`" not in page
    ]
    assert not missing, f"add a row to docs/architecture.md for: {missing}"


def test_the_grading_digest_covers_every_module_the_grading_code_imports():
    """staging.GRADING_CODE is the code whose change invalidates earlier grades and stops a worker
    that differs. Whatever that code imports from the grader decides a grade too, so the digest
    covers it, except the two layers it leaves out on purpose: cluster (transport) and
    instructor (the instructor's tools)."""
    from grader.pipeline import staging

    covered = {module_name(path) for path in staging.grading_files()}
    edges, reached, todo = graph(grader_modules()), set(), list(covered)
    while todo:
        for target in edges[todo.pop()] - reached:
            reached.add(target)
            todo.append(target)
    left_out = ("grader.cluster", "grader.instructor")
    missing = sorted(m for m in reached - covered if not m.startswith(left_out))
    assert not missing, f"grading code imports these, and staging.GRADING_CODE does not cover them: {missing}"


# The kit reads top-down (issue #50): each module imports only the ones before it, at the top or
# inside a function, so what a hidden test may say (ch4messages) is handed its pieces by the judge
# instead of reading the judge back.
KIT_ORDER = (
    "ch4protocol", "ch4dataflow", "ch4messages", "ch4programs", "ch4references", "ch4verdicts", "ch4judge",
    "ch4summary", "ch4check", "ch4fork", "ch4validate", "ch4style", "ch4timing",
)  # fmt: skip


def test_the_kit_imports_only_what_comes_before_it():
    import ast

    found = sorted(p.stem for p in (REPO / "kit").glob("ch4*.py"))
    assert sorted(KIT_ORDER) == found, found
    later = {}
    for k, name in enumerate(KIT_ORDER):
        tree = ast.parse((REPO / "kit" / f"{name}.py").read_text(encoding="utf-8"))
        imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        bad = sorted(m for m in imported if m in KIT_ORDER and KIT_ORDER.index(m) >= k)
        if bad:
            later[name] = bad
    assert not later, later
