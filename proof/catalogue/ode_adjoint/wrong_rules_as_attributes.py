"""Violates: odeint_adjoint is the adjoint when it is called; this one is plain autodiff through the unrolled solver (it keeps every step), with a correct adjoint's rules hung on it as attributes fwd and bwd that no call uses."""
N_STEPS = 100
T_END = 1.0


def _step(z, W, h):
    f = lambda y: jnp.tanh(W @ y)
    k1 = f(z)
    k2 = f(z + h / 2 * k1)
    k3 = f(z + h / 2 * k2)
    k4 = f(z + h * k3)
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint_unrolled(z0, W):
    return jax.lax.fori_loop(0, N_STEPS, lambda i, z: _step(z, W, T_END / N_STEPS), z0)


def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def _bwd(res, g):
    zT, W = res
    h = T_END / N_STEPS

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

    _, a0, W_bar = jax.lax.fori_loop(0, N_STEPS, step, (zT, g, jnp.zeros_like(W)))
    return a0, W_bar


odeint_adjoint.fwd, odeint_adjoint.bwd = _fwd, _bwd
