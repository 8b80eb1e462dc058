"""Method: jax.custom_vjp whose bwd hands the adjoint system to lax.custom_linear_solve, matrix-free: the matvec is u ↦ u - (∂T/∂V)ᵀu by jax.vjp, the solver the iteration u ← g + (∂T/∂V)ᵀu in a while_loop."""


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _until_still(step, x0):
    """x ← step(x) 直到相邻两次之差不超过 1e-7·max(1, max|x|)，最多 20 000 次。"""

    def keep_going(state):
        x, x_prev, k = state
        return (jnp.max(jnp.abs(x - x_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(x)))) & (k < 20_000)

    return lax.while_loop(keep_going, lambda s: (step(s[0]), s[0], s[2] + 1), (step(x0), x0, 1))[0]


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _until_still(lambda V: _bellman(V, R, P, gamma), jnp.zeros(R.shape[0], R.dtype))


def _fwd(R, P, gamma):
    V = soft_values(R, P, gamma)
    return V, (V, R, P, gamma)


def _bwd(res, g):
    V, R, P, gamma = res
    pull_V = jax.vjp(lambda W: _bellman(W, R, P, gamma), V)[1]  # u ↦ (∂T/∂V)ᵀ u

    def matvec(u):
        return u - pull_V(u)[0]

    def richardson(matvec, b):  # u ← u + (b - matvec(u)) 即 u ← b + (∂T/∂V)ᵀ u
        return _until_still(lambda u: u + b - matvec(u), b)

    v = lax.custom_linear_solve(matvec, g, richardson)
    return jax.vjp(lambda R, P, gamma: _bellman(V, R, P, gamma), R, P, gamma)[1](v)


soft_values.defvjp(_fwd, _bwd)
