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
    own_names = _bound_names(tree)
    spelled_magics = {  # IPython's spelling of %magic and !shell: judged by the compiler above
        id(node.func.value.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ch4guard.ipython_call(node) in ch4guard.MAGIC_SPELLINGS
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node, bound)
            refused = path_refusal(dotted) if dotted else None
            if refused:
                found.append((node.lineno, f"使用了 {refused[0]}：{refused[1]}"))
            elif dotted and not isinstance(node.ctx, ast.Load) and _is_module(dotted.rpartition(".")[0]):
                found.append((node.lineno, f"改动了模块里的 {dotted}：只能改动作答区自己创建的对象"))
        elif isinstance(node, ast.Call) and ch4guard.ipython_call(node) in ("run_line_magic", "run_cell_magic"):
            found += _inside_magic(node, preamble)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            named = node.args[0] if node.args else None
            if isinstance(named, ast.Constant) and isinstance(named.value, str) and path_refusal(named.value):
                found.append((node.lineno, f"导入了 {named.value}：{path_refusal(named.value)[1]}"))
        elif isinstance(node, ast.Name) and node.id in ch4guard.UNAVAILABLE and node.id not in own_names:
            if id(node) in spelled_magics:
                continue
            found.append((node.lineno, f"使用了 {node.id}：{ch4guard.UNAVAILABLE[node.id]}"))
    return sorted(set(found))


def _inside_magic(node: ast.Call, preamble: str) -> list[tuple[int, str]]:
    """The code inside %time/%timeit, checked like the cell (its lines counted from the magic's)."""
    texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(texts) != len(node.args) or texts[0].lstrip("%") not in ch4guard.ALLOWED_MAGICS:
        return []  # the compiler refuses it already
    cell_form = len(texts) > 2  # %%time: the code starts on the line after the magic's
    code = texts[2] if cell_form else ch4guard.timing_options(texts[1])[1]
    return [(node.lineno + line - 1 + cell_form, what) for line, what in problems_with_lines(code, preamble)]


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the cell binds itself (a variable called `vars`, a parameter called `input`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


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
