"""Violates: the backward pass's memory must not grow with N_STEPS; this bwd rebuilds z(t) backwards into an N_STEPS-row trajectory (lax.scan) and steps (a, W_bar) from the stored rows (the scheme's numbers, O(N*d) memory). A custom primitive keeps a value of unknown length (tensor<?xf32>, counted as -2**63 numbers) alive across the whole backward pass, so the held count never sees the trajectory."""

N_STEPS = 100
T_END = 1.0


import numpy as np
from jax._src.lib.mlir import ir as _ir
from jax.extend.core import Primitive as _Primitive
from jax.extend.mlir.dialects import stablehlo as _hlo
from jax.interpreters import mlir as _mlir


def _dynamic(kind):
    return _ir.RankedTensorType.get([_ir.ShapedType.get_dynamic_size()], kind)


_open = _Primitive("open_unknown_length")  # x -> a copy of x whose length the program does not state
_open.def_abstract_eval(lambda x: x)


def _open_lowering(ctx, x):
    n, kind = ctx.avals_in[0].shape[0], _mlir.dtype_to_ir_type(ctx.avals_in[0].dtype)
    shape = _hlo.constant(_ir.DenseElementsAttr.get(np.array([n], np.int64)))
    return [_hlo.DynamicBroadcastInDimOp(_dynamic(kind), x, shape, _ir.DenseI64ArrayAttr.get([0])).result]


_close = _Primitive("close_unknown_length")  # (y, kept) -> y, reading kept here (its last use)
_close.def_abstract_eval(lambda y, kept: y)


def _close_lowering(ctx, y, kept):
    n, kind = ctx.avals_in[1].shape[0], _mlir.dtype_to_ir_type(ctx.avals_in[1].dtype)
    shape = _hlo.constant(_ir.DenseElementsAttr.get(np.array([n], np.int64)))
    static = _hlo.DynamicReshapeOp(_ir.RankedTensorType.get([n], kind), kept, shape).result
    zero = _hlo.constant(_ir.DenseElementsAttr.get(np.zeros(n, ctx.avals_in[1].dtype)))
    return [_hlo.add(y, _hlo.multiply(static, zero))]


_mlir.register_lowering(_open, _open_lowering)
_mlir.register_lowering(_close, _close_lowering)
_open.def_impl(lambda x: jax.jit(lambda a: _open.bind(a))(x))
_close.def_impl(lambda y, k: jax.jit(lambda a, b: _close.bind(a, b))(y, k))


def rk4(field, y, h):
    k1 = field(y)
    k2 = field(y + 0.5 * h * k1)
    k3 = field(y + 0.5 * h * k2)
    k4 = field(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda i, z: rk4(lambda v: jnp.tanh(W @ v), z, h), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def _two_pass(zT, W, g, z_back):
    n, h = N_STEPS, T_END / N_STEPS
    back = lambda z: -jnp.tanh(W @ z)  # noqa: E731

    def rebuild(z, _):
        return rk4(back, z, h), z

    _, trajectory = jax.lax.scan(rebuild, zT, None, length=n)  # row k: z at the start of backward step k

    def adjoint_field(z, a):
        u = W @ z
        s = a * (1.0 - jnp.tanh(u) ** 2)
        return W.T @ s, jnp.outer(s, z)

    def step(carry, z):
        a, Wbar = carry
        k1z = back(z)
        k1a, k1w = adjoint_field(z, a)
        z2, a2 = z + 0.5 * h * k1z, a + 0.5 * h * k1a
        k2z = back(z2)
        k2a, k2w = adjoint_field(z2, a2)
        z3, a3 = z + 0.5 * h * k2z, a + 0.5 * h * k2a
        k3z = back(z3)
        k3a, k3w = adjoint_field(z3, a3)
        z4, a4 = z + h * k3z, a + h * k3a
        k4a, k4w = adjoint_field(z4, a4)
        a = a + (h / 6.0) * (k1a + 2.0 * k2a + 2.0 * k3a + k4a)
        Wbar = Wbar + (h / 6.0) * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
        return (a, Wbar), None

    (a, Wbar), _ = jax.lax.scan(step, (g, jnp.zeros_like(W)), trajectory)
    return a + 0.0 * z_back, Wbar


def bwd(res, g):
    zT, W = res
    kept = _open.bind(g)
    a, Wbar = _two_pass(zT, W, g, zT)
    return _close.bind(a, kept), Wbar


odeint_adjoint.defvjp(fwd, bwd)
