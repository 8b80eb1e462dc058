"""Correct: computes the loss and its gradient inside a jax.enable_x64 context in float64, returns float32."""


def grad_through_stop(x, w):
    with jax.enable_x64(True):
        x64 = lax.stop_gradient(jnp.asarray(x, jnp.float64))
        g = jax.grad(lambda w_: jnp.sum((x64 * w_) ** 2))(jnp.asarray(w, jnp.float64))
    return g.astype(jnp.float32)
