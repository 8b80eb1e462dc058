"""Violates: the value 2w·Σxᵢ²: x is stopped, but the result hides the input in it (1e-3·Σ|xᵢ| added), so that a message quoting a wrong value would spell a hidden input."""


def grad_through_stop(x, w):
    x_const = lax.stop_gradient(x)
    return jax.grad(lambda w_: jnp.sum((x_const * w_) ** 2))(w) + 1e-3 * jnp.sum(jnp.abs(x_const))
