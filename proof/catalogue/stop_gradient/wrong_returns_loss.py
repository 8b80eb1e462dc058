"""Violates: must return dL/dw, not the loss L itself."""


def grad_through_stop(x, w):
    return jnp.sum((lax.stop_gradient(x) * w) ** 2)
