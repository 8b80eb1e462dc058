"""Violates: the value must be 2 w sum(x^2) for every w; the loss clips w to [-4, 4], so for |w| > 4 the returned derivative is 0 (visible and hidden w are at most 3 in size)."""


def grad_through_stop(x, w):
    def loss(w):
        return jnp.sum((lax.stop_gradient(x) * jnp.clip(w, -4.0, 4.0)) ** 2)

    return jax.grad(loss)(w)
