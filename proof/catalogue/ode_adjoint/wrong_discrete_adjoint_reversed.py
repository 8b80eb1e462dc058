"""Violates: the statement's backward scheme (RK4 on the augmented state): a discrete adjoint, z rebuilt by one backward RK4 step (h -> -h) and the cotangent pulled through jax.vjp of the forward RK4 step at the rebuilt z; memory constant, but its VJP is the unrolled solver's, not the continuous adjoint's."""

N_STEPS = 100
T_END = 1.0


def f(z, W):
    return jnp.tanh(W @ z)


def _rk4_step(z, W, h):
    k1 = f(z, W)
    k2 = f(z + h / 2 * k1, W)
    k3 = f(z + h / 2 * k2, W)
    k4 = f(z + h * k3, W)
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda _, z: _rk4_step(z, W, h), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def _bwd(res, g):
    zT, W = res
    h = T_END / N_STEPS

    def back(_, carry):
        z, a, W_bar = carry
        z_prev = _rk4_step(z, W, -h)
        _, vjp_fn = jax.vjp(lambda z, W: _rk4_step(z, W, h), z_prev, W)
        a, dW = vjp_fn(a)
        return z_prev, a, W_bar + dW

    _, a, W_bar = jax.lax.fori_loop(0, N_STEPS, back, (zT, g, jnp.zeros_like(W)))
    return a, W_bar


odeint_adjoint.defvjp(_fwd, _bwd)
