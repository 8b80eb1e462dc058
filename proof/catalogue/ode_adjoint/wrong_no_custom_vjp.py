"""Violates: odeint_adjoint must be a custom_vjp (continuous adjoint); this just differentiates the unrolled solver."""

N_STEPS = 100
T_END = 1.0


def _field(z, W):
    return jnp.tanh(W @ z)


def _rk4_step(field, state, h):
    """One classical RK4 step for a state that is a tuple of arrays."""

    def shifted(k, c):
        return tuple(s + c * ks for s, ks in zip(state, k))

    k1 = field(state)
    k2 = field(shifted(k1, h / 2))
    k3 = field(shifted(k2, h / 2))
    k4 = field(shifted(k3, h))
    return tuple(s + h / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))


def _solve(z0, W):
    h = T_END / N_STEPS

    def step(state, _):
        return _rk4_step(lambda s: (_field(s[0], W),), state, h), None

    (zT,), _ = jax.lax.scan(step, (z0,), None, length=N_STEPS)
    return zT


def odeint_unrolled(z0, W):
    return _solve(z0, W)


def odeint_adjoint(z0, W):
    return _solve(z0, W)
