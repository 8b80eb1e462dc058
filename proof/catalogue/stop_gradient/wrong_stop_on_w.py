"""Violates: stop_gradient belongs on x; stopping w instead makes dL/dw zero."""


def grad_through_stop(x, w):
    return jax.grad(lambda x_, w_: jnp.sum((x_ * lax.stop_gradient(w_)) ** 2), argnums=1)(x, w)
