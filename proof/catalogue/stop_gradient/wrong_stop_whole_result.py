"""Violates: the result must stay differentiable in w; stop_gradient on the whole result also kills d/dw."""


def grad_through_stop(x, w):
    return lax.stop_gradient(jax.grad(lambda w_: jnp.sum((x * w_) ** 2))(w))
