"""Violates: bwd ignores the incoming cotangent g (returns sigma(x) instead of g * sigma(x))."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
