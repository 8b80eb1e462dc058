"""Method: jax.custom_vjp with Newton's method (soft policy iteration) in the forward while_loop and the backward pass written by hand: π, P_π, solve (I - γP_π)ᵀ v = g, then R̄ = vπ, P̄ = γ vπV*ᵀ, γ̄ = Σ vπ(PV*)."""


def _policy(V, R, P, gamma):
    Q = R + gamma * (P @ V)
    return jax.nn.logsumexp(Q, axis=1), jax.nn.softmax(Q, axis=1)


def _newton(R, P, gamma):
    S = R.shape[0]

    def keep_going(state):
        V, V_prev, k = state
        return (jnp.max(jnp.abs(V - V_prev)) > 1e-6 * jnp.maximum(1.0, jnp.max(jnp.abs(V)))) & (k < 100)

    def advance(state):
        V, _, k = state
        T, pi = _policy(V, R, P, gamma)
        P_pi = jnp.einsum("sa,sat->st", pi, P)
        return V - jnp.linalg.solve(jnp.eye(S) - gamma * P_pi, V - T), V, k + 1

    V0 = jnp.zeros(S, R.dtype)
    V = lax.while_loop(keep_going, advance, (advance((V0, V0, 0))[0], V0, 1))[0]
    return _policy(V, R, P, gamma)[0]  # 再迭代一步：落在 float32 的不动点上


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _newton(R, P, gamma)


def _fwd(R, P, gamma):
    V = _newton(R, P, gamma)
    return V, (V, R, P, gamma)


def _bwd(res, g):
    V, R, P, gamma = res
    _, pi = _policy(V, R, P, gamma)
    P_pi = jnp.einsum("sa,sat->st", pi, P)
    v = jnp.linalg.solve((jnp.eye(V.size) - gamma * P_pi).T, g)
    weights = v[:, None] * pi
    return weights, gamma * weights[:, :, None] * V, jnp.sum(weights * (P @ V))


soft_values.defvjp(_fwd, _bwd)
