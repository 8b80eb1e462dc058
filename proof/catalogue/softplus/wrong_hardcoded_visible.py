"""Violates: forward overflows for large x; only the visible test points 250 and 1000 are special-cased."""


@jax.custom_vjp
def softplus_prod(x):
    y = jnp.log1p(jnp.exp(x))
    y = jnp.where(x == 250.0, 250.0, y)
    return jnp.where(x == 1000.0, 1000.0, y)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
