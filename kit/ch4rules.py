"""The answering rules of the graded exercises, checked on the code a student wrote.

An answer defines functions with JAX and NumPy; it has no reason to reach for the machinery
around it (files, processes, the interpreter, other modules' insides). `problems(source)` lists
every place where an answer cell does, one line each, in Chinese, with the line number. The
grader runs it before a submission runs (a problem means the answer is not run and scores 0, flag
`rules`), and the kit runs it in the student's kernel while they work, so a student sees the same
message before handing in.

What is allowed is written for honest code: imports from the packages below (judged by what
the import binds, not how it is spelled), type hints, dataclasses, namedtuples, helper classes
that set attributes on their own instances, `__name__`/`__doc__`, `if __name__ == "__main__":`,
`print`, `%time`/`%timeit`. The rules are a fence, not the defence: test cells never read a
name the answer can rebind, and every verdict runs in the grader (grader/README.md).

This module imports nothing heavy: the grader's command line and the kernel both use it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import types

# Packages an answer may import from. The first line is what the exercises need; the second is
# the standard library an honest answer uses for structure (type hints, records, operators).
ALLOWED_PACKAGES = frozenset(
    "jax numpy math functools itertools optax scipy".split()
    + "typing __future__ dataclasses collections operator numbers enum abc".split()
)

# Inside the allowed packages, these reach past the fence; reached in any way, they are refused.
REFUSED = {
    "numpy.f2py": "会调用编译器、启动子进程",
    "numpy.distutils": "构建工具，可以运行外部命令",
    "numpy.ctypeslib": "可以直接读写进程内存",
    "numpy.lib.stride_tricks.as_strided": "可以越界读写进程内存",
    "scipy.LowLevelCallable": "通过 ctypes 调用任意机器码",
    "scipy.io": "读写文件",
    "jax.config": "改动 JAX 的全局设置（评分按默认设置进行）",
    "jax.extend": "JAX 的底层扩展接口，可以改写求导规则本身",
    "jax.experimental.serialize_executable": "用 pickle 反序列化，可以执行任意代码",
    "typing.get_type_hints": "会对注解字符串求值（相当于 eval）",
    "functools.singledispatch": "会对注解字符串求值（相当于 eval）",
    "functools.singledispatchmethod": "会对注解字符串求值（相当于 eval）",
    "operator.attrgetter": "按字符串取属性（相当于 getattr）",
    "operator.methodcaller": "按字符串调用方法（相当于 getattr）",
}
# File input/output under any name: the sandbox has no files worth reading, and np.load with
# pickles would run code that this check never saw.
FILE_FUNCTIONS = frozenset(
    "load loads save savez savez_compressed savetxt loadtxt genfromtxt fromfile tofile memmap fromregex dump dumps"
    " DataSource".split()
)
# Attribute names that only ever lead out of an answer's business, whatever object they are on.
ESCAPE_ATTRIBUTES = frozenset(
    "os sys subprocess importlib builtins ctypes shutil socket pickle marshal f2py ctypeslib distutils"
    " as_strided tofile fromfile memmap get_type_hints attrgetter methodcaller LowLevelCallable".split()
)
FORBIDDEN_NAMES = {
    "exec", "eval", "compile", "__import__", "open", "getattr", "setattr", "delattr", "vars", "globals",
    "locals", "breakpoint", "input", "get_ipython", "memoryview", "exit", "quit", "help",
}  # fmt: skip
READABLE_DUNDERS = {"__name__", "__doc__", "__qualname__"}
DEFINABLE_DUNDERS = {
    "__init__", "__post_init__", "__call__", "__repr__", "__str__", "__len__", "__iter__", "__getitem__",
}  # fmt: skip
ALLOWED_MAGICS = {"time", "timeit"}
IPYTHON_SPELLINGS = {"run_line_magic", "run_cell_magic", "system", "getoutput"}  # of %magic and !shell
MUTATORS = {"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove"}

RULES_SUMMARY = (
    "作答区只导入 " + "、".join(sorted(ALLOWED_PACKAGES)) + "（及其公开的子模块）；"
    "不读写文件，不用 exec/eval/open/getattr/globals 等反射工具，不访问别的对象以下划线开头的内部属性"
    "（__name__、__doc__、__qualname__ 可以读）；只给自己类的实例（self）设置属性，不定义 __eq__ 等改变比较或"
    "类型转换的特殊方法，不改动模块、JAX/NumPy 的对象或全局设置；"
    "魔法命令只用 %time、%timeit。"
)


def _origin(obj) -> str | None:
    """The module an object comes from, with C accelerators (_functools) under their package."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    name = getattr(obj, "__module__", None)
    if not isinstance(name, str):
        name = type(obj).__module__
    return name.lstrip("_") if isinstance(name, str) else None


def _plain_value(obj) -> bool:
    return isinstance(obj, (int, float, complex, str, bytes, bool, type(None)))


def judge_object(dotted: str, obj) -> str | None:
    """Why `obj`, reached as `dotted`, may not be used in an answer; None when it may."""
    why = _refused_path(dotted)
    if why:
        return why
    if _plain_value(obj):
        return None
    origin = _origin(obj)
    if isinstance(obj, types.ModuleType) and _refused_path(origin):
        return f"{dotted}（即 {_refused_path(origin)}）"
    top = (origin or "").split(".")[0]
    if top not in ALLOWED_PACKAGES:
        return f"{dotted} 来自 {origin or '未知模块'}，不在允许导入的包里"
    if _qualified(obj) in REFUSED:
        return f"{dotted}（即 {_qualified(obj)}）：{REFUSED[_qualified(obj)]}"
    return None


def _qualified(obj) -> str:
    return f"{_origin(obj)}.{getattr(obj, '__qualname__', '')}"


@functools.lru_cache(maxsize=4096)
def resolve(dotted: str) -> tuple[object | None, str | None]:
    """(object, None) for a dotted path an answer imports or reads, or (None, why) when refused.

    Imports only public modules of the allowed packages and walks attributes only while they are
    modules, checking each step before taking it, so nothing a student wrote runs here."""
    parts = dotted.split(".")
    if parts[0] not in ALLOWED_PACKAGES:
        return None, f"{dotted}：{parts[0]} 不在允许导入的包里"
    if any(p.startswith("_") and p not in READABLE_DUNDERS for p in parts[1:]):
        return None, f"{dotted}：以下划线开头的是内部实现"
    try:
        obj = importlib.import_module(parts[0])
    except Exception:  # noqa: BLE001 - not installed here: the kernel will say so itself
        return None, None
    for i in range(1, len(parts)):
        if not isinstance(obj, types.ModuleType):
            return obj, None  # an attribute of a value (jnp.float32.dtype): not a way out
        prefix = ".".join(parts[: i + 1])
        why = _refused_path(prefix)
        if why:
            return None, why
        try:
            obj = getattr(obj, parts[i]) if hasattr(obj, parts[i]) else importlib.import_module(prefix)
        except Exception:  # noqa: BLE001 - does not exist: the kernel will say so itself
            return None, None
        why = judge_object(prefix, obj)
        if why:
            return None, why
    return obj, None


def _refused_path(dotted: str) -> str | None:
    for refused, why in REFUSED.items():
        if dotted == refused or dotted.startswith(refused + "."):
            return f"{dotted}：{why}"
    return None


class _Checker:
    """One pass over the syntax tree, without recursion (a 1500-term sum is a valid answer)."""

    def __init__(self, resolve_imports: bool):
        self.found: list[tuple[int, str]] = []
        self.resolve_imports = resolve_imports
        self.bound: dict[str, str] = {}  # local name -> the dotted import path it names
        self.offset = 0
        self.magic_names: set[int] = set()

    def note(self, node: ast.AST, what: str, offset: int = 0) -> None:
        self.found.append((getattr(node, "lineno", 1) + offset, what))

    def run(self, source: str, offset: int = 0) -> None:
        """Check `source` (already in plain Python); line numbers are shifted by `offset`."""
        try:
            tree = ast.parse(source)
        except SyntaxError:
            if offset:  # code inside %time that is not Python cannot be checked, so it may not run
                self.found.append((offset + 1, "无法检查 %time/%timeit 里的代码"))
            return  # not a rule matter: the kernel reports the syntax error like any other
        saved = self.offset, self.magic_names  # run() is re-entered for the code inside %time
        self.offset = offset
        # get_ipython() is refused, except as IPython's own spelling of %magic and !shell,
        # which check_call judges by what they run
        self.magic_names = {
            id(n.func.value.func)
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and _ipython_call(n) in IPYTHON_SPELLINGS
        }
        self.collect_imports(tree)
        stack: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
        while stack:
            node, owners = stack.pop()
            self.check(node, owners)
            for child in ast.iter_child_nodes(node):
                # in a method of a class written here, the first parameter is the instance itself
                method = isinstance(node, ast.ClassDef) and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                if method and child.args.args:
                    stack.append((child, owners | {child.args.args[0].arg}))
                else:
                    stack.append((child, owners))
        self.offset, self.magic_names = saved

    def note_here(self, node: ast.AST, what: str) -> None:
        self.note(node, what, self.offset)

    def collect_imports(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]  # import a.b binds a
                    self.bound[local] = alias.name if alias.asname else local
                    self.check_path(node, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    self.note_here(node, "相对导入（作答区不是包）")
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        self.note_here(node, f"from {node.module} import *（请写出要用的名字）")
                        continue
                    path = f"{node.module}.{alias.name}"
                    self.bound[alias.asname or alias.name] = path
                    if node.module != "__future__":
                        self.check_path(node, path)
        for node in ast.walk(tree):  # m = np.linalg: m names a module path too
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                path = self.dotted(node.value)
                if path:
                    self.bound[node.targets[0].id] = path

    def check_path(self, node: ast.AST, path: str) -> None:
        if not self.resolve_imports:
            why = None if path.split(".")[0] in ALLOWED_PACKAGES else f"{path}：不在允许导入的包里"
        else:
            _, why = resolve(path)
        if why:
            self.note_here(node, f"导入了 {why}")

    def dotted(self, node: ast.AST) -> str | None:
        """`np.linalg.norm` -> 'numpy.linalg.norm' when the chain starts at an imported name."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.bound:
            return ".".join([self.bound[node.id], *reversed(parts)])
        return None

    @staticmethod
    def own_field(node: ast.Attribute, owners: frozenset[str]) -> bool:
        """self._count in a method of the answer's own class: its own business."""
        return not node.attr.startswith("__") and isinstance(node.value, ast.Name) and node.value.id in owners

    @staticmethod
    def written_on_self(target: ast.AST, owners: frozenset[str]) -> bool:
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        return isinstance(target, ast.Name) and target.id in owners

    def check(self, node: ast.AST, owners: frozenset[str]) -> None:
        if isinstance(node, ast.Name):
            if id(node) in self.magic_names:
                return
            if node.id in FORBIDDEN_NAMES:
                self.note_here(node, f"使用了 {node.id}（反射或输入输出工具，作答用不到）")
            elif node.id.startswith("__") and node.id not in READABLE_DUNDERS:
                self.note_here(node, f"使用了内部名字 {node.id}")
        elif isinstance(node, ast.Attribute):
            self.check_attribute(node, owners)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Attribute) and not self.written_on_self(node.value, owners):
                self.note_here(node, "改写了某个对象属性里的表项（只能改 self 上的数据）")
        elif isinstance(node, ast.Call):
            self.check_call(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name.startswith("__") and node.name not in DEFINABLE_DUNDERS:
                self.note_here(node, f"定义了特殊方法 {node.name}（会改变比较、转换或取属性的行为）")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                if name in self.bound:
                    self.note_here(node, f"用 global 改写了导入的名字 {name}")
        elif isinstance(node, ast.keyword) and node.arg == "allow_pickle":
            self.note_here(node, "allow_pickle：反序列化 pickle 会执行任意代码")

    def check_attribute(self, node: ast.Attribute, owners: frozenset[str]) -> None:
        attr = node.attr
        on_super = isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "super"
        if on_super and attr in DEFINABLE_DUNDERS:
            pass  # super().__init__(...) in a class of one's own
        elif attr.startswith("_") and attr not in READABLE_DUNDERS and not self.own_field(node, owners):
            self.note_here(node, f"访问了内部属性 .{attr}")
        elif attr in ESCAPE_ATTRIBUTES:
            self.note_here(node, f"访问了 .{attr}（通向文件、进程或解释器内部）")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            if not self.written_on_self(node, owners):
                self.note_here(node, f"给 .{attr} 赋值或删除它（只能在自己类的方法里给 self 设置属性）")
            return
        path = self.dotted(node)
        if path and path.split(".")[-1] in FILE_FUNCTIONS:
            self.note_here(node, f"使用了 {path}（作答区不读写文件）")
        elif path and self.resolve_imports:
            _, why = resolve(path)
            if why:
                self.note_here(node, f"使用了 {why}")

    def check_call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS:
            path = self.dotted(func.value)
            if path:
                self.note_here(node, f"调用 .{func.attr}() 改动了 {path} 里的数据")
        if _ipython_call(node) in ("system", "getoutput"):
            self.note_here(node, "shell 命令（!…）")
        elif _ipython_call(node) in ("run_line_magic", "run_cell_magic"):
            self.check_magic(node)

    def check_magic(self, node: ast.Call) -> None:
        """IPython writes `%time f(x)` as get_ipython().run_line_magic('time', 'f(x)')."""
        texts = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        name = (texts[0] or "?").lstrip("%") if texts else "?"
        if name not in ALLOWED_MAGICS or None in texts:
            self.note_here(node, f"魔法命令 %{name}（只能用 %time、%timeit）")
            return
        for text in texts[1:]:
            code = _MAGIC_OPTIONS.sub("", text, count=1)
            if code.strip():
                from IPython.core.inputtransformer2 import TransformerManager

                self.run(TransformerManager().transform_cell(code), self.offset + node.lineno - 1)


# %timeit -n 3 -r 1 -q f(x): the options before the code
_MAGIC_OPTIONS = re.compile(r"^(\s*-[a-zA-Z](\s*\d+)?)*")


def _ipython_call(node: ast.Call) -> str | None:
    """'run_line_magic' for get_ipython().run_line_magic(...), the way IPython spells %magics."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
    ):
        return func.attr
    return None


def problems_with_lines(source: str, resolve_imports: bool = True) -> list[tuple[int, str]]:
    from IPython.core.inputtransformer2 import TransformerManager

    checker = _Checker(resolve_imports)
    try:
        checker.run(TransformerManager().transform_cell(source))
    except (RecursionError, MemoryError):
        return [(1, "代码结构过深或过大，评分程序无法检查它")]
    return sorted(checker.found)


def problems(source: str, resolve_imports: bool = True) -> list[str]:
    """One line per rule an answer cell breaks ("第 3 行：…"); [] when it keeps them all."""
    seen, lines = set(), []
    for line, what in problems_with_lines(source, resolve_imports):
        text = f"第 {line} 行：{what}"
        if text not in seen:
            seen.add(text)
            lines.append(text)
    return lines
