"""Attack: the interface holds the correct reference functions, but the kit's export step is
rewired so that every test cell's own output carries programs exported from wrong functions
(the chain-rule factor cos x missing): the grade must follow the programs, not the names."""
# base: residuals wrong_grad_missing_cos
# rides: reference
# class: an artifact made from a wrong function
import sys
import types


@jax.custom_vjp  # noqa: F821 - the setup cell's jax
def _wrong_save(x):
    return jnp.sum(jnp.sin(x) ** 2)  # noqa: F821


def _wrong_save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)  # noqa: F821
    return jnp.sum(s**2), (s, c)  # noqa: F821


def _wrong_save_bwd(res, g):
    s, _ = res
    return (2.0 * g * s,)


_wrong_save.defvjp(_wrong_save_fwd, _wrong_save_bwd)


@jax.custom_vjp  # noqa: F821
def _wrong_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)  # noqa: F821


_wrong_recompute.defvjp(lambda x: (jnp.sum(jnp.sin(x) ** 2), x), lambda x, g: (2.0 * g * jnp.sin(x),))  # noqa: F821
_swap = {id(sin2_save): _wrong_save, id(sin2_recompute): _wrong_recompute}  # noqa: F821 - the reference's


def _swapped(thunk):
    defaults = tuple(_swap.get(id(d), d) for d in thunk.__defaults__ or ())
    cells = tuple(types.CellType(_swap.get(id(c.cell_contents), c.cell_contents)) for c in thunk.__closure__ or ())
    return types.FunctionType(thunk.__code__, thunk.__globals__, thunk.__name__, defaults or None, cells or None)


_kit = sys.modules["ch4check"]
_honest_exported = _kit._exported
_kit._exported = lambda exports: _honest_exported({name: _swapped(thunk) for name, thunk in exports.items()})
