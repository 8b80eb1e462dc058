"""The answer guard: every cell a student writes runs confined, and what it may reach is allowed,
not forbidden.

A cell the student writes (the answer cell, and any cell they add) is compiled by
RestrictedPython with the course's policy (`AnswerPolicy`): every attribute read and write,
item read and write, iteration, import and call in it becomes a call of a guard below, and the
guards check it at run time against this allow-policy:

* **Imports**: only the modules in `ALLOWED_MODULES` (and the public submodules of
  `ALLOWED_TREES`); `from m import name` and `m.name` give only public names, never a module
  outside the list, never a global setting or a file function (`REFUSED`, `FILE_FUNCTIONS`).
* **Objects the answer created** (functions compiled here, classes defined here and their
  instances): their own attributes, private ones included, but never the interpreter's insides
  (`__globals__`, `__code__`, `__closure__`, ...).
* **Every other object**: its public attributes (no leading underscore) and a few harmless
  special names (`SAFE_DUNDERS`); the interpreter's own objects (frames, code, tracebacks,
  cells) offer nothing, generators only `send`/`throw`/`close`.
* **Writes** (`x.a = v`, `x[i] = v`, `del`, `setattr`) only into the answer's own objects and
  into plain containers and arrays; never a special attribute such as `__class__`.
* **Every value an answer receives** from an attribute, an item, a call or an iteration is
  checked (`refused_value`): frames, code, tracebacks, namespaces (anything holding
  `__builtins__`), the builtins the answer is not given (`exec`, the real `getattr`, ...),
  modules outside the list and JAX's global settings never enter its hands, whatever path led
  to them.

The sandbox around the kernel (grader/sandbox.py) is the second wall; this is the first. The
static scan (kit/ch4rules.py) only gives the student the same refusals early, with line numbers.
Nothing here imports JAX at module level: the grader's scan imports this module too.
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import functools
import importlib
import importlib.util
import linecache
import operator
import os
import re
import string
import sys
import time
import types
import weakref

from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import RestrictingNodeTransformer, copy_locations

# ---------------------------------------------------------------------------------------------
# What an answer may import

# Exact modules. jax is listed module by module: some of its public modules rewrite
# differentiation rules (jax.interpreters, jax.extend), start servers (jax.profiler,
# jax.distributed), load machine code (jax.ffi) or change global settings.
ALLOWED_MODULES = frozenset(
    """
    jax jax.numpy jax.lax jax.random jax.tree_util jax.tree jax.typing jax.dtypes jax.errors
    jax.ad_checkpoint jax.test_util jax.flatten_util jax.custom_derivatives jax.debug jax.ops
    jax.image jax.experimental jax.experimental.jet
    numpy numpy.linalg numpy.fft numpy.random numpy.typing numpy.exceptions numpy.dtypes numpy.lib.scimath
    numpy.ma numpy.char numpy.strings
    scipy scipy.special scipy.linalg scipy.integrate scipy.optimize scipy.sparse scipy.sparse.linalg
    scipy.stats scipy.interpolate
    math cmath functools itertools operator collections collections.abc typing dataclasses enum abc
    numbers __future__
    """.split()
)
# These packages and every public module below them.
ALLOWED_TREES = ("jax.numpy", "jax.scipy", "jax.nn", "jax.lax", "optax", "numpy.polynomial")

# Public names of allowed modules that an answer may still not use, with the reason it reads.
REFUSED = {
    "jax.config": "改动 JAX 的全局设置（评分按默认设置进行）",
    "jax.debug.breakpoint": "交互式调试器会等待键盘输入",
    "scipy.LowLevelCallable": "通过 ctypes 调用任意机器码",
    "typing.get_type_hints": "会对注解字符串求值（相当于 eval）",
    "typing.evaluate_forward_ref": "会对注解字符串求值（相当于 eval）",
    "functools.singledispatch": "会对注解字符串求值（相当于 eval）",
    "functools.singledispatchmethod": "会对注解字符串求值（相当于 eval）",
    "operator.attrgetter": "按字符串取属性，绕过检查（相当于内置的 getattr）",
    "operator.methodcaller": "按字符串调用方法，绕过检查（相当于内置的 getattr）",
    "operator.setitem": "绕过检查改写别的对象（请用 x[i] = v）",
    "operator.delitem": "绕过检查改写别的对象（请用 del x[i]）",
}
# File input and output under any module (the sandbox has nothing worth reading, and pickles run
# code), and the libraries' own test suites (`np.test()` starts pytest).
FILE_FUNCTIONS = frozenset(
    "load loads save savez savez_compressed savetxt loadtxt genfromtxt fromfile tofile memmap fromregex"
    " DataSource dump dumps open test".split()
)
MODULE_DUNDERS = frozenset({"__name__", "__doc__", "__version__"})

# ---------------------------------------------------------------------------------------------
# What an answer may read and write on objects

# Special names harmless on any object: what it is called, and operations it already supports.
SAFE_DUNDERS = frozenset(
    """
    __name__ __qualname__ __doc__ __module__ __class__ __len__ __iter__ __next__ __getitem__
    __contains__ __call__ __repr__ __str__ __hash__ __bool__ __int__ __float__ __index__ __array__
    __eq__ __ne__ __lt__ __le__ __gt__ __ge__
    """.split()
)
# The interpreter's insides: never, not even on the answer's own objects.
NEVER = frozenset(
    """
    __globals__ __code__ __closure__ __builtins__ __func__ __self__ __wrapped__ __defaults__
    __kwdefaults__ __subclasses__ __getattribute__ __setattr__ __delattr__ __reduce__ __reduce_ex__
    __dict__ __mro__ __bases__ __base__ __weakref__ __traceback__ __context__ __cause__
    """.split()
)
# namedtuple's public API starts with an underscore.
NAMEDTUPLE_API = frozenset({"_fields", "_field_defaults", "_replace", "_asdict", "_make"})
# The interpreter's own objects and the public names they may offer (none but a generator's).
INTERNAL_TYPES = {
    types.FrameType: frozenset(),
    types.CodeType: frozenset(),
    types.TracebackType: frozenset(),
    types.CellType: frozenset(),
    types.GeneratorType: frozenset({"send", "throw", "close"}),
    types.CoroutineType: frozenset({"send", "throw", "close"}),
    types.AsyncGeneratorType: frozenset({"asend", "athrow", "aclose"}),
}
# Public attributes that lead to raw memory or files on otherwise ordinary objects (NumPy arrays).
RAW_ATTRIBUTES = frozenset({"ctypes", "tofile", "dump", "dumps", "unsafe_raw_buffer"})
# Methods that install something into the object they belong to (a differentiation rule, an
# implementation, a registration): only on the answer's own objects and custom rules.
INSTALLERS = ("def", "register")
# Containers an answer may write into (its own, or ones it was handed); namespaces excepted.
WRITABLE_TYPES = (list, dict, set, bytearray, collections.deque)

# Special attributes an answer may set on its own objects; others (__class__, __dict__, ...)
# would change what an object is.
SETTABLE_DUNDERS = frozenset({"__doc__", "__name__", "__qualname__", "__module__"})

ANSWER_FILE = "<作答区 {}>"  # compiled answer cells; a function is the answer's own by its file
_ANSWER_PREFIX = ANSWER_FILE.split("{")[0]


class Refused(Exception):
    """Base of the guard's refusals (also an AttributeError, ImportError or TypeError)."""


class AttributeRefused(Refused, AttributeError):
    pass


class ImportRefused(Refused, ImportError):
    pass


class UseRefused(Refused, TypeError):
    pass


MAX_LOG = 50
_log: list[str] = []  # refusals while the kernel ran; the evidence carries them to the grader


def refusals() -> list[str]:
    return list(_log)


def _refuse(kind, what: str, why: str) -> Refused:
    message = f"作答规则不允许{' ' if what[:1].isascii() else ''}{what}：{why}"
    if len(_log) < MAX_LOG and message not in _log:
        _log.append(message)
    return kind(message)


# ---------------------------------------------------------------------------------------------
# Modules


def module_allowed(name: str) -> bool:
    if any(part.startswith("_") for part in name.split(".")) and name != "__future__":
        return False
    return name in ALLOWED_MODULES or any(name == tree or name.startswith(tree + ".") for tree in ALLOWED_TREES)


def _is_allowed_module(module) -> bool:
    name = getattr(module, "__name__", None)
    return isinstance(name, str) and module_allowed(name) and sys.modules.get(name) is module


@functools.cache
def _refused_objects() -> dict[int, tuple[object, str]]:
    """The objects REFUSED names, by identity, so that a re-export elsewhere is refused too."""
    found = {}
    for path, why in REFUSED.items():
        module, _, name = path.rpartition(".")
        if module in sys.modules and hasattr(sys.modules[module], name):
            value = getattr(sys.modules[module], name)
            found[id(value)] = (value, f"{path}：{why}")
    return found


def _refused_object(value) -> str | None:
    entry = _refused_objects().get(id(value))
    return entry[1] if entry is not None and entry[0] is value else None


def module_name_refusal(module: str, name: str) -> str | None:
    """Why `module.name` may not be used, judged without importing anything (the static scan)."""
    if name.startswith("_") and name not in MODULE_DUNDERS:
        return f"{module}.{name} 以下划线开头，是内部实现"
    if f"{module}.{name}" in REFUSED:
        return f"{module}.{name}：{REFUSED[f'{module}.{name}']}"
    if name in FILE_FUNCTIONS:
        return f"{module}.{name}：作答区不读写文件，也不运行库自带的测试"
    return None


def module_attribute(module, name: str):
    """`module.name` for an answer, or a refusal. Containers come back read-only."""
    mname = module.__name__
    if not _is_allowed_module(module):
        raise _refuse(AttributeRefused, f"使用模块 {mname}", "它不在允许导入的模块里")
    why = module_name_refusal(mname, name)
    if why:
        raise _refuse(AttributeRefused, f"使用 {mname}.{name}", why.split("：", 1)[-1])
    try:
        value = getattr(module, name)
    except AttributeError:
        if not module_allowed(f"{mname}.{name}") or importlib.util.find_spec(f"{mname}.{name}") is None:
            raise
        value = importlib.import_module(f"{mname}.{name}")
    if isinstance(value, types.ModuleType) and not _is_allowed_module(value):
        raise _refuse(AttributeRefused, f"使用 {mname}.{name}", f"模块 {value.__name__} 不在允许导入的模块里")
    why = _refused_object(value)
    if why:
        raise _refuse(AttributeRefused, f"使用 {mname}.{name}", why.split("：", 1)[-1])
    if type(value).__module__ == "jax._src.config":
        raise _refuse(AttributeRefused, f"使用 {mname}.{name}", "它改动 JAX 的全局设置（评分按默认设置进行）")
    return _read_only(_GUARDED.get(id(value), value))


def _read_only(value):
    """A module's own dict, list or set is library state: the answer gets a copy it cannot
    use to change the library."""
    if type(value) is dict:
        return types.MappingProxyType(dict(value))
    if type(value) is list:
        return tuple(value)
    if type(value) is set:
        return frozenset(value)
    return value


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    __tracebackhide__ = True  # noqa: F841 - IPython leaves this frame out of tracebacks
    if level:
        raise _refuse(ImportRefused, "相对导入", "作答区不是一个包")
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if not module_allowed(prefix):
            raise _refuse(ImportRefused, f"导入 {prefix}", "它不在允许导入的模块里")
    module = importlib.import_module(name)
    if not fromlist:
        return sys.modules[parts[0]]
    values = {}
    for item in fromlist:
        if item == "*":
            raise _refuse(ImportRefused, f"from {name} import *", "请写出要用的名字")
        values[item] = module_attribute(module, item)
    return types.SimpleNamespace(**values)  # what `from name import item` reads its items from


# ---------------------------------------------------------------------------------------------
# Ownership: what the answer created itself

_OWNED_CLASSES: weakref.WeakSet = weakref.WeakSet()


def own_class(cls):
    if isinstance(cls, type):
        _OWNED_CLASSES.add(cls)
    return cls


def is_answer_function(obj) -> bool:
    return type(obj) is types.FunctionType and obj.__code__.co_filename.startswith(_ANSWER_PREFIX)


def owned(obj) -> bool:
    """A function compiled from an answer cell, a class defined there, or an instance of one."""
    if type(obj) is types.FunctionType:
        return is_answer_function(obj)
    if isinstance(obj, type):
        return obj in _OWNED_CLASSES
    return any(cls in _OWNED_CLASSES for cls in type(obj).__mro__)


def _super_of_own(obj) -> bool:
    return type(obj) is super and owned(obj.__self__ if obj.__self__ is not None else obj.__self_class__)


class _ClassMaker:
    """`__metaclass__` of every class statement in an answer: the metaclass its bases call for
    (Enum's, NamedTuple's, ABC's), and the class is the answer's own."""

    @staticmethod
    def _meta(bases):
        winner = type
        for base in bases:
            meta = type(base)
            if issubclass(winner, meta):
                continue
            if issubclass(meta, winner):
                winner = meta
                continue
            raise TypeError("metaclass conflict: the bases of this class have incompatible metaclasses")
        return winner

    def __prepare__(self, name, bases, **kwargs):
        meta = self._meta(bases)
        return meta.__prepare__(name, bases, **kwargs)

    def __call__(self, name, bases, namespace, **kwargs):
        return own_class(self._meta(bases)(name, bases, namespace, **kwargs))


# ---------------------------------------------------------------------------------------------
# Reading, writing and receiving values


def attribute_refusal(obj, name: str) -> str | None:
    """Why an answer may not read `obj.name` (obj not a module), or None."""
    kind = type(obj)
    if kind in INTERNAL_TYPES:
        return None if name in INTERNAL_TYPES[kind] else f"{kind.__name__} 是解释器内部的对象"
    if name in NEVER:
        return f"{name} 通向解释器内部"
    mine = owned(obj) or _super_of_own(obj)
    if name.startswith("__") and name.endswith("__"):
        if name in SAFE_DUNDERS or (mine and not isinstance(obj, type)):
            return None
        if mine and owned(_class_attribute(obj, name)):
            return None  # a special method the answer's own class defines
        return f"{name} 是别的对象的内部接口"
    if name.startswith("_"):
        if mine or (name in NAMEDTUPLE_API and _is_namedtuple(obj)):
            return None
        return f"{name} 是别的对象的内部属性（以下划线开头）"
    if name in RAW_ATTRIBUTES and not mine:
        return f".{name} 直接读写内存或文件"
    if name.startswith(INSTALLERS) and not mine and not (_is_custom_rule(obj) and owned(getattr(obj, "fun", None))):
        return f".{name} 会改写库里现成的对象（例如它的求导规则）；只能用在作答区自己定义的函数和类上"
    return None


def _is_custom_rule(obj) -> bool:
    return type(obj).__module__ == "jax._src.custom_derivatives" and type(obj).__name__ in ("custom_jvp", "custom_vjp")


def _class_attribute(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _is_namedtuple(obj) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


_SAFE_BUILTIN_OBJECTS: set[int] = set()  # ids of the real builtins an answer is given as they are


def refused_value(value) -> str | None:
    """Why an answer may not hold `value` (from an attribute, item, call or iteration), or None."""
    kind = type(value)
    if kind in INTERNAL_TYPES and kind not in (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType):
        return f"{kind.__name__} 是解释器内部的对象"
    if kind is types.ModuleType:
        return None if _is_allowed_module(value) else f"模块 {getattr(value, '__name__', '?')} 不在允许导入的模块里"
    if kind is dict and "__builtins__" in value:
        return "这是一个命名空间（模块或函数的全局变量）"
    if kind is types.BuiltinFunctionType and getattr(value, "__self__", None) is builtins:
        return None if id(value) in _SAFE_BUILTIN_OBJECTS else f"内置的 {value.__name__} 不对作答区开放"
    if kind in (operator.attrgetter, operator.methodcaller):
        return f"{kind.__name__} 按字符串取属性，绕过检查"
    if kind.__module__ == "jax._src.config":
        return "JAX 的全局设置"
    return _refused_object(value)


def _check(value, what: str):
    why = refused_value(value)
    if why:
        raise _refuse(UseRefused, what, why)
    return value


def guarded_getattr(obj, name):
    """`obj.name` in an answer (RestrictedPython's `_getattr_`; the builtin getattr below)."""
    __tracebackhide__ = True  # noqa: F841
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if isinstance(obj, types.ModuleType):
        return module_attribute(obj, name)
    why = attribute_refusal(obj, name)
    if why:
        raise _refuse(AttributeRefused, f"读取 .{name}", why)
    if name in ("format", "format_map") and (isinstance(obj, str) or obj is str):
        return _safe_format(obj, name)
    return _check(getattr(obj, name), f"读取 .{name}")


def _getattr_builtin(obj, name, *default):
    __tracebackhide__ = True  # noqa: F841
    try:
        return guarded_getattr(obj, name)
    except AttributeError:
        if default:
            return default[0]
        raise


def _hasattr_builtin(obj, name) -> bool:
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


def guarded_getitem(obj, key):
    __tracebackhide__ = True  # noqa: F841
    if type(obj) is dict and "__builtins__" in obj:
        raise _refuse(UseRefused, "读取命名空间里的名字", "这是模块或函数的全局变量")
    return _check(obj[key], "读取下标")


def guarded_iter(obj):
    __tracebackhide__ = True  # noqa: F841
    if type(obj) is dict and "__builtins__" in obj:
        raise _refuse(UseRefused, "遍历命名空间", "这是模块或函数的全局变量")
    for item in iter(obj):
        yield _check(item, "遍历得到的值")


def guarded_call(func, /, *args, **kwargs):
    """Every call an answer makes (except `super()`): the callee and the result are checked."""
    __tracebackhide__ = True  # noqa: F841
    _check(func, "调用这个函数")
    return _check(func(*args, **kwargs), "使用函数的返回值")


def _writable(obj) -> bool:
    if owned(obj):
        return True
    if isinstance(obj, WRITABLE_TYPES):
        return not (type(obj) is dict and "__builtins__" in obj)
    return type(obj).__module__ == "numpy" and type(obj).__name__ in ("ndarray", "flatiter")


class _Writer:
    """What `_write_` hands back: forwards one write after checking it."""

    __slots__ = ("_target",)

    def __init__(self, target):
        object.__setattr__(self, "_target", target)

    def _name(self, name):
        if name.startswith("__") and name.endswith("__") and name not in SETTABLE_DUNDERS:
            raise _refuse(UseRefused, f"设置 .{name}", "这会改变对象本身是什么")
        return name

    def __setattr__(self, name, value):
        setattr(self._target, self._name(name), value)

    def __delattr__(self, name):
        delattr(self._target, self._name(name))

    def __setitem__(self, key, value):
        self._target[key] = value

    def __delitem__(self, key):
        del self._target[key]


def guarded_write(obj):
    """`_write_`: the target of `x.a = v`, `x[i] = v` and `del`."""
    __tracebackhide__ = True  # noqa: F841
    if not _writable(obj):
        raise _refuse(UseRefused, f"改动 {type(obj).__name__} 对象", "只能改动作答区自己创建的对象和普通容器")
    return _Writer(obj)


def _setattr_builtin(obj, name, value):
    setattr(guarded_write(obj), name, value)


def _delattr_builtin(obj, name):
    delattr(guarded_write(obj), name)


_INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "&=": operator.iand, "^=": operator.ixor, "|=": operator.ior,
    "@=": operator.imatmul,
}  # fmt: skip


def inplace(op: str, target, value):
    if isinstance(target, WRITABLE_TYPES) and not _writable(target):
        raise _refuse(UseRefused, f"{op} 改动这个对象", "这是模块或函数的全局变量")
    return _INPLACE[op](target, value)


class _SafeFormatter(string.Formatter):
    """str.format whose fields ("{0.x[1]}") go through the guard like any other access."""

    def get_field(self, field_name, args, kwargs):
        import _string

        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attribute, key in rest:
            obj = guarded_getattr(obj, key) if is_attribute else guarded_getitem(obj, key)
        return obj, first


def _safe_format(obj, name):
    formatter = _SafeFormatter()
    if name == "format":
        method = lambda text, *args, **kwargs: formatter.vformat(text, args, kwargs)  # noqa: E731
    else:
        method = lambda text, mapping: formatter.vformat(text, (), mapping)  # noqa: E731
    return method if obj is str else functools.partial(method, obj)


# ---------------------------------------------------------------------------------------------
# The builtins an answer gets


def _print(*values, sep=" ", end="\n", file=None, flush=False):
    if file is not None and not owned(file):
        raise _refuse(UseRefused, "print(file=...)", "作答区的输出只能打印到单元格下方")
    builtins.print(*values, sep=sep, end=end, file=file, flush=flush)


def _help(obj=None):
    import pydoc

    if obj is None or isinstance(obj, str):
        raise _refuse(UseRefused, "help() 查找名字", "请传入对象本身，例如 help(jnp.sum)")
    builtins.print(pydoc.render_doc(obj, renderer=pydoc.plaintext))


def _dir(*obj):
    if not obj:
        raise _refuse(UseRefused, "不带参数的 dir()", "请写 dir(对象)")
    (target,) = obj
    names = []
    for name in builtins.dir(target):
        try:
            if isinstance(target, types.ModuleType):
                if not module_name_refusal(target.__name__, name):
                    names.append(name)
            elif not attribute_refusal(target, name):
                names.append(name)
        except Exception:  # noqa: BLE001, S112 - a name the object cannot explain is left out
            continue
    return names


def _unavailable(name: str, why: str):
    def refuse(*args, **kwargs):
        raise _refuse(UseRefused, f"使用 {name}", why)

    refuse.__name__ = name
    return refuse


_PLAIN_BUILTINS = """
    abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict divmod enumerate
    filter float format frozenset hash hex id int isinstance issubclass iter len list map max min next
    object oct ord pow property range repr reversed round set slice sorted staticmethod str sum super
    tuple type zip __build_class__
""".split()
UNAVAILABLE = {
    "exec": "作答区不执行字符串形式的代码",
    "eval": "作答区不执行字符串形式的代码",
    "compile": "作答区不编译字符串形式的代码",
    "open": "作答区不读写文件",
    "input": "评分时没有键盘输入",
    "breakpoint": "评分时没有交互式调试器",
    "globals": "作答区不直接访问命名空间",
    "locals": "作答区不直接访问命名空间",
    "vars": "作答区不直接访问命名空间（读属性请直接写 obj.x）",
    "memoryview": "作答区不直接读写内存",
    "exit": "作答区不结束内核",
    "quit": "作答区不结束内核",
    "get_ipython": "作答区不直接操作内核（IPython）",
}


def _make_builtins() -> dict:
    table = {name: getattr(builtins, name) for name in _PLAIN_BUILTINS}
    table.update(
        {
            name: value
            for name, value in vars(builtins).items()
            if isinstance(value, type) and issubclass(value, BaseException)
        }
    )
    table.update({"None": None, "True": True, "False": False, "Ellipsis": Ellipsis, "NotImplemented": NotImplemented})
    _SAFE_BUILTIN_OBJECTS.update(id(v) for v in table.values() if type(v) is types.BuiltinFunctionType)
    table.update(
        getattr=_getattr_builtin,
        hasattr=_hasattr_builtin,
        setattr=_setattr_builtin,
        delattr=_delattr_builtin,
        print=_print,
        help=_help,
        dir=_dir,
        __import__=guarded_import,
    )
    table.update({name: _unavailable(name, why) for name, why in UNAVAILABLE.items()})
    return table


BUILTINS = _make_builtins()

GUARDS = {
    "_getattr_": guarded_getattr,
    "_getitem_": guarded_getitem,
    "_getiter_": guarded_iter,
    "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
    "_unpack_sequence_": guarded_unpack_sequence,
    "_write_": guarded_write,
    "_inplacevar_": inplace,
    "_call_": guarded_call,
    "_own_": own_class,
    "__metaclass__": _ClassMaker(),
}

# Library functions an answer may call only on its own objects, each with the check it needs.


def _own_type_only(function):
    @functools.wraps(function)
    def checked(nodetype, *args, **kwargs):
        if not owned(nodetype):
            raise _refuse(
                UseRefused,
                f"对 {getattr(nodetype, '__name__', nodetype)} 调用 {function.__name__}",
                "只能为作答区自己定义的类注册",
            )
        return function(nodetype, *args, **kwargs)

    return checked


def _own_wrapper_only(function):
    @functools.wraps(function)
    def checked(wrapper, *args, **kwargs):
        if not owned(wrapper):
            raise _refuse(UseRefused, f"{function.__name__} 改写别的函数", "只能用在作答区自己定义的函数上")
        return function(wrapper, *args, **kwargs)

    return checked


def _wraps(wrapped, assigned=functools.WRAPPER_ASSIGNMENTS, updated=functools.WRAPPER_UPDATES):
    update = _GUARDED[id(functools.update_wrapper)]
    return functools.partial(update, wrapped=wrapped, assigned=assigned, updated=updated)


def _make_guarded() -> dict[int, object]:
    table = {
        id(functools.update_wrapper): _own_wrapper_only(functools.update_wrapper),
        id(functools.wraps): _wraps,
    }
    try:
        import jax.tree_util as tree_util
    except ImportError:  # the static scan runs without JAX in some tools
        return table
    for name in (
        "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
        "register_pytree_with_keys_class", "register_dataclass", "register_static",
    ):  # fmt: skip
        function = getattr(tree_util, name, None)
        if function is not None:
            table[id(function)] = _own_type_only(function)
    return table


class _LazyGuarded(dict):
    def get(self, key, default=None):
        if not self:
            self.update(_make_guarded())
        return super().get(key, default)

    def __getitem__(self, key):
        if not self:
            self.update(_make_guarded())
        return super().__getitem__(key)


_GUARDED = _LazyGuarded()


# ---------------------------------------------------------------------------------------------
# Compiling an answer

# Names an answer may not bind or read: the guards themselves and what Python looks them up in
# (RestrictedPython's own names too, whether or not this policy uses them).
RESERVED_NAMES = frozenset(
    [*GUARDS, "_magic_", "_apply_", "_print_", "_print", "__builtins__"]
)
ALLOWED_MAGICS = ("time", "timeit")
MAGIC_SPELLINGS = ("run_line_magic", "run_cell_magic", "system", "getoutput")  # get_ipython().<this>(...)


class AnswerPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer, adapted to honest answers: private names and attributes
    are judged at run time (so `self.__count` and namedtuple's `_replace` work), `x.a += 1` and
    `nonlocal` are fine, `print` is the ordinary one, every call goes through `_call_`, and
    `%time`/`%timeit` run confined like the rest of the cell."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.classes: list[str] = []

    def check_name(self, node, name, allow_magic_methods=False):
        if name in RESERVED_NAMES:
            self.error(node, f'"{name}" 是评分程序保留的名字')

    def _mangle(self, name: str) -> str:
        if self.classes and name.startswith("__") and not name.endswith("__"):
            owner = self.classes[-1].lstrip("_")
            if owner:
                return f"_{owner}{name}"
        return name

    def visit_Name(self, node):
        self.check_name(node, node.id)
        return node

    def visit_Attribute(self, node):
        node.attr = self._mangle(node.attr)
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            new = ast.Call(ast.Name("_getattr_", ast.Load()), [node.value, ast.Constant(node.attr)], [])
            copy_locations(new, node)
            return new
        node.value = ast.Call(ast.Name("_write_", ast.Load()), [node.value], [])
        copy_locations(node.value, node)
        return node

    def visit_ClassDef(self, node):
        self.classes.append(node.name)
        try:
            new = super().visit_ClassDef(node)
        finally:
            self.classes.pop()
        new.decorator_list.insert(0, ast.Name("_own_", ast.Load()))  # outermost: the class as decorated
        copy_locations(new, node)
        return new

    def visit_FunctionDef(self, node):
        node.name = self._mangle(node.name) if self.classes else node.name
        return super().visit_FunctionDef(node)

    def visit_AnnAssign(self, node):
        return self.node_contents_visit(node)  # `x: float = 1.0`: the annotation is guarded like any expression

    def visit_Nonlocal(self, node):
        return node  # rebinds a variable of the enclosing function: nothing to guard

    def visit_Call(self, node):
        magic = ipython_call(node)
        if magic in MAGIC_SPELLINGS:
            return self.magic_call(node, magic)
        node = self.node_contents_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            return node  # zero-argument super() reads its caller's frame
        node.args.insert(0, node.func)
        node.func = ast.Name("_call_", ast.Load())
        copy_locations(node.func, node)
        return node

    def magic_call(self, node, kind):
        """`get_ipython().run_line_magic('time', code)`, IPython's spelling of `%time code`."""
        texts = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        name = (texts[0] or "?").lstrip("%") if texts else "?"
        if kind in ("system", "getoutput"):
            self.error(node, "shell 命令（!…）在作答区不能用")
        elif name not in ALLOWED_MAGICS or None in texts:
            self.error(node, f"魔法命令 %{name} 在作答区不能用（只能用 %time、%timeit）")
        else:
            args = [ast.Constant(kind == "run_cell_magic"), *node.args]
            new = ast.Call(ast.Name("_magic_", ast.Load()), args, [])
            copy_locations(new, node)
            return new
        return node

    def visit_AugAssign(self, node):
        """`x.a += v` and `x[i] += v`: read through the guard, combine, write through the guard;
        the object (and the index) evaluated once."""
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        op = ast.Constant(dict(_AUG_OPERATORS)[type(node.op)])
        value = self.visit(node.value)
        holder = self.gen_tmp_name()
        statements = [ast.Assign([ast.Name(holder, ast.Store())], self.visit(target.value))]
        if isinstance(target, ast.Attribute):
            attr = self._mangle(target.attr)
            read = ast.Call(ast.Name("_getattr_", ast.Load()), [ast.Name(holder, ast.Load()), ast.Constant(attr)], [])
            store = ast.Attribute(
                ast.Call(ast.Name("_write_", ast.Load()), [ast.Name(holder, ast.Load())], []), attr, ast.Store()
            )
        else:
            index = self.gen_tmp_name()
            statements.append(ast.Assign([ast.Name(index, ast.Store())], _index_value(self.visit(target.slice))))
            read = ast.Call(
                ast.Name("_getitem_", ast.Load()), [ast.Name(holder, ast.Load()), ast.Name(index, ast.Load())], []
            )
            store = ast.Subscript(
                ast.Call(ast.Name("_write_", ast.Load()), [ast.Name(holder, ast.Load())], []),
                ast.Name(index, ast.Load()),
                ast.Store(),
            )
        combined = ast.Call(ast.Name("_inplacevar_", ast.Load()), [op, read, value], [])
        statements.append(ast.Assign([store], combined))
        for statement in statements:
            copy_locations(statement, node)
        return statements


_AUG_OPERATORS = [
    (ast.Add, "+="), (ast.Sub, "-="), (ast.Mult, "*="), (ast.Div, "/="), (ast.FloorDiv, "//="), (ast.Mod, "%="),
    (ast.Pow, "**="), (ast.LShift, "<<="), (ast.RShift, ">>="), (ast.BitAnd, "&="), (ast.BitXor, "^="),
    (ast.BitOr, "|="), (ast.MatMult, "@="),
]  # fmt: skip


def _index_value(node):
    """An index as a value: `a[1:2, 3]` indexes with (slice(1, 2, None), 3)."""
    if isinstance(node, ast.Slice):
        parts = [part or ast.Constant(None) for part in (node.lower, node.upper, node.step)]
        return ast.Call(ast.Name("slice", ast.Load()), parts, [])
    if isinstance(node, ast.Tuple):
        return ast.Tuple([_index_value(element) for element in node.elts], ast.Load())
    return node


def ipython_call(node: ast.Call) -> str | None:
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


_RP_MESSAGES = [  # RestrictedPython's own errors, in the course's language
    (re.compile(r"(\w+) statements are not allowed\."), "作答区不支持 {0} 语句"),
    (re.compile(r'The keyword argument "metaclass" is not allowed\.'), "作答区的类不能指定 metaclass"),
    (re.compile(r'"\*" imports are not allowed\.'), "请写出要导入的名字，不用 import *"),
    (re.compile(r"Unpacking in comprehensions is not allowed\."), "推导式里不能用 * 解包"),
]


def _translate(error: str) -> tuple[int, str]:
    match = re.match(r"Line (\d+): (.*)", error)
    line, text = (int(match.group(1)), match.group(2)) if match else (1, error)
    for pattern, chinese in _RP_MESSAGES:
        found = pattern.fullmatch(text.strip())
        if found:
            return line, chinese.format(*found.groups())
    if text.startswith("SyntaxError"):
        return line, text
    return line, text


def python_source(source: str) -> str:
    """IPython's plain-Python form of a cell (%magics and !shell become calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


@contextlib.contextmanager
def _deep_enough():
    """RestrictedPython's transformer recurses along the tree; a 1500-term sum is a valid
    answer, so compiling gets more room than Python's default 1000 frames."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def compile_errors(source: str) -> list[tuple[int, str]]:
    """(line, message) for what the policy refuses at compile time; [] if it compiles."""
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return []  # not a rule matter: Python reports it like any other syntax error
    except (RecursionError, MemoryError):
        return [(1, "代码结构过深或过大，无法检查")]
    try:
        with _deep_enough():
            result = compile_restricted_exec(tree, "<check>", policy=AnswerPolicy)
    except (RecursionError, MemoryError):
        return [(1, "代码结构过深或过大，无法检查")]
    return sorted(_translate(e) for e in result.errors)


# ---------------------------------------------------------------------------------------------
# Running answer cells in a kernel


class _Cells:
    namespace: dict | None = None
    count = 0


def new_namespace() -> dict:
    """The globals of answer cells: the guards, the answer's builtins, and what they define."""
    namespace = {"__builtins__": BUILTINS, "__name__": "__main__", "__doc__": None, **GUARDS}
    namespace["_magic_"] = functools.partial(_magic, namespace)
    return namespace


def namespace() -> dict:
    if _Cells.namespace is None:
        _Cells.namespace = new_namespace()
    return _Cells.namespace


def start(setup_source: str = "", fresh: bool = True) -> dict:
    """The answer namespace with what the setup cell imported, as far as an answer may: a fresh
    one, or (`fresh=False`, a student running the setup cell again) the one they have, so that
    their answer stays defined."""
    if fresh or _Cells.namespace is None:
        _Cells.namespace = new_namespace()
    _exclude_from_jax_tracebacks()
    try:
        tree = ast.parse(setup_source)
    except SyntaxError:
        return _Cells.namespace
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            try:
                run_cell(ast.unparse(statement), display=False)
            except Refused:
                continue  # the tests use it (contextlib, ch4check), the answer does not get it
    del _log[:]  # those refusals were the course's, not the student's
    return _Cells.namespace


def _exclude_from_jax_tracebacks() -> None:
    if "jax" in sys.modules:
        from jax._src import traceback_util

        traceback_util.register_exclusion(__file__)


def _compile(tree, filename: str):
    with _deep_enough():
        result = compile_restricted_exec(tree, filename, policy=AnswerPolicy)
    if result.errors:
        lines = "；".join(f"第 {line} 行：{text}" for line, text in sorted(_translate(e) for e in result.errors))
        raise _refuse(UseRefused, "运行这段代码", lines)
    return result.code


def compile_cell(source: str, display: bool = True):
    """(code, code of the last expression or None): one answer cell compiled by the policy."""
    _Cells.count += 1
    filename = ANSWER_FILE.format(_Cells.count)
    text = python_source(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)  # for tracebacks
    tree = ast.parse(text, filename)
    last = None
    if display and tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        value = tree.body.pop().value
        last = ast.Module([ast.Assign([ast.Name("_ch4_last", ast.Store())], value)], [])
        ast.copy_location(last.body[0], value)
        ast.fix_missing_locations(last)
    return _compile(tree, filename), None if last is None else _compile(last, filename)


def run_cell(source: str, display: bool = True, ns: dict | None = None):
    """Run one answer cell confined in the answer namespace; returns the value of its last
    expression (which IPython then shows, as for any cell), or None."""
    __tracebackhide__ = True  # noqa: F841
    ns = namespace() if ns is None else ns
    code, last = compile_cell(source, display)
    exec(code, ns)  # noqa: S102 - compiled by the policy above
    if last is None:
        return None
    exec(last, ns)  # noqa: S102
    return ns.pop("_ch4_last", None)


def _magic(ns: dict, cell_form: bool, name: str, line: str, cell: str | None = None):
    """%time / %timeit (and their cell forms) on confined code, printing what IPython prints."""
    __tracebackhide__ = True  # noqa: F841
    if name.lstrip("%") == "time":
        before, start = os.times(), time.perf_counter()
        value = run_cell((cell or "") if cell_form else line, display=not cell_form, ns=ns)
        wall, after = time.perf_counter() - start, os.times()
        user, system = after.user - before.user, after.system - before.system
        builtins.print(
            f"CPU times: user {_duration(user)}, sys: {_duration(system)}, total: {_duration(user + system)}"
        )
        builtins.print(f"Wall time: {_duration(wall)}")
        return value
    options, code = timing_options(line)
    _timeit(ns, compile_cell((cell or "") if cell_form else code, display=False)[0], options)
    return None


_OPTION = re.compile(r"^\s*-([a-zA-Z])(?:\s*(\d+))?")


def timing_options(line: str) -> tuple[dict, str]:
    """(-n/-r/-q options, the code) of a %timeit line."""
    options = {}
    while True:
        match = _OPTION.match(line)
        if not match:
            return options, line.strip()
        options[match.group(1)] = int(match.group(2)) if match.group(2) else True
        line = line[match.end() :]


def _timeit(ns: dict, code, options: dict) -> None:
    import statistics

    def loops(number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            exec(code, ns)  # noqa: S102 - compiled by the policy
        return time.perf_counter() - start

    repeat, number = int(options.get("r", 7)), int(options.get("n", 0))
    if not number:  # as IPython does: the first power of ten whose loops take 0.2 s
        number = 1
        while number < 10**6 and loops(number) < 0.2:
            number *= 10
    runs = [loops(number) / number for _ in range(repeat)]
    if not options.get("q"):
        spread = statistics.pstdev(runs) if len(runs) > 1 else 0.0
        builtins.print(
            f"{_duration(statistics.mean(runs))} ± {_duration(spread)} per loop (mean ± std. dev. of "
            f"{repeat} run{'s' * (repeat != 1)}, {number} loop{'s' * (number != 1)} each)"
        )


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
