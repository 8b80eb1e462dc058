"""Violates: d(result)/dx must be 0 everywhere; at w = 0 the answer adds sum(x) - sg(sum(x)) (value 0, x-derivative 1 per entry), so only at w = 0 is x not stopped."""


def grad_through_stop(x, w):
    g = jax.grad(lambda w_: jnp.sum((lax.stop_gradient(x) * w_) ** 2))(w)
    leak = jnp.sum(x) - lax.stop_gradient(jnp.sum(x))
    return g + jnp.where(w == 0, leak, 0.0)
