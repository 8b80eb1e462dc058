"""Read an answer cell, before anything runs, for code that tampers with grading.

An answer to these exercises defines functions with jax, numpy, math and functools. Code that
reaches for the machinery around it (other modules' attributes, builtins, IPython hooks,
tracing, reflection, files, processes) has no place in one; the exercise statements say so, and
a submission that does it scores 0 for that assignment with the reason in its feedback.

This is the second line of defence. The first is that verdicts run outside the kernel
(grader/verdict.py), so most tampering gains nothing even when it goes unnoticed; this check
names the attempt and covers what the first cannot: code that forges evidence of the *method*
(for example by patching jax itself). It reads syntax, so it can be evaded by code it does not
recognise; grader/README.md says where the line is.
"""

from __future__ import annotations

import ast

ALLOWED_IMPORTS = {"jax", "numpy", "math", "functools", "itertools", "optax", "scipy"}
FORBIDDEN_CALLS = {
    "exec", "eval", "compile", "__import__", "open", "getattr", "setattr", "delattr", "vars",
    "globals", "locals", "breakpoint", "input", "get_ipython", "memoryview", "super",
}  # fmt: skip
MUTATORS = {"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove"}
ALLOWED_DUNDER_METHODS = {"__init__", "__call__", "__repr__"}


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


class _Scan(ast.NodeVisitor):
    def __init__(self):
        self.found: list[str] = []
        self.modules: set[str] = set()  # names bound to imported modules

    def note(self, node: ast.AST, what: str) -> None:
        self.found.append(f"第 {getattr(node, 'lineno', '?')} 行：{what}")

    def visit_Import(self, node):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top not in ALLOWED_IMPORTS:
                self.note(node, f"导入了 {alias.name}（作答区只能导入 {', '.join(sorted(ALLOWED_IMPORTS))}）")
            self.modules.add((alias.asname or alias.name).split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        top = (node.module or "").split(".")[0]
        if node.level or top not in ALLOWED_IMPORTS:
            self.note(node, f"从 {node.module or '.'} 导入（作答区只能导入 {', '.join(sorted(ALLOWED_IMPORTS))}）")
        for alias in node.names:
            if alias.name.startswith("_"):
                self.note(node, f"导入了私有名字 {alias.name}")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in FORBIDDEN_CALLS or node.id.startswith("__"):
            self.note(node, f"使用了 {node.id}（可以用来绕过或篡改评分）")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr.startswith("_"):
            self.note(node, f"访问了私有或内部属性 .{node.attr}")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.note(node, f"给属性 .{node.attr} 赋值或删除它（会改动别的模块或对象）")
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Attribute):
            self.note(node, "改写了某个模块或对象里的表项")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in MUTATORS
            and isinstance(func.value, ast.Attribute)
            and isinstance(_root(func.value), ast.Name)
            and _root(func.value).id in self.modules
        ):
            what = ast.unparse(func.value)
            if what == "jax.config":
                self.note(node, "用 jax.config.update 改了 JAX 的全局设置（评分按默认设置进行，作答区不能改它）")
            else:
                self.note(node, f"调用 {what}.{func.attr}() 改动了模块里的数据")
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if node.name.startswith("__") and node.name not in ALLOWED_DUNDER_METHODS:
            self.note(node, f"定义了特殊方法 {node.name}（例如永远相等的 __eq__）")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Global(self, node):
        for name in node.names:
            if name in self.modules:
                self.note(node, f"用 global 改写了模块名 {name}")
        self.generic_visit(node)


def scan(source: str) -> list[str]:
    """One line per suspicious construct in an answer cell; [] when there is none."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:  # as IPython would run it: magics and ! commands become get_ipython() calls
        tree = ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return []  # not tampering: the kernel reports the syntax error like any other
    visitor = _Scan()
    visitor.visit(tree)
    return visitor.found
