"""Violates: neither function is a jax.custom_vjp (values and gradients come from plain autodiff)."""


def sin2_save(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s) + 0.0 * jnp.sum(c)


def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)
