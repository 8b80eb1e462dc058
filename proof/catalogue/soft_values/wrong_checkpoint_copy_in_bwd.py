"""Violates: the backward pass solves one linear system; this bwd differentiates a 1200-step scan copy from V* under jax.checkpoint (each step rematerialized, every carry still kept)."""


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


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _iterate(R, P, gamma)


def _fwd(R, P, gamma):
    V = _iterate(R, P, gamma)
    return V, (V, R, P, gamma)


def _bwd(res, g):
    V, R, P, gamma = res

    def copy(R, P, gamma):
        step = jax.checkpoint(lambda W, _: (_bellman(W, R, P, gamma), None))  # 每一步反向时重算
        return lax.scan(step, V, None, length=1200)[0]

    return jax.vjp(copy, R, P, gamma)[1](g)


soft_values.defvjp(_fwd, _bwd)
