"""Violates: the backward pass integrates the adjoint ODE; this bwd re-runs the RK4 solve from the saved inputs and differentiates it (checkpointing: it holds every step)."""
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


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    return odeint_unrolled(z0, W), (z0, W)


def _bwd(res, g):
    z0, W = res
    return jax.vjp(odeint_unrolled, z0, W)[1](g)


odeint_adjoint.defvjp(_fwd, _bwd)
