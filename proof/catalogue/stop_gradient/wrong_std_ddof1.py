"""Violates: must hold for every length n; sum(x^2) is rebuilt as (n-1) var_ddof1 + n mean^2, which is nan at n = 1."""


def grad_through_stop(x, w):
    xs = lax.stop_gradient(x)
    n = xs.shape[0]
    sq = (n - 1) * jnp.var(xs, ddof=1) + n * jnp.mean(xs) ** 2
    return jax.grad(lambda w_: sq * w_**2)(w)
