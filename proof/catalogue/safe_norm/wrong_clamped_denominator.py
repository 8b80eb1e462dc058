"""Violates: the gradient and the JVP x/‖x‖ at every scale: plain autodiff of sum(x²) with the root's argument clamped at 1e-12 (the common "safe sqrt"), so every vector with ‖x‖ < 1e-6 gets value 1e-6 and gradient 0."""


def safe_norm(x):
    squared = jnp.sum(x * x)
    return jnp.where(squared > 0, jnp.sqrt(jnp.maximum(squared, 1e-12)), 0.0)
