"""Violates: d(result)/dx = 0 at every length: x is stopped except at length 2, which the fixed single-length inputs skip (1, 3, 4); the tests export lengths 1 to 8 in one program."""


def grad_through_stop(x, w):
    stopped = x if x.shape[0] == 2 else lax.stop_gradient(x)
    return jax.grad(lambda w_: jnp.sum((stopped * w_) ** 2))(w)
