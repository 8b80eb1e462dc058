"""Violates: N_STEPS is read when the function is called; this adjoint is right but takes the step count as a default argument, fixed when the function was defined."""
N_STEPS = 100
T_END = 1.0


def _step(z, W, h):
    f = lambda y: jnp.tanh(W @ y)
    k1 = f(z)
    k2 = f(z + h / 2 * k1)
    k3 = f(z + h / 2 * k2)
    k4 = f(z + h * k3)
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _solve(z0, W, n=N_STEPS):
    return jax.lax.fori_loop(0, n, lambda i, z: _step(z, W, T_END / n), z0)


def odeint_unrolled(z0, W):
    return _solve(z0, W)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return _solve(z0, W)


def _fwd(z0, W):
    zT = _solve(z0, W)
    return zT, (zT, W)


def _bwd(res, g, n=N_STEPS):
    zT, W = res
    h = T_END / n

    def augmented(z, a, W_bar):
        f, pull = jax.vjp(lambda z, W: jnp.tanh(W @ z), z, W)
        da, dW = pull(a)
        return -f, da, dW

    def step(i, s):
        k1 = augmented(*s)
        k2 = augmented(*(x + h / 2 * k for x, k in zip(s, k1)))
        k3 = augmented(*(x + h / 2 * k for x, k in zip(s, k2)))
        k4 = augmented(*(x + h * k for x, k in zip(s, k3)))
        return tuple(x + h / 6 * (p + 2 * q + 2 * r + t) for x, p, q, r, t in zip(s, k1, k2, k3, k4))

    _, a0, W_bar = jax.lax.fori_loop(0, n, step, (zT, g, jnp.zeros_like(W)))
    return a0, W_bar


odeint_adjoint.defvjp(_fwd, _bwd)
