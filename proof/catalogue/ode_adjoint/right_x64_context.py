"""Correct: both functions compute in float64 inside jax.enable_x64(True) blocks, float32 in and out: odeint_unrolled integrates in float64 and JAX differentiates it; odeint_adjoint keeps z(T) and W in float64 as residuals and integrates the augmented state back in float64."""
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
def _adjoint(z0, W):
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


_adjoint.defvjp(_fwd, _bwd)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    with jax.enable_x64(True):
        return _forward(jnp.asarray(z0, jnp.float64), jnp.asarray(W, jnp.float64)).astype(jnp.float32)


def _fwd64(z0, W):
    with jax.enable_x64(True):
        W64 = jnp.asarray(W, jnp.float64)
        zT = _forward(jnp.asarray(z0, jnp.float64), W64)
    return zT.astype(jnp.float32), (zT, W64)


def _bwd64(res, g):
    with jax.enable_x64(True):
        a0, W_bar = _bwd(res, jnp.asarray(g, jnp.float64))
    return a0.astype(jnp.float32), W_bar.astype(jnp.float32)


odeint_adjoint.defvjp(_fwd64, _bwd64)


def odeint_unrolled(z0, W):
    with jax.enable_x64(True):
        zT = _forward(jnp.asarray(z0, jnp.float64), jnp.asarray(W, jnp.float64))
    return zT.astype(jnp.float32)
