"""Violates: the primal must be ||x|| exactly; the safe-x trick in the forward makes safe_norm(0) = sqrt(d)."""


@jax.custom_jvp
def safe_norm(x):
    x_safe = jnp.where(jnp.all(x == 0), jnp.ones_like(x), x)
    return jnp.sqrt(jnp.sum(x_safe * x_safe))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    nonzero = jnp.any(x != 0)
    unit = jnp.where(nonzero, x / n, 0.0)
    return n, jnp.dot(unit, t)
