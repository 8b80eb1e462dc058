"""Violates: forward to rtol 1e-6: log(1 + exp(-|x|)) rounds to 0 for very negative x (log1p needed)."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.maximum(x, 0.0) + jnp.log(1.0 + jnp.exp(-jnp.abs(x)))


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
