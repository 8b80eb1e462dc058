"""Violates: sin2_save must keep sin x and cos x as residuals, but it keeps only x (recomputes like sin2_recompute)."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_save.defvjp(lambda x: (jnp.sum(jnp.sin(x) ** 2), x), lambda x, g: (g * jnp.sin(2.0 * x),))


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_recompute.defvjp(lambda x: (jnp.sum(jnp.sin(x) ** 2), x), lambda x, g: (g * jnp.sin(2.0 * x),))
