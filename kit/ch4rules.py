"""The answering rules, checked early on the code a student wrote.

The defence is the guard (kit/ch4guard.py): every cell a student writes runs confined, and every
attribute, item, import and call in it is checked at run time against what an answer may reach.
This module only tells a student *early*, with line numbers, what the guard would refuse anyway:
what the compiler refuses (`ch4guard.compile_errors`), imports of modules outside the list, and
dotted names that start at an imported module (`np.lib...`, `jax.config.update`), judged by the
same tables as the guard. It never refuses what the guard allows: every problem it reports is
one the guard reports too when that line runs (tests/test_guard.py holds them together).

The grader runs `problems` before a submission runs (a problem means the answer is not run and
scores 0, flag `rules`); the kit runs it in the student's kernel before each answer cell, so the
student sees the same message before handing in.
"""

from __future__ import annotations

import ast
import importlib.util

import ch4guard

# What the statements name (tests/test_rules.py checks that each statement lists them): the
# packages an answer may import from, and the magics it may use.
ALLOWED_PACKAGES = frozenset(
    "jax numpy scipy optax math cmath functools itertools".split()
    + "typing __future__ dataclasses collections operator numbers enum abc".split()
)
ALLOWED_MAGICS = ch4guard.ALLOWED_MAGICS

RULES_SUMMARY = (
    "作答区只导入 " + "、".join(sorted(ALLOWED_PACKAGES)) + " 及其公开的子模块（jax 中改动全局设置、求导规则或"
    "启动服务的模块除外）；只用对象的公开属性（自己定义的函数、类和实例不受此限）；不读写文件，不用 exec/eval/open；"
    "只改动自己创建的对象和普通容器；魔法命令只用 %time、%timeit。"
)


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def path_refusal(dotted: str) -> tuple[str, str] | None:
    """(the refused part of the path, why) for an import path or a dotted name that starts at a
    module, or None. Walks only while the path names modules: what lies beyond a value (a
    function, a class, an array) is the guard's business at run time."""
    parts = dotted.split(".")
    if not ch4guard.module_allowed(parts[0]):
        return parts[0], "不在允许导入的模块里"
    for i in range(1, len(parts)):
        module, name = ".".join(parts[:i]), parts[i]
        why = ch4guard.module_name_refusal(module, name)
        if why:
            return f"{module}.{name}", why.split("：", 1)[-1]
        submodule = f"{module}.{name}"
        if not _is_module(submodule):
            return None
        if not ch4guard.module_allowed(submodule):
            return submodule, "不在允许导入的模块里"
    return None


def _dotted(node, bound: dict[str, str]) -> str | None:
    """`np.linalg.norm` -> 'numpy.linalg.norm' when the chain starts at a name an import bound."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in bound:
        return ".".join([bound[node.id], *reversed(parts)])
    return None


def _imports(tree: ast.AST, bound: dict[str, str]) -> list[tuple[int, str]]:
    """Check every import in `tree` and record in `bound` the modules they bind."""
    found = []
    for node in ast.walk(tree):  # iterative: a 1500-term sum is a valid answer
        if isinstance(node, ast.Import):
            for alias in node.names:
                refused = path_refusal(alias.name)
                if refused:
                    found.append((node.lineno, f"导入了 {refused[0]}：{refused[1]}"))
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module not in (None, "__future__"):
            for alias in node.names:
                path = f"{node.module}.{alias.name}"
                refused = path_refusal(path) if alias.name != "*" else None
                if refused:
                    found.append((node.lineno, f"导入了 {refused[0]}：{refused[1]}"))
                elif alias.name != "*" and _is_module(path):
                    bound[alias.asname or alias.name] = path
    return found


def bindings(preamble: str) -> dict[str, str]:
    """The modules the setup cell's imports bind (`np` -> numpy), as the answer sees them."""
    bound: dict[str, str] = {}
    try:
        _imports(ast.parse(preamble), bound)
    except SyntaxError:
        return {}
    return bound


def problems_with_lines(source: str, preamble: str = "") -> list[tuple[int, str]]:
    found = list(ch4guard.compile_errors(source))
    try:
        tree = ast.parse(ch4guard.python_source(source))
    except (SyntaxError, RecursionError, MemoryError):
        return sorted(found)
    bound = bindings(preamble)
    found += _imports(tree, bound)
    for node in ast.walk(tree):
        dotted = _dotted(node, bound) if isinstance(node, ast.Attribute) else None
        refused = path_refusal(dotted) if dotted else None
        if refused:
            found.append((node.lineno, f"使用了 {refused[0]}：{refused[1]}"))
    return sorted(set(found))


def problems(source: str, preamble: str = "") -> list[str]:
    """One line per rule an answer cell breaks ("第 3 行：…"); [] when it keeps them all.
    `preamble` is the setup cell, whose imports (np, jnp, ...) the answer uses."""
    seen, lines = set(), []
    for line, what in problems_with_lines(source, preamble):
        text = f"第 {line} 行：{what}"
        if text not in seen:
            seen.add(text)
            lines.append(text)
    return lines
