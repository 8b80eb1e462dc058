"""The early scan (kit/ch4rules.py): every way out it knows is reported with its line, however it
is spelled, and the statements list the rules. That it accepts honest Python, and that the guard
refuses what it reports, is in tests/test_guard.py. No kernels here."""

import re

import ch4guard
import ch4rules
import nbformat
import pytest

from grader import REPO, course

SETUP = "import jax\nimport jax.numpy as jnp\nimport numpy as np\n"

REFUSED = {
    "os re-exported by numpy.f2py": "from numpy.f2py.f2py2e import os",
    "os through an attribute chain": "np.f2py.f2py2e.os.getcwd()",
    "an alias of a refused module": "m = np.f2py",
    "importlib": "import importlib",
    "builtins": "import builtins\nbuiltins.isinstance = lambda *a: True",
    "patching a module function": "np.allclose = lambda *a, **k: True",
    "patching a submodule's function": "jax.test_util.check_grads = None",
    "jax.config through the setup cell's name": "jax.config.update('jax_enable_x64', True)",
    "jax.config imported": "from jax import config",
    "np.load through the setup cell's name": "np.load('x.npy')",
    "jax.extend": "import jax.extend",
    "jax.profiler": "jax.profiler.start_server(9999)",
    "the compilation cache": "from jax.experimental.compilation_cache import compilation_cache",
    "a private module": "jax._src",
    "other magics": "%config IPCompleter.greedy=True",
    "shell commands": "!ls /",
    "code inside %timeit": "%timeit -n 1 __import__('os')",
    "code inside %%time": "%%time\nimport os\n",
    "file output": "jnp.save('x', jnp.ones(3))",
    "attrgetter": "from operator import attrgetter",
    "annotation evaluation": "import typing\ntyping.get_type_hints(len)",
    "get_ipython": "get_ipython().events.register('pre_run_cell', print)",
    "exec": "exec('x = 1')",
    "the guard's own names": "_getattr_ = None",
    "async code": "async def f():\n    pass",
}


@pytest.mark.parametrize("name", REFUSED)
def test_way_out_is_reported_with_its_line(name):
    found = ch4rules.problems("x = 1\n" + REFUSED[name], preamble=SETUP)
    assert found and all(re.match(r"第 \d+ 行：", line) for line in found), found
    assert any(line.startswith("第 2 行") or line.startswith("第 3 行") for line in found), found


@pytest.mark.parametrize("path", sorted(ch4guard.REFUSED))
def test_every_refused_name_is_reported_when_imported(path):
    module, _, name = path.rpartition(".")
    assert ch4rules.problems(f"from {module} import {name}"), path


def test_line_numbers_point_at_the_problem():
    assert ch4rules.problems("x = 1\n\nimport os\n") == ["第 3 行：导入了 os：不在允许导入的模块里"]


def test_names_that_only_shadow_a_builtin_are_the_students_own():
    assert ch4rules.problems("def f(input, vars):\n    compile = input + vars\n    return compile") == []
    assert ch4rules.problems("print(vars(np))", preamble=SETUP) == [
        "第 1 行：使用了 vars：作答区不直接访问命名空间（读属性请直接写 obj.x）"
    ]


RULES_ANCHOR = "../../notebooks/00_intro.ipynb#🟢-必读：作答规则"


def test_the_guide_states_the_rules_that_are_enforced():
    """The answering rules are written once, in 00_intro; they name every allowed package and magic."""
    intro = nbformat.read(REPO / "notebooks" / "00_intro.ipynb", as_version=4)
    text = "\n".join(c.source for c in intro.cells if c.cell_type == "markdown")
    rules = text[text.index("## 🟢 必读：作答规则") :].split("\n## ")[0]
    missing = [p for p in ch4rules.ALLOWED_PACKAGES if f"`{p}`" not in rules]
    missing += [f"%{m}" for m in ch4rules.ALLOWED_MAGICS if f"`%{m}`" not in rules]
    assert not missing, f"00_intro's rules do not name {missing}"
    assert "%%ch4test" in rules and "0 分" in rules


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_statement_links_the_rules_and_the_section_that_teaches_it(assignment):
    statement = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4).cells[0].source
    assert f"]({RULES_ANCHOR})" in statement and "0 分" in statement and "%%ch4test" in statement
    read_first = re.search(r"\*\*先读\*\*：\[[^\]]+\]\(\.\./\.\./notebooks/([^)#]+\.ipynb)#[^)]+\)", statement)
    assert read_first, f"{assignment}: the statement names no section to read first"
    assert (REPO / "notebooks" / read_first.group(1)).exists()
