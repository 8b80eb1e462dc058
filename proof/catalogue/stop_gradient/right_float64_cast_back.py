"""Correct (float64 inside, float32 out): turns on jax_enable_x64, sums the squares in float64 for accuracy and returns a float32 scalar."""
jax.config.update("jax_enable_x64", True)


def grad_through_stop(x, w):
    x64 = lax.stop_gradient(jnp.asarray(x, jnp.float64))

    def loss(w):
        return jnp.sum((x64 * w) ** 2)

    return jax.grad(loss)(jnp.asarray(w, jnp.float64)).astype(jnp.float32)
