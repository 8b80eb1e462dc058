"""Copying the chapter earns no full marks: a chapter cell pasted unchanged into an answer cell
scores below the maximum on every exercise.

Candidates, per exercise, from every code cell of notebooks/*.ipynb:

* a cell that defines one of the exercise's interface names (`start_tests(interface=[...])`);
* a cell with a top-level function that is an obvious lookalike of an interface function: its
  name matches the exercise's rule in LOOKALIKES (rule functions named *_fwd, *_bwd, *_jvp or
  *_vjp are parts of a lookalike, not one). The lookalike is bound to the interface name.

The pasted answer is the reference answer, then `del` of the names the case binds, then the
chapter cell unchanged, then the binding (`softplus_prod = softplus_stable`). So the rest of
the interface is correct (a two-name exercise is not saved by the missing name alone), and a
cell that fails half-way leaves the bound name undefined instead of the reference's. Each case
is scored by the quick path (`answers.quick_score`, one kernel each), spread over the pytest
workers like the self-proof.
"""

import ast
import functools
import re
from pathlib import Path

import nbformat
import pytest

from grader import REPO, course
from proof import answers

NOTEBOOKS = REPO / "notebooks"
RULE_PARTS = re.compile(r"_(fwd|bwd|jvp|vjp)$")
# interface name -> the pattern (re.search on a chapter function's name) of its obvious lookalikes
LOOKALIKES = {
    "softplus": {"softplus_prod": r"softplus"},
    "residuals": {"sin2_save": r"sin2|sin_?sq", "sin2_recompute": r"sin2|sin_?sq"},
    "clip_global_norm": {"clip_grad_global_norm": r"clip"},
    "coloring": {"f_penta": r"penta", "colored_jacobian_banded": r"colou?r|band|compress"},
    "ode_adjoint": {
        "odeint_unrolled": r"odeint|rk4|euler|integrat|(^|_)ode(_|$)",
        "odeint_adjoint": r"odeint|adjoint|rk4|integrat|(^|_)ode(_|$)",
    },
    "safe_norm": {"safe_norm": r"norm|sqrt|root"},
    "soft_values": {"soft_values": r"soft_?val|bellman|value_?iter|soft_?q|(^|_)mdp(_|$)"},
    "stop_gradient": {"grad_through_stop": r"stop|detach|(^|_)sg(_|$)"},
}


@functools.cache
def top_level_names(source: str) -> tuple[set[str], list[str]]:
    """(every name a cell binds at top level, its top-level function names in order)."""
    from IPython.core.inputtransformer2 import TransformerManager  # chapter cells use magics

    try:
        tree = ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return set(), []
    bound, functions = set(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
            functions.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return bound, functions


class Case:
    def __init__(self, assignment, notebook: Path, index: int, source: str, binding: dict[str, str]):
        self.assignment, self.notebook, self.index, self.source, self.binding = (
            assignment,
            notebook,
            index,
            source,
            binding,
        )

    @property
    def where(self) -> str:
        first = self.source.strip().splitlines()[0][:80] if self.source.strip() else ""
        return f"{self.notebook.name} cell {self.index} ({first})"

    @property
    def answer(self) -> str:
        unbind = "".join(f"del {name}\n" for name in self.binding)
        bind = "".join(f"{name} = {found}\n" for name, found in self.binding.items() if name != found)
        return f"{answers.reference_answer(self.assignment)}\n\n{unbind}\n{self.source}\n\n{bind}"


interface = functools.cache(answers.interface)


def bindings(assignment: str, source: str) -> list[dict[str, str]]:
    """What pasting this cell can stand for: {interface name: the cell's name bound to it}, one each."""
    names, rules = interface(assignment), LOOKALIKES[assignment]
    bound, functions = top_level_names(source)
    defined = [n for n in names if n in bound]
    found = [{n: n for n in defined}] if defined else []
    for name, pattern in rules.items():
        if name not in bound:
            found += [
                {name: function}
                for function in functions
                if re.search(pattern, function, re.I) and not RULE_PARTS.search(function)
            ]
    return found


def cases() -> list[Case]:
    found = []
    chapter = [(path, nbformat.read(path, as_version=4).cells) for path in sorted(NOTEBOOKS.glob("*.ipynb"))]
    for assignment in course.ASSIGNMENTS:
        for notebook, cells in chapter:
            for index, cell in enumerate(cells):
                if cell.cell_type == "code":
                    for binding in bindings(assignment, cell.source):
                        found.append(Case(assignment, notebook, index, cell.source, binding))
    return found


CASES = cases()


def test_lookalike_rules_cover_every_exercise():
    assert set(LOOKALIKES) == set(course.ASSIGNMENTS)
    for assignment, rules in LOOKALIKES.items():
        functions = [n for n in interface(assignment) if not n.isupper()]
        assert set(rules) == set(functions), f"{assignment}: a lookalike rule for each interface function"


def test_the_rules_pick_lookalikes_and_skip_rule_parts():
    """The rules are not vacuous, whatever the chapter holds today (its notebooks change)."""
    stable = "@jax.custom_vjp\ndef softplus_stable(x):\n    return x\n\n\ndef softplus_stable_fwd(x):\n    return x, x"
    assert bindings("softplus", stable) == [{"softplus_prod": "softplus_stable"}]
    assert bindings("ode_adjoint", "N_STEPS = 50\ndef rk4_solve(z, W):\n    return z\n") == [
        {"N_STEPS": "N_STEPS"},
        {"odeint_unrolled": "rk4_solve"},
        {"odeint_adjoint": "rk4_solve"},
    ]
    assert bindings("stop_gradient", "def decode(x):\n    return x\n") == []


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.assignment}:{c.notebook.stem}#{c.index}:{'+'.join(c.binding.values())}" for c in CASES]
)
def test_chapter_cell_does_not_earn_full_marks(case):
    got = answers.quick_score(case.assignment, case.answer)
    assert got.points < got.max_points, (
        f"{case.assignment}: the chapter's {case.where}, pasted as the answer "
        f"({', '.join(f'{k} = {v}' for k, v in case.binding.items())}), scores full marks "
        f"{got.points}/{got.max_points}: the exercise must ask for more than the chapter shows"
    )
