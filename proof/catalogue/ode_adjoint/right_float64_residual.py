"""Method: x64 switched on; forward RK4 and the adjoint in float64, the float64 z(T) kept as the residual (only the returned value cast to float32)."""
jax.config.update("jax_enable_x64", True)

N_STEPS = 100
T_END = 1.0


def f(z, W):
    return jnp.tanh(W @ z)


def _rk4(F, y, h):
    add = lambda y, k, c: jax.tree.map(lambda u, v: u + c * v, y, k)  # noqa: E731
    k1 = F(y)
    k2 = F(add(y, k1, h / 2))
    k3 = F(add(y, k2, h / 2))
    k4 = F(add(y, k3, h))
    return jax.tree.map(lambda u, a, b, c, d: u + h / 6 * (a + 2 * b + 2 * c + d), y, k1, k2, k3, k4)


def _solve(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda _, z: _rk4(lambda z: f(z, W), z, h), z0)


def odeint_unrolled(z0, W):
    return _solve(z0, W)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return _solve(z0.astype(jnp.float64), W.astype(jnp.float64)).astype(z0.dtype)


def _fwd(z0, W):
    W64 = W.astype(jnp.float64)
    zT = _solve(z0.astype(jnp.float64), W64)
    return zT.astype(z0.dtype), (zT, W64)


def _bwd(res, g):
    zT, W = res

    def aug(y):
        z, a, _ = y
        fz, vjp_fn = jax.vjp(f, z, W)
        da, dW = vjp_fn(a)
        return -fz, da, dW

    h = T_END / N_STEPS
    y = jax.lax.fori_loop(0, N_STEPS, lambda _, y: _rk4(aug, y, h), (zT, g.astype(jnp.float64), jnp.zeros_like(W)))
    return y[1].astype(g.dtype), y[2].astype(g.dtype)


odeint_adjoint.defvjp(_fwd, _bwd)
