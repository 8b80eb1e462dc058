"""Correct: a home-made detach (custom_jvp identity with zero tangent) instead of lax.stop_gradient."""


@jax.custom_jvp
def detach(v):
    return v


@detach.defjvp
def _detach_jvp(primals, tangents):
    (v,) = primals
    return v, jnp.zeros_like(v)


def grad_through_stop(x, w):
    return jax.grad(lambda x_, w_: jnp.sum((detach(x_) * w_) ** 2), argnums=1)(x, w)
