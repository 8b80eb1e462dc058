"""Violates: the residuals do not grow with the iterations; the forward rule runs 1200 steps with lax.scan and saves every iterate, and the bwd backpropagates through them step by step."""


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _fwd(R, P, gamma)[0]


def _fwd(R, P, gamma):
    def step(V, _):
        return _bellman(V, R, P, gamma), V  # 存下每一步的起点

    V, iterates = lax.scan(step, jnp.zeros(R.shape[0], R.dtype), None, length=1200)
    return V, (iterates, R, P, gamma)


def _bwd(res, g):
    iterates, R, P, gamma = res

    def back(carry, V):
        u, R_bar, P_bar, gamma_bar = carry
        dV, dR, dP, dgamma = jax.vjp(_bellman, V, R, P, gamma)[1](u)
        return (dV, R_bar + dR, P_bar + dP, gamma_bar + dgamma), None

    start = (g, jnp.zeros_like(R), jnp.zeros_like(P), jnp.zeros_like(gamma))
    (_, R_bar, P_bar, gamma_bar), _ = lax.scan(back, start, iterates, reverse=True)
    return R_bar, P_bar, gamma_bar


soft_values.defvjp(_fwd, _bwd)
