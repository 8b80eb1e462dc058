"""Violates: computed with jax.grad through stop_gradient; the hand formula 2 w sum(x^2) has d(result)/dx = 4 w x."""


def grad_through_stop(x, w):
    return 2.0 * w * jnp.sum(x**2)
