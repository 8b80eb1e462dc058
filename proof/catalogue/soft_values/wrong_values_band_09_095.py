"""Wrong (a gap, planted): for 0.9 < γ < 0.95 the returned V* stops at a relative step of 1e-4 (about 2e-3 of max|V*| short of the fixed point, ten times the tolerance); the residual the backward pass uses is the converged V*. No test checks V* in that band (visible γ = 0.5 and 0.99, hidden 0.3–0.9 and 0.95–0.99); the gradient tests there ignore the value."""


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _fixed_point(step, x0, tol=1e-7):
    def keep_going(state):
        x, x_prev, k = state
        return (jnp.max(jnp.abs(x - x_prev)) > tol * jnp.maximum(1.0, jnp.max(jnp.abs(x)))) & (k < 20_000)

    def advance(state):
        x, _, k = state
        return step(x), x, k + 1

    return lax.while_loop(keep_going, advance, (step(x0), x0, 1))[0]


def _solve(R, P, gamma, tol=1e-7):
    return _fixed_point(lambda V: _bellman(V, R, P, gamma), jnp.zeros(R.shape[0], R.dtype), tol)


@jax.custom_vjp
def soft_values(R, P, gamma):
    tol = jnp.where((gamma > 0.9) & (gamma < 0.95), 1e-4, 1e-7)
    return _solve(R, P, gamma, tol)


def soft_values_fwd(R, P, gamma):
    return soft_values(R, P, gamma), (R, P, gamma, _solve(R, P, gamma))


def soft_values_bwd(res, g):
    R, P, gamma, V = res
    _, pull = jax.vjp(_bellman, V, R, P, gamma)
    u = _fixed_point(lambda u: g + pull(u)[0], g)
    return pull(u)[1:]


soft_values.defvjp(soft_values_fwd, soft_values_bwd)
