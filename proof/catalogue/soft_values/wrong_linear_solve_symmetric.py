"""Violates: the backward pass solves the transposed system; lax.custom_linear_solve declared symmetric=True, so the library solves (I - ∂T/∂V) v = g with the same solver."""


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _iterate(R, P, gamma):
    def keep_going(state):
        V, V_prev, step = state
        return (jnp.max(jnp.abs(V - V_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(V)))) & (step < 10_000)

    def advance(state):
        V, _, step = state
        return _bellman(V, R, P, gamma), V, step + 1

    V0 = jnp.zeros(R.shape[0], R.dtype)
    return lax.while_loop(keep_going, advance, (_bellman(V0, R, P, gamma), V0, 1))[0]


def soft_values(R, P, gamma):
    def F(V):
        return V - _bellman(V, R, P, gamma)

    def dense_solve(matvec, b):
        return jnp.linalg.solve(jax.jacfwd(matvec)(b), b)

    def tangent_solve(linear, y):  # 图省事：声明对称，库就用同一个 solve 去解转置方程
        return lax.custom_linear_solve(linear, y, dense_solve, symmetric=True)

    return lax.custom_root(F, jnp.zeros(R.shape[0], R.dtype), lambda F, V0: _iterate(R, P, gamma), tangent_solve)
