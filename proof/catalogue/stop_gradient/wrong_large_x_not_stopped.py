"""Violates: the derivative with respect to x must be exactly 0 everywhere; where max|x| > 5 the loss uses x itself instead of stop_gradient(x) (visible |x| are at most 3)."""


def grad_through_stop(x, w):
    big = jnp.max(jnp.abs(x)) > 5.0
    kept = jnp.where(big, x, lax.stop_gradient(x))

    def loss(w):
        return jnp.sum((kept * w) ** 2)

    return jax.grad(loss)(w)
