"""Violates: the adjoint (no forward trajectory): the bwd re-runs the solve keeping a checkpoint every 8 steps in a fixed 16-row buffer, re-runs each segment into a fixed 8-row buffer and pulls the cotangent back through jax.vjp of each RK4 step (discrete backprop through the stored states; sizes fixed, so the memory is the same at 25 and 100 steps)."""

N_STEPS = 100
T_END = 1.0
_SEG = 8
_MAX_SEGS = 16


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
    return odeint_unrolled(z0, W), (z0, W)


def _bwd(res, g):
    z0, W = res
    n, h, d = N_STEPS, T_END / N_STEPS, z0.shape[0]
    n_segs = -(-n // _SEG)
    step = lambda _, z: _rk4_step(z, W, h)  # noqa: E731

    def checkpoint(j, carry):
        z, ck = carry
        return jax.lax.fori_loop(0, jnp.minimum(_SEG, n - j * _SEG), step, z), ck.at[j].set(z)

    _, ck = jax.lax.fori_loop(0, n_segs, checkpoint, (z0, jnp.zeros((_MAX_SEGS, d), z0.dtype)))

    def segment(jj, carry):
        j = n_segs - 1 - jj
        length = jnp.minimum(_SEG, n - j * _SEG)

        def record(i, c):
            z, seg = c
            return _rk4_step(z, W, h), seg.at[i].set(z)

        _, seg = jax.lax.fori_loop(0, length, record, (ck[j], jnp.zeros((_SEG, d), z0.dtype)))

        def back(i, c):
            a, W_bar = c
            _, vjp_fn = jax.vjp(lambda z, W: _rk4_step(z, W, h), seg[length - 1 - i], W)
            a, dW = vjp_fn(a)
            return a, W_bar + dW

        return jax.lax.fori_loop(0, length, back, carry)

    return jax.lax.fori_loop(0, n_segs, segment, (g, jnp.zeros_like(W)))


odeint_adjoint.defvjp(_fwd, _bwd)
