"""The answer guard (kit/ch4guard.py), in this process, both ways.

* Honest Python runs: every idiom a student writes (type hints, dataclasses, namedtuples, private
  attributes, counters, prints, magics, names that shadow builtins) compiles, runs and is not
  reported by the early scan (kit/ch4rules.py); every public name of the modules students use is
  reachable unless it falls in one of the refused categories, each named here.
* Nothing else is reached. The attack suite is generated from the language itself: for every
  attribute name of real frame, code, function, generator, coroutine, async generator,
  traceback, cell and module objects (`dir()`), an answer that holds such an object reads the
  attribute both as `obj.name` and with `getattr`; it is refused, or what it gets is harmless by
  this module's own judgement (`harmful`), written independently of the guard. The same for
  every attribute reachable in one step from a function, a generator, a lambda and a caught
  exception of the answer's own. Afterwards the kit is unchanged.
* The scan never refuses what the guard allows, and what the scan reports the guard refuses
  when the line runs.
"""

import builtins
import types
from textwrap import dedent

import ch4check
import ch4guard
import ch4rules
import pytest

SETUP = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom functools import partial\n"

HONEST = {
    # the twelve kinds an honest student wrote that the old rules refused
    "jax.typing hint": dedent(
        """
        from jax.typing import ArrayLike

        def f(x: ArrayLike) -> ArrayLike:
            return x

        f(1.0)
        """
    ),
    "finfo after re-importing jnp": dedent(
        """
        import jax.numpy as jnp

        def tiny(x):
            return jnp.finfo(x.dtype).tiny

        tiny(jnp.ones(2))
        """
    ),
    "parameter named input": dedent(
        """
        def f(input):
            return input + 1

        f(1)
        """
    ),
    "name-mangled private attribute": dedent(
        """
        class Counter:
            def __init__(self):
                self.__calls = 0

            def __call__(self, x):
                self.__calls += 1
                return self.__calls

        c = Counter()
        c(1)
        c(2)
        """
    ),
    "jax.__version__": "print(jax.__version__)",
    "namedtuple _replace and _asdict": dedent(
        """
        from collections import namedtuple

        R = namedtuple('R', 'a b')
        r = R(1, 2)._replace(a=3)
        (r._asdict(), R._fields, R._make([4, 5]))
        """
    ),
    "iinfo": "jnp.iinfo(jnp.int32).max",
    "DTypeLike": dedent(
        """
        import jax.typing

        def cast(x, dtype: jax.typing.DTypeLike):
            return jnp.asarray(x, dtype)

        cast(1, jnp.float32)
        """
    ),
    "checkpoint_policies": dedent(
        """
        from jax.ad_checkpoint import checkpoint_policies

        g = jax.checkpoint(jnp.sin, policy=checkpoint_policies.nothing_saveable)
        jax.grad(g)(1.0)
        """
    ),
    "jax.Device": dedent(
        """
        def place(x, device: jax.Device | None = None):
            return x

        place(1.0)
        """
    ),
    "write through .flat": dedent(
        """
        a = np.zeros(3)
        a.flat[0] = 1.0
        a
        """
    ),
    "counter on a function attribute": dedent(
        """
        def f(x):
            f.calls += 1
            return x

        f.calls = 0
        f(1)
        f(2)
        f.calls
        """
    ),
    "other.prev = self": dedent(
        """
        class Node:
            def link(self, other):
                other.prev = self

        a, b = Node(), Node()
        a.link(b)
        b.prev is a
        """
    ),
    "__all__": dedent(
        """
        __all__ = ['f']

        def f(x):
            return x

        __all__
        """
    ),
    "help": "help(jnp.sum)",
    "variables named vars and compile": dedent(
        """
        vars = [1, 2]
        compile = sum(vars)
        compile
        """
    ),
    # more everyday Python
    "future annotations and dataclass": dedent(
        """
        from __future__ import annotations
        from dataclasses import dataclass, field

        @dataclass(frozen=True)
        class Config:
            eps: float = 1e-6
            names: list[str] = field(default_factory=list)

        Config().eps
        """
    ),
    "dataclass post_init and slots": dedent(
        """
        from dataclasses import dataclass

        @dataclass(slots=True)
        class C:
            a: float

            def __post_init__(self):
                self.a = 2 * self.a

            def bump(self):
                self.a += 1
                return self.a

        C(1.0).bump()
        """
    ),
    "typing.NamedTuple": dedent(
        """
        from typing import NamedTuple

        class P(NamedTuple):
            a: float
            b: int = 2

        P(1.0)._replace(b=5)
        """
    ),
    "enum and abc": dedent(
        """
        import abc
        import enum

        class Mode(enum.Enum):
            FAST = 1

        class Base(abc.ABC):
            @abc.abstractmethod
            def run(self): ...

        class Impl(Base):
            def run(self):
                return Mode.FAST.name

        Impl().run()
        """
    ),
    "super, property, classmethod": dedent(
        """
        class A:
            def __init__(self):
                super().__init__()
                self._x = 1

            @property
            def double(self):
                return 2 * self._x

            @classmethod
            def make(cls):
                return cls()

        class B(A):
            def __init__(self):
                super().__init__()

        B.make().double
        """
    ),
    "special methods of one's own class": dedent(
        """
        class V:
            def __init__(self, x):
                self.x = x

            def __eq__(self, other):
                return self.x == other.x

            def __add__(self, other):
                return V(self.x + other.x)

            def __repr__(self):
                return f'V({self.x})'

        V(1) + V(2)
        """
    ),
    "custom_vjp with nondiff and defvjp": dedent(
        """
        @partial(jax.custom_vjp, nondiff_argnums=(1,))
        def clip(x, c):
            return x

        def fwd(x, c):
            return x, None

        def bwd(c, res, g):
            return (jnp.clip(g, -c, c),)

        clip.defvjp(fwd, bwd)
        jax.grad(lambda x: 3.0 * clip(x, 1.0))(2.0)
        """
    ),
    "custom_jvp with defjvp decorator": dedent(
        """
        @jax.custom_jvp
        def f(x):
            return jnp.sin(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), jnp.cos(x) * t

        jax.grad(f)(0.0)
        """
    ),
    "nonlocal counter": dedent(
        """
        def make():
            n = 0
            def step():
                nonlocal n
                n += 1
                return n
            return step

        step = make()
        step()
        step()
        """
    ),
    "pytree of one's own": dedent(
        """
        @jax.tree_util.register_pytree_node_class
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

            def tree_flatten(self):
                return (self.a, self.b), None

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)

        jax.tree_util.tree_map(lambda v: 2 * v, Pair(1.0, 2.0)).b
        """
    ),
    "functools.wraps decorator": dedent(
        """
        import functools

        def logged(f):
            @functools.wraps(f)
            def inner(*a):
                return f(*a)
            return inner

        @logged
        def g(x):
            return x

        g.__name__
        """
    ),
    "format and f-strings": dedent(
        """
        x = 1.23456
        '{:.2f} {name}'.format(x, name='a') + f' {x:>8.3f} {x!r}'
        """
    ),
    "dicts, lists, sets, unpacking": dedent(
        """
        d = {}
        d['a'] = [1, 2]
        d['a'] += [3]
        first, *rest = d['a']
        s = {1}
        s |= {2}
        (first, rest, sorted(s), dict(zip('ab', rest)))
        """
    ),
    "comprehensions and generators": dedent(
        """
        def squares(n):
            for i in range(n):
                yield i * i

        [v for v in squares(4) if v % 2 == 0] + list({i: i for i in range(2)})
        """
    ),
    "exceptions": dedent(
        """
        try:
            jnp.ones(2) @ jnp.ones(3)
        except TypeError as err:
            msg = str(err)
        msg[:10]
        """
    ),
    "main guard": dedent(
        """
        def f(x):
            return x

        if __name__ == '__main__':
            print(f(1.0))
        """
    ),
    "name and doc": dedent(
        """
        def f(x):
            '''doc'''
            return x

        (f.__name__, f.__doc__, f.__qualname__, jnp.sum.__name__)
        """
    ),
    "time and timeit magics": dedent(
        """
        def f(x):
            return x

        %time f(1.0)
        %timeit -n 3 -r 1 f(2.0)

        """
    ),
    "time cell magic": dedent(
        """
        %%time
        x = jnp.ones(3).sum()

        """
    ),
    "lax loops and optax": dedent(
        """
        import optax
        from jax import lax

        lax.fori_loop(0, 3, lambda i, c: c + i, 0), optax.tree.norm({'w': jnp.ones(4)})
        """
    ),
    "jax.random key": dedent(
        """
        key = jax.random.key(0)
        jax.random.normal(key, (2,))
        """
    ),
    "1500-term sum": "total = " + " + ".join(f"{i}.0" for i in range(1500)) + "\ntotal",
    "star arguments": dedent(
        """
        def f(*args, **kwargs):
            return len(args) + len(kwargs)

        f(*[1, 2], **{'x': 3})
        """
    ),
    "isinstance, type, getattr with a default": dedent(
        """
        class A:
            pass

        (isinstance(1.0, float), type(A()).__name__, getattr(A(), 'missing', 0), hasattr(jnp.ones(1), 'shape'))
        """
    ),
    "sorted with str.lower": "sorted(['b', 'A'], key=str.lower)",
    "reading jaxprs": dedent(
        """
        jaxpr = jax.make_jaxpr(jnp.sin)(1.0)
        [eqn.primitive.name for eqn in jaxpr.jaxpr.eqns]
        """
    ),
    "scipy and math": dedent(
        """
        import math
        from scipy.special import expit

        math.isclose(float(expit(0.0)), 0.5)
        """
    ),
}


def fresh():
    return ch4guard.start(SETUP)


@pytest.mark.parametrize("name", HONEST)
def test_honest_python_runs_and_is_not_reported(name):
    fresh()
    assert ch4rules.problems(HONEST[name], preamble=SETUP) == []
    ch4guard.run_cell(HONEST[name])  # raises if the guard refused anything
    assert ch4guard.refusals() == []


def test_magics_print_what_ipython_prints(capsys):
    fresh()
    ch4guard.run_cell("%time 1 + 1\n%timeit -n 2 -r 3 sum(range(10))")
    printed = capsys.readouterr().out
    assert "CPU times: user" in printed and "Wall time:" in printed
    assert "per loop (mean ± std. dev. of 3 runs, 2 loops each)" in printed


def test_the_last_expression_is_the_cells_value_and_a_semicolon_hides_it():
    fresh()
    assert ch4guard.run_cell("x = 2\nx * 3") == 6
    assert ch4guard.run_cell("x * 3;") is None


# Everything a student may import from, by module: the public names refused, by category. A new
# name in a JAX, NumPy or optax release lands in one of these categories or is allowed.
FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, type(__import__("numpy").add))
STUDENT_MODULES = ("jax", "jax.numpy", "jax.lax", "jax.nn", "jax.typing", "numpy", "math", "optax")
REFUSED_CATEGORIES = {
    "files and test suites": "作答区不读写文件",
    "modules outside the list": "不在允许导入的模块里",
    "JAX's global settings": "全局设置",
}


@pytest.mark.parametrize("module", STUDENT_MODULES)
def test_every_public_name_is_reachable_or_refused_for_a_named_reason(module):
    import importlib

    loaded = importlib.import_module(module)
    reasons = {}
    for name in dir(loaded):
        if name.startswith("_"):
            continue
        try:
            ch4guard.module_attribute(loaded, name)
        except ch4guard.Refused as err:
            reasons[name] = str(err)
    unexplained = {n: why for n, why in reasons.items() if not any(c in why for c in REFUSED_CATEGORIES.values())}
    assert not unexplained, f"{module}: refused without one of the named reasons: {unexplained}"
    # every public function that reads or writes no file and starts nothing is reachable
    functions = {n for n in dir(loaded) if not n.startswith("_") and isinstance(getattr(loaded, n, None), FUNCTIONS)}
    refused_functions = {n for n in functions & set(reasons) if "作答区不读写文件" not in reasons[n]}
    assert not refused_functions, f"{module}: functions refused: {refused_functions}"


def test_the_file_and_global_setting_refusals_are_the_expected_names():
    import jax.numpy as jnp
    import numpy as np

    def refused(module):
        out = set()
        for name in dir(module):
            if not name.startswith("_"):
                try:
                    ch4guard.module_attribute(module, name)
                except ch4guard.Refused:
                    out.add(name)
        return out

    assert refused(jnp) == {"load", "save", "savez", "fromfile"}
    assert {"load", "save", "loadtxt", "fromfile", "memmap", "lib", "testing", "ctypeslib", "f2py"} <= refused(np)
    assert "config" in refused(__import__("jax")) and "debug_nans" in refused(__import__("jax"))


# ---------------------------------------------------------------------------------------------
# Reaching nothing: generated from the language


def harmful(value, depth: int = 0) -> bool:
    """What must never reach an answer, judged here without the guard's tables: the
    interpreter's insides, a namespace, a way to run or import code, a module outside the
    ones students import, a bound method of any of those."""
    if isinstance(value, (types.FrameType, types.CodeType, types.TracebackType, types.CellType)):
        return True
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] not in ("jax", "numpy", "math", "optax", "scipy", "functools", "typing")
    if isinstance(value, dict) and "__builtins__" in value:
        return True
    for dangerous in ("exec", "eval", "compile", "open", "__import__", "getattr", "setattr", "globals", "vars"):
        if value is getattr(builtins, dangerous):
            return True
    if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and depth == 0:
        return harmful(getattr(value, "__self__", None), 1)
    if isinstance(value, (tuple, list, types.MappingProxyType)) and depth == 0:
        items = value.values() if isinstance(value, types.MappingProxyType) else value
        return any(harmful(item, 1) for item in items)
    return False


def _generator():
    yield 1


async def _coroutine():
    return 1


async def _async_generator():
    yield 1


def _frame_and_traceback():
    try:
        raise ValueError("x")
    except ValueError as err:
        return err.__traceback__.tb_frame, err.__traceback__


def _cell():
    captured = 1

    def inner():
        return captured

    return inner.__closure__[0]


def _objects_of_every_kind():
    import numpy

    frame, traceback = _frame_and_traceback()
    coroutine = _coroutine()
    coroutine.close()
    return {
        "frame": frame,
        "code": _generator.__code__,
        "function": _generator,
        "generator": _generator(),
        "coroutine": coroutine,
        "async generator": _async_generator(),
        "traceback": traceback,
        "cell": _cell(),
        "allowed module": numpy,
        "module outside the list": types,
        "builtins module": builtins,
    }


KINDS = _objects_of_every_kind()
# What each kind may offer an answer at all (None: judged by `harmful` only).
OFFERS = {
    "frame": set(),
    "code": set(),
    "traceback": set(),
    "cell": set(),
    "generator": {"send", "throw", "close"},
    "coroutine": {"send", "throw", "close"},
    "async generator": {"asend", "athrow", "aclose"},
    "module outside the list": set(),
    "builtins module": set(),
}


def _read(target, name: str):
    """The answer reads `name` on `target` in both spellings: (outcome, value)."""
    outcomes = []
    for code in (f"target.{name}", f"getattr(target, {name!r})"):
        namespace = fresh()
        namespace["target"] = target
        try:
            outcomes.append(("read", ch4guard.run_cell(code)))
        except ch4guard.Refused:
            outcomes.append(("refused", None))
        except Exception as err:  # noqa: BLE001 - an attribute that fails by itself is not a reach
            outcomes.append(("failed", type(err).__name__))
    return outcomes


@pytest.mark.parametrize("kind", KINDS)
def test_every_attribute_of_every_interpreter_object_gains_nothing(kind):
    target = KINDS[kind]
    offered, reached = set(), {}
    for name in dir(target):
        if not name.isidentifier():
            continue
        for outcome, value in _read(target, name):
            if outcome == "read":
                offered.add(name)
                if harmful(value):
                    reached[name] = value
    assert not reached, f"{kind}: these attributes handed the answer something dangerous: {reached}"
    if kind in OFFERS:
        assert offered <= OFFERS[kind], f"{kind} offered {sorted(offered - OFFERS[kind])}"


ORIGINS = {
    "function": "def origin():\n    return 1\n",
    "lambda": "origin = lambda: 1\n",
    "generator": "def make():\n    yield 1\n\norigin = make()\n",
    "exception": "try:\n    1 / 0\nexcept ZeroDivisionError as err:\n    origin = err\n",
}


@pytest.mark.parametrize("origin", ORIGINS)
def test_every_attribute_of_the_answers_own_objects_reaches_nothing(origin):
    """From a function, lambda, generator or exception the answer made itself, every attribute
    in one step and, from what that gives, every attribute in a second step."""
    fresh()
    ch4guard.run_cell(ORIGINS[origin])
    first = ch4guard.namespace()["origin"]
    reached = {}
    for name in dir(first):
        if not name.isidentifier():
            continue
        try:
            value = ch4guard.run_cell(f"origin.{name}")
        except Exception:  # noqa: BLE001, S112 - refused, or fails by itself
            continue
        if harmful(value):
            reached[name] = value
            continue
        for second in dir(value) if not isinstance(value, (int, float, str, bytes, tuple)) else []:
            if second.isidentifier():
                try:
                    deeper = ch4guard.run_cell(f"origin.{name}.{second}")
                except Exception:  # noqa: BLE001, S112
                    continue
                if harmful(deeper):
                    reached[f"{name}.{second}"] = deeper
    assert not reached, f"from the answer's own {origin}: {reached}"


ATTACKS = {
    "a generator's frame to the builtins": "g = (i for i in [0])\nb = g.gi_frame.f_builtins",
    "the frames up to the test magic's locals": "try:\n    1 / 0\nexcept Exception as e:\n"
    "    up = e.__traceback__.tb_frame.f_back.f_locals",
    "a function's globals": "def f():\n    pass\n\nf.__globals__['__builtins__']",
    "object's subclasses": "object.__subclasses__()",
    "a builtin's module": "print.__self__",
    "str.format fields": "'{0.__globals__}'.format(lambda: 0)",
    "format_map fields": "'{f.__globals__}'.format_map({'f': lambda: 0})",
    "type's dictionary": "type.__dict__['__subclasses__']",
    "replacing a kit helper": "import ch4check\nch4check.collect = None",
    "patching NumPy": "np.allclose = lambda *a, **k: True",
    "patching JAX through setattr": "setattr(jax, 'grad', None)",
    "writing a class attribute of the library": "jax.custom_vjp.__call__ = lambda self, *a: 0",
    "becoming a custom_vjp": "class A:\n    pass\n\na = A()\na.__class__ = jax.custom_vjp",
    "a library rule rewritten": "jax.nn.relu.defjvp(lambda p, t: (p[0], t[0]))",
    "a primitive's implementation": "from jax import lax\nlax.sin_p.def_impl(lambda x: x)",
    "jax.config": "jax.config.update('jax_enable_x64', True)",
    "a config context": "jax.disable_jit_state = None\njax.debug_nans.set_global(True)",
    "np.load": "np.load('/etc/passwd', allow_pickle=True)",
    "jax.profiler": "jax.profiler.start_server(9999)",
    "jax.extend": "import jax.extend",
    "compilation cache": "from jax.experimental import compilation_cache",
    "os": "import os",
    "os through numpy": "from numpy.f2py.f2py2e import os",
    "exec": "exec('import os')",
    "eval": "eval('1')",
    "open": "open('/etc/passwd')",
    "get_ipython": "get_ipython()",
    "globals()": "globals()",
    "vars(module)": "vars(np)",
    "a module's dictionary": "np.__dict__",
    "a module's loader": "getattr(np, '__loader__')",
    "raw memory": "np.zeros(2).ctypes",
    "a JAX array's traceback": "jnp.ones(2).traceback.as_python_traceback()",
    "registering a library type as a pytree": "jax.tree_util.register_dataclass(type(lambda: 0), "
    "data_fields=['__globals__'], meta_fields=[])",
    "attrgetter": "import operator\noperator.attrgetter('__globals__')",
    "annotation evaluation": "import typing\ntyping.get_type_hints(len)",
    "singledispatch": "from functools import singledispatch",
    "a module's table mutated": "np.sctypeDict.update({'x': 1})",
    "the guard's names": "_getattr_ = lambda obj, name: 1",
    "the builtins dictionary": "__builtins__['getattr']",
    "a bound method's object": "jnp.ones(2).sum.__self__",
    "super of a library object": "super(type(jnp.ones(1)), jnp.ones(1)).__init__",
    "a shell command": "!ls",
    "another magic": "%config IPCompleter.greedy=True",
    "code inside %timeit": "%timeit -n 1 __import__('os')",
    "relative import": "from . import x",
}


@pytest.mark.parametrize("name", ATTACKS)
def test_attack_is_refused_at_run_time(name):
    fresh()
    with pytest.raises((ch4guard.Refused, AttributeError)) as refused:
        ch4guard.run_cell(ATTACKS[name])
    if not isinstance(refused.value, ch4guard.Refused):  # a name that does not exist at all
        assert "has no attribute" in str(refused.value), refused.value


@pytest.mark.parametrize("name", ATTACKS)
def test_what_the_scan_reports_the_guard_refuses(name):
    """Both directions where the scan speaks: a reported line is a refused line."""
    if ch4rules.problems(ATTACKS[name], preamble=SETUP):
        fresh()
        with pytest.raises(ch4guard.Refused):
            ch4guard.run_cell(ATTACKS[name])


def test_the_kit_is_unchanged_after_every_attack():
    helpers, collect, guards = dict(ch4check.TEST_HELPERS), ch4check.collect, dict(ch4guard.GUARDS)
    for code in ATTACKS.values():
        fresh()
        try:
            ch4guard.run_cell(code)
        except Exception:  # noqa: BLE001, S112 - refused, as the test above shows
            continue
    assert ch4check.collect is collect and dict(ch4check.TEST_HELPERS) == helpers
    assert {k: v for k, v in ch4guard.GUARDS.items() if k != "__metaclass__"} == {
        k: v for k, v in guards.items() if k != "__metaclass__"
    }


def test_refusals_are_logged_for_the_grader_even_when_caught():
    fresh()
    ch4guard.run_cell("try:\n    np.load\nexcept Exception:\n    pass\n")
    assert any("numpy.load" in line for line in ch4guard.refusals())


def test_a_subclass_of_custom_vjp_is_not_a_custom_vjp():
    """The method checks ask for the exact type, so a look-alike fails them."""
    import jax

    fresh()
    ch4guard.run_cell(
        "class Rule(jax.custom_vjp):\n    def __call__(self, x):\n        return jnp.logaddexp(x, 0.0)\n\n"
        "f = Rule(lambda x: x)"
    )
    f = ch4guard.namespace()["f"]
    assert isinstance(f, jax.custom_vjp) and type(f) is not jax.custom_vjp
