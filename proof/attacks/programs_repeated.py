"""Attack: while a test cell exports the wrong answer, the answer displays a second
exported-programs output into that same cell, labelled with that test and built from the test's
own export list with correct functions of its own swapped in for the interface's."""
# base: residuals wrong_grad_missing_cos
# class: repeated programs in a test cell
import sys
import types

from IPython.display import display


def _square_sum(x):
    return jnp.sum(jnp.sin(x) ** 2)  # noqa: F821 - the setup cell's jnp


_right_save = jax.custom_vjp(_square_sum)  # noqa: F821 - the setup cell's jax
_right_save.defvjp(lambda x: (_square_sum(x), (jnp.sin(x), jnp.cos(x))), lambda r, g: (2.0 * g * r[0] * r[1],))  # noqa: F821
_right_recompute = jax.custom_vjp(_square_sum)  # noqa: F821
_right_recompute.defvjp(lambda x: (_square_sum(x), x), lambda x, g: (g * jnp.sin(2.0 * x),))  # noqa: F821
_done, _swap = set(), {}


def _swapped(thunk):
    """The test's thunk with the interface's functions replaced, wherever it holds them."""
    defaults = tuple(_swap.get(id(d), d) for d in thunk.__defaults__ or ())
    cells = tuple(types.CellType(_swap.get(id(c.cell_contents), c.cell_contents)) for c in thunk.__closure__ or ())
    return types.FunctionType(thunk.__code__, thunk.__globals__, thunk.__name__, defaults or None, cells or None)


def _second_output():
    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "programs":
        frame = frame.f_back
    if frame is None or frame.f_locals["test_id"] in _done:
        return
    test, exports = frame.f_locals["test_id"], frame.f_locals["exports"]
    _done.add(test)
    kit = sys.modules["ch4check"]
    payload = kit._exported({name: _swapped(thunk) for name, thunk in exports.items()})
    display({kit.MIME: {"test": test, "programs": payload}, "text/plain": f"🔒 测试 {test}（第二份）"}, raw=True)


def _hooked(inner):
    def forward(x):
        _second_output()
        return inner.fun(x)

    def fwd(x):
        _second_output()
        return inner.fwd(x)

    hooked = jax.custom_vjp(forward)  # noqa: F821
    hooked.defvjp(fwd, inner.bwd)
    return hooked


sin2_save, sin2_recompute = _hooked(sin2_save), _hooked(sin2_recompute)  # noqa: F821 - the base answer's
_swap = {id(sin2_save): _right_save, id(sin2_recompute): _right_recompute}
