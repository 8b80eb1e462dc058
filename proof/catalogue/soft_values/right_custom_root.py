"""Method: lax.custom_root on F(V) = V - T(V) with value iteration as the solver and a dense tangent_solve (jax.jacfwd of the linear map, then jnp.linalg.solve), transposed by the library in reverse mode."""


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _value_iteration(F, V0):
    def keep_going(state):
        V, V_prev, step = state
        return (jnp.max(jnp.abs(V - V_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(V)))) & (step < 10_000)

    def advance(state):
        V, _, step = state
        return V - F(V), V, step + 1  # V - F(V) = T(V)

    return lax.while_loop(keep_going, advance, (V0 - F(V0), V0, 1))[0]


def _dense_tangent_solve(linear, y):
    return jnp.linalg.solve(jax.jacfwd(linear)(y), y)  # linear 是 (I - ∂T/∂V)·


def soft_values(R, P, gamma):
    F = lambda V: V - _bellman(V, R, P, gamma)  # noqa: E731
    return lax.custom_root(F, jnp.zeros(R.shape[0], R.dtype), _value_iteration, _dense_tangent_solve)
