"""Violates: not a jax.custom_vjp (right values and gradients, but from plain autodiff)."""


def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)
