"""Violates: sin2_save's bwd uses the residuals it is given; this one ignores cos x except for its sign and rebuilds it from sin x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), (jnp.sin(x), jnp.cos(x))


def _save_bwd(res, g):
    s, c = res
    cos_again = jnp.sign(c) * jnp.sqrt(jnp.maximum(1.0 - s * s, 0.0))
    return (2.0 * g * s * cos_again,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
