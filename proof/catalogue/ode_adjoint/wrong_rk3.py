"""Violates: the solver must be classic RK4; this takes steps of Kutta's third-order rule (forward and backward)."""

N_STEPS = 100
T_END = 1.0


def _field(z, W):
    return jnp.tanh(W @ z)


def _rk4_step(field, state, h):
    """One step of Kutta's third-order rule (not RK4) for a state that is a tuple of arrays."""

    def combine(*pairs):
        return tuple(s + sum(c * k[i] for c, k in pairs) for i, s in enumerate(state))

    k1 = field(state)
    k2 = field(combine((h / 2, k1)))
    k3 = field(combine((-h, k1), (2 * h, k2)))
    return combine((h / 6, k1), (4 * h / 6, k2), (h / 6, k3))


def _solve(z0, W):
    h = T_END / N_STEPS

    def step(state, _):
        return _rk4_step(lambda s: (_field(s[0], W),), state, h), None

    (zT,), _ = jax.lax.scan(step, (z0,), None, length=N_STEPS)
    return zT


def odeint_unrolled(z0, W):
    return _solve(z0, W)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return _solve(z0, W)


def _adjoint_fwd(z0, W):
    zT = _solve(z0, W)
    return zT, (zT, W)  # only the end point: z is re-solved backwards in _adjoint_bwd


def _adjoint_bwd(res, g):
    zT, W = res
    h = T_END / N_STEPS

    def augmented(state):
        # Reversed time s = T - t: dz/ds = -f, da/ds = a^T df/dz, dW_bar/ds = a^T df/dW.
        z, a, _ = state
        f, pullback = jax.vjp(_field, z, W)
        a_dz, a_dW = pullback(a)
        return (-f, a_dz, a_dW)

    def step(state, _):
        return _rk4_step(augmented, state, h), None

    (_, a0, W_bar), _ = jax.lax.scan(step, (zT, g, jnp.zeros_like(W)), None, length=N_STEPS)
    return a0, W_bar


odeint_adjoint.defvjp(_adjoint_fwd, _adjoint_bwd)
