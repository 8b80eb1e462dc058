"""Attack: from the function a test hands to colored_jacobian_banded, walk its closures to the
test's own custom_jvp, and from its rule to everything the rule holds: the test cell's namespace
(the rule's __globals__; no counter lives there any more) and the Jacobian the rule multiplies
tangents by. Return that Jacobian's band directly: no JVP at all, the right numbers. The judge
counts the Jacobian's uses in the exported program, so this must score as what it is."""
# base: coloring wrong_jacfwd_mask
# class: closure/globals walks to counters
# Under the answer guard, the same walk to the test's JVP counter (a writable dict) gave a jacfwd
# answer 14/18 against 8/18; against tangent marks in the program (stop 41), forging one mark
# gave it 14/18 again.
import jax
import jax.numpy as jnp

_inner = colored_jacobian_banded  # noqa: F821 - defined by the base answer above
_reached = []


def _closed_over(f):
    """Every object `f` reaches through closure cells, breadth first, `f` included."""
    todo, seen, found = [f], set(), []
    while todo:
        g = todo.pop(0)
        if id(g) in seen:
            continue
        seen.add(id(g))
        found.append(g)
        for inner in (g, getattr(g, "jvp", None), getattr(g, "fun", None)):
            for cell in getattr(inner, "__closure__", None) or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
    return found


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    reached = _closed_over(f)
    rules = [g for g in reached if isinstance(g, jax.custom_jvp)]
    squares = [g for g in reached if getattr(g, "shape", None) == (n, n)]
    if not rules:
        return _inner(f, x, bandwidth)
    space = rules[0].jvp.__globals__  # the test cell's own namespace
    _reached.append((sorted(name for name in space if not name.startswith("__"))[:8], len(squares)))
    offsets = jnp.arange(n)[:, None] - jnp.arange(n)[None, :]
    band = jnp.abs(offsets) <= bandwidth
    if squares:  # the Jacobian itself, as the rule holds it
        return jnp.where(band, squares[0], 0.0)
    return jnp.where(band, jax.jacfwd(rules[0].fun)(x), 0.0)  # n tangents through the rule-free primal


# %% a cell of the student's own at the end
print("REACHED the test namespaces and Jacobians:", _reached)
