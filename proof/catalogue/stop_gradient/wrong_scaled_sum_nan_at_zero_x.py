"""Violates: the value must be 2 w sum(x^2) for every x; the answer scales by m = max|x| to avoid overflow (m^2 sum((x/m)^2), as in BLAS nrm2), which is 0/0 = nan when x is the zero vector (where the answer should be 0)."""


def grad_through_stop(x, w):
    xs = lax.stop_gradient(x)
    m = jnp.max(jnp.abs(xs))
    sq = m**2 * jnp.sum((xs / m) ** 2)
    return jax.grad(lambda w_: sq * w_**2)(w)
