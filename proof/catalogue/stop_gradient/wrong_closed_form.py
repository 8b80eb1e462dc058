"""Violates: the result must remember that x is stopped (d result/dx = 0); the hand formula 2 w sum(x^2) without stop_gradient has d(result)/dx = 4 w x."""


def grad_through_stop(x, w):
    return 2.0 * w * jnp.sum(x**2)
