"""Method: jax.custom_vjp whose bwd hands the adjoint system to lax.custom_linear_solve, matrix-free: the matvec is u ↦ u - (∂T/∂V)ᵀu by jax.vjp, the solver Richardson's iteration u ← u + (g - matvec(u)) in a while_loop, stopped on a residual above float32's rounding."""


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

    def richardson(matvec, b):
        """u ← u + r，r = b - matvec(u) 即 b + (∂T/∂V)ᵀu - u，直到 max|r| ≤ 4e-7·max(1, max|u|)。
        r 里 u 和 matvec(u) 相减，带着 float32 约 1e-7·|u| 的舍入误差：阈值要比它大几倍，否则永远停不下来。"""

        def keep_going(state):
            u, r, k = state
            return (jnp.max(jnp.abs(r)) > 4e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(u)))) & (k < 20_000)

        def step(state):
            u, r, k = state
            u = u + r
            return u, b - matvec(u), k + 1

        return lax.while_loop(keep_going, step, (b, b - matvec(b), 1))[0]

    v = lax.custom_linear_solve(matvec, g, richardson)
    return jax.vjp(lambda R, P, gamma: _bellman(V, R, P, gamma), R, P, gamma)[1](v)


soft_values.defvjp(_fwd, _bwd)
