"""Violates: the value: a correct rule whose forward value hides its input in the last digits (x·1e-3 added), so that a message quoting a wrong value would spell the hidden input."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0) + 1e-3 * x


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
