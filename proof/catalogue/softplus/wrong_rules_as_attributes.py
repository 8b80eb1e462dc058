"""Violates: a stable value: plain autodiff of the naive formula, with correct rules hung on it as attributes (fwd, bwd) that no call uses."""


def softplus_prod(x):
    return jnp.log1p(jnp.exp(x))


def _fwd(x):
    return jnp.logaddexp(x, 0.0), x


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.fwd, softplus_prod.bwd = _fwd, _bwd
