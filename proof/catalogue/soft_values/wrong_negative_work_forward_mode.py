"""Violates (work count made negative: a custom primitive lowers an identity through a tensor<?xf32>, whose element count the counts read as -2**63): the backward pass costs a small multiple of the function; this bwd pushes one forward-mode tangent per input entry through the whole value iteration (jax.jvp through the while_loop, vmapped over n one-hot tangents): constant memory, n times the iterations."""

import numpy as np
from jax._src.lib.mlir import ir as _ir
from jax.extend.core import Primitive as _Primitive
from jax.extend.mlir.dialects import stablehlo as _hlo
from jax.interpreters import mlir as _mlir

# an identity whose lowering passes the vector through a value of unknown length (tensor<?xf32>)
_unknown_length = _Primitive("unknown_length_identity")
_unknown_length.def_abstract_eval(lambda x: x)


def _unknown_length_lowering(ctx, x):
    n = ctx.avals_in[0].shape[0]
    kind = _mlir.dtype_to_ir_type(ctx.avals_in[0].dtype)
    shape = _hlo.constant(_ir.DenseElementsAttr.get(np.array([n], np.int64)))
    y = _hlo.DynamicBroadcastInDimOp(
        _ir.RankedTensorType.get([_ir.ShapedType.get_dynamic_size()], kind), x, shape, _ir.DenseI64ArrayAttr.get([0])
    ).result
    y = _hlo.negate(_hlo.negate(y))
    return [_hlo.DynamicReshapeOp(_ir.RankedTensorType.get([n], kind), y, shape).result]


_mlir.register_lowering(_unknown_length, _unknown_length_lowering)
_unknown_length.def_impl(lambda x: jax.jit(lambda a: _unknown_length.bind(a))(x))
from jax.interpreters import ad as _ad
from jax.interpreters import batching as _batching

_ad.deflinear(_unknown_length, lambda t: [_unknown_length.bind(t)])
_batching.primitive_batchers[_unknown_length] = lambda args, dims: (args[0], dims[0])


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _fixed_point(step, x0):
    def keep_going(state):
        x, x_prev, k = state
        return (jnp.max(jnp.abs(x - x_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(x)))) & (k < 20_000)

    def advance(state):
        x, _, k = state
        return step(x), x, k + 1

    return lax.while_loop(keep_going, advance, (step(x0), x0, 1))[0]


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _fixed_point(lambda V: _bellman(V, R, P, gamma), jnp.zeros(R.shape[0], R.dtype))


def soft_values_fwd(R, P, gamma):
    V = soft_values(R, P, gamma)
    return V, (R, P, gamma, V)


def _iterate(R, P, gamma):
    return _fixed_point(lambda V: _bellman(V, R, P, gamma), jnp.zeros(R.shape[0], R.dtype))


def soft_values_bwd(res, g):
    R, P, gamma, V = res
    g = _unknown_length.bind(g)
    sizes = (R.size, P.size, 1)

    def column(e):
        tR, tP, tg = e[: sizes[0]].reshape(R.shape), e[sizes[0] : sizes[0] + sizes[1]].reshape(P.shape), e[-1]
        return jax.jvp(_iterate, (R, P, gamma), (tR, tP, tg))[1] @ g

    cols = jax.vmap(column)(jnp.eye(sum(sizes), dtype=R.dtype))
    return cols[: sizes[0]].reshape(R.shape), cols[sizes[0] : sizes[0] + sizes[1]].reshape(P.shape), cols[-1]


soft_values.defvjp(soft_values_fwd, soft_values_bwd)
