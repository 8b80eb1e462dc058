"""Violates: must be a jax.custom_jvp with a safe rule; plain jnp.linalg.norm gives nan gradients at 0."""


def safe_norm(x):
    return jnp.linalg.norm(x)
