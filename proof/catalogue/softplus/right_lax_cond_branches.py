"""Method: custom_vjp whose forward and backward rules pick the stable branch with lax.cond (only one branch runs for a scalar; a select under vmap): x + log1p(e^(−x)) for x > 0, log1p(e^x) otherwise; σ(x) as 1/(1 + e^(−x)) or e^x/(1 + e^x)."""


@jax.custom_vjp
def softplus_prod(x):
    return jax.lax.cond(x > 0, lambda v: v + jnp.log1p(jnp.exp(-v)), lambda v: jnp.log1p(jnp.exp(v)), x)


def _sigma(x):
    return jax.lax.cond(x > 0, lambda v: 1.0 / (1.0 + jnp.exp(-v)), lambda v: jnp.exp(v) / (1.0 + jnp.exp(v)), x)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (g * _sigma(x),)


softplus_prod.defvjp(_fwd, _bwd)
