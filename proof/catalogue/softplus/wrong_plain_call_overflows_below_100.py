"""Violates: a finite softplus on all of [-1000, 1000] when called plainly: the forward rule is stable, but the body, what a plain call runs, switches to x only above 100 (float64's habit) and returns inf for 88.7 < x < 100."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.where(x > 100.0, x, jnp.log1p(jnp.exp(x)))


def _fwd(x):
    return jnp.logaddexp(x, 0.0), x


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
