"""Violates: sin2_save keeps a single array (the product 2 sin x cos x, n elements) instead of sin x and cos x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), 2.0 * jnp.sin(x) * jnp.cos(x)


def _save_bwd(prod, g):
    return (g * prod,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_recompute.defvjp(lambda x: (jnp.sum(jnp.sin(x) ** 2), x), lambda x, g: (g * jnp.sin(2.0 * x),))
