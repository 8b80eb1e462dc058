"""Nothing in the main line is used before it is taught (issue #46).

Every JAX name a main-line notebook's code uses (`jax.…`, `lax.…`, `from jax… import …`) must be a
prerequisite that 00_intro states, or introduced in that notebook or one before it in the reading order
(00_intro's table). Each notebook's list below is checked both ways: a name it introduces is named in
its prose and used in its code. Library namespaces (`jax.numpy`, `jax.random`, `jax.tree_util`,
`jax.nn`, `jax.scipy`) count as one name each: their functions are mathematics, not the chapter's topic.
"""

import ast
import re

import nbformat
import pytest

from grader import REPO

NOTEBOOKS = REPO / "notebooks"
NAMESPACES = ("jax.numpy", "jax.nn", "jax.scipy", "jax.random", "jax.tree_util", "jax.config")

# What the chapter assumes from earlier JAX chapters; 00_intro's "先要会什么" names each of them.
PREREQUISITES = {
    "jax.__version__",
    "jax.devices",
    "jax.config",
    "jax.grad",
    "jax.value_and_grad",
    "jax.jit",
    "jax.vmap",
    "jax.make_jaxpr",
    "jax.block_until_ready",
    "jax.numpy",
    "jax.random",
    "jax.tree_util",
    "jax.nn",
    "jax.scipy",
    "lax.cond",
    "lax.scan",
    "lax.fori_loop",
    "lax.while_loop",
}

# The JAX names each main-line notebook teaches, in reading order.
INTRODUCED = {
    "4.1_modes_linearize": {"jax.jvp", "jax.vjp"},
    "4.1b_linearize_costs": {"jax.linearize", "jax.linear_transpose", "lax.lgamma"},
    "4.2_jvp": {"jax.jacfwd", "lax.stop_gradient", "lax.map", "jax.pure_callback"},
    "4.3_vjp": {"jax.jacrev", "jax.core.Tracer"},
    "4.4_higher_order": {"jax.hessian"},
    "4.5_jacobians_hessians": set(),
    "4.5b_sparse_coloring": set(),
    "4.6_custom_vjp": {"jax.custom_vjp", "jax.test_util.check_grads"},
    "4.7_custom_jvp": {"jax.custom_jvp"},
    "4.8a_cond_scan": {
        "jax.checkpoint",
        "jax.checkpoint_policies.dots_saveable",
        "jax.ad_checkpoint.print_saved_residuals",
    },
    "4.8b_loops": {"lax.switch"},
    "4.9a_nondifferentiable": {"jax.pure_callback", "jax.ShapeDtypeStruct", "jax.dtypes.float0", "lax.top_k"},
    "4.9b_stop_gradient_patterns": set(),
    "4.9c_softmax_case_study": {"jax.softmax_custom_jvp"},
    "4.10a_when_custom_rules": set(),
    "4.10b_implicit_adjoint": set(),
    "4.10c_adjoint_stability": set(),
    "99_closing": set(),
}


def dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def normalize(name: str) -> str:
    name = name.replace("jax.lax.", "lax.", 1) if name.startswith("jax.lax.") else name
    for namespace in NAMESPACES:
        if name == namespace or name.startswith(namespace + "."):
            return namespace
    return name


def jax_names(source: str) -> set[str]:
    """The JAX names a code cell uses: the longest attribute chains from `jax` or `lax`, and from-imports."""
    from IPython.core.inputtransformer2 import TransformerManager  # chapter cells may use magics

    tree = ast.parse(TransformerManager().transform_cell(source))
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jax":
            modules = {("jax", "lax"), ("jax", "numpy")}  # a module imported is not a name used
            found |= {f"{node.module}.{a.name}" for a in node.names if (node.module, a.name) not in modules}
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            name = dotted(node)
            if name and name.split(".")[0] in ("jax", "lax") and name != "jax.lax":
                found.add(name)
    return {normalize(name) for name in found}


def cells(name: str, kind: str) -> list[str]:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == kind]


def used(name: str) -> set[str]:
    return set().union(*(jax_names(source) for source in cells(name, "code")))


def reading_order() -> list[str]:
    intro = "\n".join(cells("00_intro", "markdown"))
    table = intro[intro.index("## 🟢 必读：阅读顺序") :]
    return [n for n in re.findall(r"\]\(([^)#]+)\.ipynb\)", table.split("\n\n", 2)[-1].split("名字以 `A_`")[0])]


def test_the_lists_follow_the_reading_order():
    assert reading_order() == list(INTRODUCED), "INTRODUCED lists the main line in 00_intro's reading order"


def test_the_intro_states_every_prerequisite():
    intro = "\n".join(cells("00_intro", "markdown"))
    section = intro[intro.index("## 🟢 必读：先要会什么") : intro.index("## 🟢 必读：阅读顺序")]
    missing = [p for p in PREREQUISITES - {"jax.__version__"} if f"`{p}`" not in section]
    assert not missing, f"00_intro's 先要会什么 should name {missing}"
    assert used("00_intro") <= PREREQUISITES, f"00_intro uses {used('00_intro') - PREREQUISITES}"


@pytest.mark.parametrize("name", list(INTRODUCED))
def test_every_jax_name_is_taught_in_or_before_the_notebook(name):
    order = list(INTRODUCED)
    known = set(PREREQUISITES).union(*(INTRODUCED[n] for n in order[: order.index(name) + 1]))
    early = used(name) - known
    assert not early, f"{name} uses {sorted(early)} before any notebook teaches it (add it where it is taught)"


@pytest.mark.parametrize("name", [n for n, names in INTRODUCED.items() if names])
def test_a_notebook_names_and_uses_what_it_introduces(name):
    prose = "\n".join(cells(name, "markdown")).lower()
    unnamed = [n for n in INTRODUCED[name] if n.split(".")[-1].lower() not in prose]
    assert not unnamed, f"{name} introduces {unnamed} but its prose never names them"
    unused = INTRODUCED[name] - used(name)
    assert not unused, f"{name} introduces {sorted(unused)} but its code does not use them"


def test_the_extractor_finds_chains_imports_and_namespaces():
    source = (
        "from jax.test_util import check_grads\nimport jax\n"
        "y = jax.lax.stop_gradient(jax.random.normal(k))\nz = lax.cond(p, f, g)"
    )
    assert jax_names(source) == {"jax.test_util.check_grads", "lax.stop_gradient", "jax.random", "lax.cond"}
