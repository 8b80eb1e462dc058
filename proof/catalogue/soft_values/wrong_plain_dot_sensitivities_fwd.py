"""Violates (work under-counted: a custom primitive lowers the (n, S)·(S, S) sensitivity product to the old stablehlo.dot, whose work the count reads as its largest operand, n·S, not its n·S² multiply-adds): implicit differentiation; the FORWARD pass runs forward-mode sensitivities for every input entry alongside value iteration (D ← D·(γP_π)ᵀ + C each step, D the (n, S) Jacobian dV/dθ, C added in place by scatter), keeps dV*/dθ as the residual; the backward pass is one product with g. Its forward pass does ~23× value iteration's work at γ = 0.99 (bound 20×)."""

from jax._src import core as _core
from jax._src.lib.mlir import ir as _ir
from jax.extend.core import Primitive as _Primitive
from jax.extend.mlir.dialects import stablehlo as _hlo
from jax.interpreters import mlir as _mlir

# a matrix product lowered to stablehlo.dot (not dot_general)
_plain_dot = _Primitive("plain_dot")
_plain_dot.def_abstract_eval(lambda a, b: _core.ShapedArray((a.shape[0], b.shape[1]), a.dtype))


def _plain_dot_lowering(ctx, a, b):
    out = ctx.avals_out[0]
    kind = _ir.RankedTensorType.get(out.shape, _mlir.dtype_to_ir_type(out.dtype))
    return [_hlo.DotOp(kind, a, b).result]


_mlir.register_lowering(_plain_dot, _plain_dot_lowering)
_plain_dot.def_impl(lambda a, b: a @ b)



def _fixed_point_with_sensitivities(R, P, gamma):
    S, A = R.shape

    def step(V, D):
        PV = P @ V
        Q = R + gamma * PV
        pi = jax.nn.softmax(Q, axis=1)
        M = gamma * jnp.einsum("sa,sat->st", pi, P)  # ∂T/∂V
        D = _plain_dot.bind(D, M.T)
        s = jnp.arange(S)
        # the explicit part of each entry's tangent touches only its own state s: added in place
        D_R = D[: S * A].reshape(S, A, S).at[s, :, s].add(pi)
        D_P = D[S * A : -1].reshape(S, A, S, S).at[s, :, :, s].add(gamma * pi[:, :, None] * V[None, None, :])
        D_g = D[-1:] + jnp.sum(pi * PV, axis=1)[None, :]
        return jax.nn.logsumexp(Q, axis=1), jnp.concatenate([D_R.reshape(S * A, S), D_P.reshape(S * A * S, S), D_g])

    def keep_going(state):
        V, V_prev, D, k = state
        return (jnp.max(jnp.abs(V - V_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(V)))) & (k < 20_000)

    def advance(state):
        V, _, D, k = state
        V_new, D_new = step(V, D)
        return V_new, V, D_new, k + 1

    n = S * A + S * A * S + 1
    V0 = jnp.zeros(S, R.dtype)
    V1, D1 = step(V0, jnp.zeros((n, S), R.dtype))
    V, _, D, _ = lax.while_loop(keep_going, advance, (V1, V0, D1, 1))
    return V, D


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _fixed_point_with_sensitivities(R, P, gamma)[0]


def soft_values_fwd(R, P, gamma):
    V, D = _fixed_point_with_sensitivities(R, P, gamma)
    return V, (D, R.shape, P.shape)


def soft_values_bwd(res, g):
    D, shape_R, shape_P = res
    cols = D @ g
    nR = shape_R[0] * shape_R[1]
    return cols[:nR].reshape(shape_R), cols[nR:-1].reshape(shape_P), cols[-1]


soft_values.defvjp(soft_values_fwd, soft_values_bwd)
