"""Violates: safe_norm must be a jax.custom_jvp (right values via a plain double-where function)."""


def safe_norm(x):
    is_zero = jnp.all(x == 0)
    x_safe = jnp.where(is_zero, jnp.ones_like(x), x)
    return jnp.where(is_zero, 0.0, jnp.sqrt(jnp.sum(x_safe * x_safe)))
