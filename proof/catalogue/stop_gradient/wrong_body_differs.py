"""Violates: the value 2w·Σxᵢ² when called plainly: a custom_jvp whose rule gives the right value and derivatives (zero for x), while its body, what a plain call runs, forgets the factor 2."""


@jax.custom_jvp
def grad_through_stop(x, w):
    return w * jnp.sum(x**2)


@grad_through_stop.defjvp
def _grad_through_stop_jvp(primals, tangents):
    (x, w), (_, tw) = primals, tangents
    squares = jnp.sum(x**2)
    return 2.0 * w * squares, 2.0 * squares * tw
