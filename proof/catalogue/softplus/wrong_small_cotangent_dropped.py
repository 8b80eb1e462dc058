"""Violates: the VJP must be g * sigma(x) for every cotangent; the backward rule returns 0 whenever |g| < 0.2."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return jnp.logaddexp(x, 0.0), x


def _bwd(x, g):
    return (jnp.where(jnp.abs(g) < 0.2, 0.0, g * jax.nn.sigmoid(x)),)


softplus_prod.defvjp(_fwd, _bwd)
