"""Correct: odeint_unrolled integrates in float64 inside a jax.enable_x64(True) context (scan RK4) and returns float32; reverse mode by JAX. odeint_adjoint is the usual float32 continuous adjoint."""
N_STEPS = 100
T_END = 1.0


def _field(z, W):
    return jnp.tanh(W @ z)


def _rk4(field, state, h):
    def moved(k, c):
        return tuple(s + c * ks for s, ks in zip(state, k))

    k1 = field(state)
    k2 = field(moved(k1, h / 2))
    k3 = field(moved(k2, h / 2))
    k4 = field(moved(k3, h))
    return tuple(s + h / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))


def _forward(z0, W):
    h = T_END / N_STEPS
    (zT,), _ = jax.lax.scan(lambda s, _: (_rk4(lambda y: (_field(y[0], W),), s, h), None), (z0,), None, length=N_STEPS)
    return zT


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return _forward(z0, W)


def _fwd(z0, W):
    zT = _forward(z0, W)
    return zT, (zT, W)


def _bwd(res, g):
    zT, W = res
    h = T_END / N_STEPS

    def augmented(state):
        z, a, _ = state
        f, pullback = jax.vjp(_field, z, W)
        return (-f, *pullback(a))

    (_, a0, W_bar), _ = jax.lax.scan(lambda s, _: (_rk4(augmented, s, h), None), (zT, g, jnp.zeros_like(W)), None, length=N_STEPS)
    return a0, W_bar


odeint_adjoint.defvjp(_fwd, _bwd)


def odeint_unrolled(z0, W):
    with jax.enable_x64(True):
        zT = _forward(jnp.asarray(z0, jnp.float64), jnp.asarray(W, jnp.float64))
    return zT.astype(jnp.float32)
