"""Violates: the value must be 2 w sum(x^2) for every w, 0 included; the loss is written as the squared norm of sg(x) w, whose derivative through the norm is 0/0 = nan at w = 0 (a weight initialised to zero)."""


def grad_through_stop(x, w):
    def loss(w):
        return jnp.linalg.norm(lax.stop_gradient(x) * w) ** 2

    return jax.grad(loss)(w)
