"""Violates: the backward pass costs a small multiple of the function; this bwd takes a central difference per input entry with lax.map: constant memory, work 2(d² + d) times the solve."""
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
    d = z0.shape[0]
    eps = 1e-3

    def column(e):
        tz, tW = e[:d], e[d:].reshape(d, d)
        up = odeint_unrolled(z0 + eps * tz, W + eps * tW)
        down = odeint_unrolled(z0 - eps * tz, W - eps * tW)
        return (up - down) @ g / (2 * eps)

    cols = jax.lax.map(column, jnp.eye(d + d * d, dtype=z0.dtype))
    return cols[:d], cols[d:].reshape(d, d)


odeint_adjoint.defvjp(_fwd, _bwd)
