"""Violates: the VJP must be g·σ(x) for every cotangent g; the backward rule flushes cotangents with |g| < 1e-4 to 0, so e.g. g = 5e-5 at x = 0 gives 0 instead of 2.5e-5."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return jnp.logaddexp(x, 0.0), x


def _bwd(x, g):
    g = jnp.where(jnp.abs(g) < 1e-4, 0.0, g)  # 太小的余切当作 0
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
