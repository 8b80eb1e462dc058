"""Violates: must return the derivative with respect to w; this returns the (zero) gradient with respect to x."""


def grad_through_stop(x, w):
    return jax.grad(lambda x_, w_: jnp.sum((lax.stop_gradient(x_) * w_) ** 2), argnums=0)(x, w)
