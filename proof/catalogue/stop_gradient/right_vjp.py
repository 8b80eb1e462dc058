"""Correct: jax.vjp of the stopped loss with respect to w, pulled back with cotangent 1."""


def grad_through_stop(x, w):
    loss, pullback = jax.vjp(lambda w_: jnp.sum((lax.stop_gradient(x) * w_) ** 2), w)
    (dw,) = pullback(jnp.ones_like(loss))
    return dw
