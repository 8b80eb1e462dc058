"""Violates: gradient σ(x) on the whole interval: when softplus_prod itself is handed a differentiation tracer (jax.grad(softplus_prod)(x), jax.vmap(jax.grad(softplus_prod)), a scalar jax.vjp), its backward rule takes σ(x) = 1 for x > 9 (off by up to 1.2e-4 on 9 < x < 13.8); batched (vmap) or inside lax.map, where it is traced before differentiation, it uses σ(x) itself."""


def _make(sigma):
    @jax.custom_vjp
    def f(x):
        return jnp.logaddexp(x, 0.0)

    f.defvjp(lambda x: (jnp.logaddexp(x, 0.0), x), lambda x, g: (g * sigma(x),))
    return f


_right = _make(jax.nn.sigmoid)
_direct = _make(lambda x: jnp.where(x > 9.0, 1.0, jax.nn.sigmoid(x)))


def softplus_prod(x):
    differentiated = type(x).__name__ in ("JVPTracer", "LinearizeTracer")
    return _direct(x) if differentiated else _right(x)
