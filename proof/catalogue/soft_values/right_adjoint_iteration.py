"""Method: jax.custom_vjp whose bwd solves the adjoint fixed point u = g + (∂T/∂V)ᵀu by its own lax.while_loop (A_4.6's way), then pulls u back through T."""


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


def soft_values_bwd(res, g):
    R, P, gamma, V = res
    _, pull = jax.vjp(_bellman, V, R, P, gamma)  # 在解处线性化一次
    u = _fixed_point(lambda u: g + pull(u)[0], g)  # 伴随不动点 u = g + (∂T/∂V)ᵀ u
    return pull(u)[1:]


soft_values.defvjp(soft_values_fwd, soft_values_bwd)
