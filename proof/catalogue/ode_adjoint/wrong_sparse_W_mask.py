"""Wrong: the adjoint backward pass keeps W's sparsity pattern (W̄ = 0 wherever W = 0, "pruned weights get no gradient"), which is not the VJP: ∂L/∂W_ij is nonzero for a zero W_ij. Every test draws a dense W (normal entries or a rotation QBQᵀ), so the mask never bites."""

N_STEPS = 100
T_END = 1.0


def rk4(field, y, h):
    k1 = field(y)
    k2 = field(y + 0.5 * h * k1)
    k3 = field(y + 0.5 * h * k2)
    k4 = field(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda i, z: rk4(lambda v: jnp.tanh(W @ v), z, h), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def bwd(res, g):
    zT, W = res
    d = zT.shape[0]
    h = T_END / N_STEPS

    def backward_field(y):  # y = [z, a, vec(W_bar)], time running from T down to 0
        z, a = y[:d], y[d : 2 * d]
        u = W @ z
        s = a * (1.0 - jnp.tanh(u) ** 2)  # a^T diag(sech^2(Wz))
        return jnp.concatenate([-jnp.tanh(u), W.T @ s, jnp.outer(s, z).ravel()])

    y = jnp.concatenate([zT, g, jnp.zeros(d * d, zT.dtype)])
    y = jax.lax.fori_loop(0, N_STEPS, lambda i, y: rk4(backward_field, y, h), y)
    return y[d : 2 * d], jnp.where(W != 0, y[2 * d :].reshape(d, d), 0.0)  # pruned weights stay pruned


odeint_adjoint.defvjp(fwd, bwd)
