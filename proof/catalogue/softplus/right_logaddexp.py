"""Correct: forward jnp.logaddexp(x, 0), residual x, backward g * jax.nn.sigmoid(x)."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
