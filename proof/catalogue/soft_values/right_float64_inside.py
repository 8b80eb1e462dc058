"""Method: x64 switched on; value iteration and the adjoint solve run in float64 inside a custom_vjp (inputs cast up, results cast back to float32), the bwd a dense solve of (I - γP_π)ᵀ v = g."""
jax.config.update("jax_enable_x64", True)


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _solve64(R, P, gamma):
    R, P, gamma = (u.astype(jnp.float64) for u in (R, P, gamma))

    def keep_going(state):
        V, V_prev, k = state
        return (jnp.max(jnp.abs(V - V_prev)) > 1e-12 * jnp.maximum(1.0, jnp.max(jnp.abs(V_prev)))) & (k < 10_000)

    def advance(state):
        V, _, k = state
        return _bellman(V, R, P, gamma), V, k + 1

    V0 = jnp.zeros(R.shape[0], jnp.float64)
    return lax.while_loop(keep_going, advance, (_bellman(V0, R, P, gamma), V0, 1))[0]


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _solve64(R, P, gamma).astype(R.dtype)


def _fwd(R, P, gamma):
    V = _solve64(R, P, gamma)
    return V.astype(R.dtype), (V, R, P, gamma)


def _bwd(res, g):
    V, R, P, gamma = res
    R64, P64, gamma64 = (u.astype(jnp.float64) for u in (R, P, gamma))
    pi = jax.nn.softmax(R64 + gamma64 * (P64 @ V), axis=1)
    A = jnp.eye(V.shape[0], dtype=jnp.float64) - gamma64 * jnp.einsum("sa,sat->st", pi, P64)
    v = jnp.linalg.solve(A.T, g.astype(jnp.float64))
    _, vjp_theta = jax.vjp(lambda R, P, gamma: _bellman(V, R, P, gamma), R64, P64, gamma64)
    return tuple(d.astype(u.dtype) for d, u in zip(vjp_theta(v), (R, P, gamma)))


soft_values.defvjp(_fwd, _bwd)
