"""The answering rules (kit/ch4rules.py), both ways: no honest idiom is refused, and every way
out that the rules name is refused however it is spelled. No kernels here."""

import re

import ch4rules
import nbformat
import pytest

from grader import course

HONEST = {
    "typing": "from typing import Callable\n\ndef apply(f: Callable[[float], float], x: float) -> float:\n"
    "    return f(x)",
    "future annotations": "from __future__ import annotations\n\ndef f(x: jax.Array) -> jax.Array:\n    return x",
    "dataclasses": "import dataclasses\n\n@dataclasses.dataclass(frozen=True)\nclass Config:\n    eps: float = 1e-6\n",
    "dataclass post_init": "from dataclasses import dataclass\n\n@dataclass\nclass C:\n    a: float\n\n"
    "    def __post_init__(self):\n        self.b = 2 * self.a\n",
    "operator": "import operator\nfrom functools import reduce\n\ntotal = reduce(operator.add, [1, 2, 3])",
    "namedtuple": "import collections\n\nResiduals = collections.namedtuple('Residuals', ['sin', 'cos'])",
    "numbers enum abc": "import abc\nimport enum\nimport numbers\n\nclass Mode(enum.Enum):\n    FAST = 1\n\n"
    "class Base(abc.ABC):\n    @abc.abstractmethod\n    def run(self): ...\n\nok = isinstance(1.0, numbers.Real)",
    "helper class": "class Clip:\n    def __init__(self, threshold):\n        self.threshold = threshold\n\n"
    "    def __call__(self, x):\n        return jnp.minimum(x, self.threshold)\n",
    "call counter": "class Counter:\n    def __init__(self):\n        self.calls = 0\n\n    def __call__(self, x):\n"
    "        self.calls += 1\n        self._last = x\n        self.seen = {}\n"
    "        self.seen[self.calls] = x\n        return x\n",
    "main guard": "def f(x):\n    return x\n\nif __name__ == '__main__':\n    print(f(1.0))",
    "name and doc": "def f(x):\n    '''doc'''\n    return x\n\nprint(f.__name__, f.__doc__, f.__qualname__)",
    "time magics": "def f(x):\n    return x\n\n%time f(1.0)\n%timeit -n 3 -r 1 f(2.0)\n",
    "time cell magic": "%%time\nx = jnp.ones(3).sum()\n",
    "jax submodules": "from jax import lax\nfrom jax.ad_checkpoint import checkpoint_name\nimport jax.numpy as jnp\n"
    "from jax.flatten_util import ravel_pytree\nfrom scipy.integrate import solve_ivp\nimport optax",
    "1500-term sum": "total = " + " + ".join(f"{i}.0" for i in range(1500)),
    "super and properties": "class A:\n    def __init__(self):\n        super().__init__()\n        self.x = 1\n\n"
    "    @property\n    def double(self):\n        return 2 * self.x\n",
}

REFUSED = {
    "os re-exported by numpy.f2py": "from numpy.f2py.f2py2e import os",
    "os through an attribute chain": "import numpy as np\nnp.f2py.f2py2e.os.getcwd()",
    "an alias of a refused module": "import numpy as np\nm = np.f2py",
    "sys through any object": "import jax\njax.sys",
    "importlib": "import importlib",
    "builtins": "import builtins\nbuiltins.isinstance = lambda *a: True",
    "patching a module function": "np.allclose = lambda *a, **k: True",
    "patching through a parameter": "def f(m):\n    m.allclose = None\n\nf(np)",
    "writing a module's table": "np.linalg.norm_table['x'] = 1",
    "module data mutated": "jax.config.update('jax_enable_x64', True)",
    "jax.config imported": "from jax import config",
    "getattr": "f = getattr(np, 'allclose')",
    "dunder attribute": "d = np.__dict__",
    "private attribute": "jax._src",
    "always-equal class": "class A:\n    def __eq__(self, other):\n        return True",
    "other magics": "%config IPCompleter.greedy=True",
    "shell commands": "!ls /",
    "code inside %timeit": "%timeit -n 1 __import__('os')",
    "pickle loading": "np.load('x.npy', allow_pickle=True)",
    "file output on arrays": "jnp.ones(3).tofile('x')",
    "attrgetter": "from operator import attrgetter",
    "annotation evaluation": "import typing\ntyping.get_type_hints(len)",
    "raw memory": "from numpy.lib.stride_tricks import as_strided",
    "get_ipython": "get_ipython().events.register('pre_run_cell', print)",
}


@pytest.mark.parametrize("name", HONEST)
def test_honest_idiom_is_accepted(name):
    assert ch4rules.problems("import jax\nimport jax.numpy as jnp\nimport numpy as np\n" + HONEST[name]) == []


@pytest.mark.parametrize("name", REFUSED)
def test_way_out_is_refused(name):
    found = ch4rules.problems("import jax\nimport jax.numpy as jnp\nimport numpy as np\n" + REFUSED[name])
    assert found and all(re.match(r"第 \d+ 行：", line) for line in found), found


@pytest.mark.parametrize("path", sorted(ch4rules.REFUSED))
def test_every_refused_helper_is_refused_when_imported(path):
    module, _, name = path.rpartition(".")
    assert ch4rules.problems(f"from {module} import {name}"), path
    assert ch4rules.problems(f"import {path}") or "." not in module, path


def test_line_numbers_point_at_the_problem():
    assert ch4rules.problems("x = 1\n\nimport os\n") == ["第 3 行：导入了 os：os 不在允许导入的包里"]


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_statement_lists_the_rules_that_are_enforced(assignment):
    statement = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4).cells[0].source
    rules = statement[statement.index("**作答规则**") :]
    missing = [p for p in ch4rules.ALLOWED_PACKAGES if f"`{p}`" not in rules]
    missing += [f"%{m}" for m in ch4rules.ALLOWED_MAGICS if f"`%{m}`" not in rules]
    assert not missing, f"{assignment}: the statement's rules do not name {missing}"
    assert "%%ch4test" in rules and "0 分" in rules
