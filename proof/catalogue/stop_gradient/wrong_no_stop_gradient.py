"""Violates: x must be stop-gradiented: jax.grad without stop_gradient gives the same value but d(result)/dx != 0."""


def grad_through_stop(x, w):
    return jax.grad(lambda w_: jnp.sum((x * w_) ** 2))(w)
