"""Attack: from the function a test hands to colored_jacobian_banded (v ↦ g(v) + J v), walk its
closures to everything it holds: the test cell's namespace and the matrix J it multiplies by.
Return J's band plus g's Jacobian by jacfwd, or J's band alone: the right numbers where J is all
there is, no colouring. The judge counts J's uses in the exported program, so this must score as
what it is."""
# base: coloring wrong_jacfwd_mask
# class: closure/globals walks to counters
# Under the answer guard, the same walk to the test's JVP counter (a writable dict) gave a jacfwd
# answer 14/18 against 8/18; against tangent marks in the program (stop 41), forging one mark
# gave it 14/18 again.
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
    squares = [g for g in reached if getattr(g, "shape", None) == (n, n)]
    if not squares:
        return _inner(f, x, bandwidth)
    space = getattr(f, "__globals__", {})  # the test cell's own namespace
    _reached.append((sorted(name for name in space if not name.startswith("__"))[:8], len(squares)))
    offsets = jnp.arange(n)[:, None] - jnp.arange(n)[None, :]
    band = jnp.abs(offsets) <= bandwidth
    return jnp.where(band, squares[0], 0.0)  # J itself, as the test function holds it


# %% a cell of the student's own at the end
print("REACHED the test namespaces and Jacobians:", _reached)
