"""Violates: the adjoint keeps no trajectory; fwd saves N_STEPS - 1 states besides z0 and bwd backpropagates step by step through them."""
N_STEPS = 100
T_END = 1.0


def _step(z, W):
    h = T_END / N_STEPS
    f = lambda y: jnp.tanh(W @ y)
    k1 = f(z)
    k2 = f(z + h / 2 * k1)
    k3 = f(z + h / 2 * k2)
    k4 = f(z + h * k3)
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint_unrolled(z0, W):
    return jax.lax.fori_loop(0, N_STEPS, lambda i, z: _step(z, W), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    def body(z, _):
        new = _step(z, W)
        return new, z
    zT, zs = jax.lax.scan(body, z0, None, length=N_STEPS)
    return zT, (zs[1:], z0, W)   # N-1 states besides z0


def _bwd(res, g):
    zs, z0, W = res
    starts = jnp.concatenate([z0[None], zs])

    def back(carry, z):
        a, Wb = carry
        _, pull = jax.vjp(_step, z, W)
        da, dW = pull(a)
        return (da, Wb + dW), None
    (a0, Wb), _ = jax.lax.scan(back, (g, jnp.zeros_like(W)), starts[::-1])
    return a0, Wb


odeint_adjoint.defvjp(_fwd, _bwd)
