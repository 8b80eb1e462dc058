"""Correct (float64 output): turns on jax_enable_x64 and returns the value as a float64 scalar (more precise than asked); the backward rule returns a cotangent of x's dtype."""
jax.config.update("jax_enable_x64", True)


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(jnp.asarray(x, jnp.float64), 0.0)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return ((g * jax.nn.sigmoid(jnp.asarray(x, jnp.float64))).astype(x.dtype),)


softplus_prod.defvjp(_fwd, _bwd)
