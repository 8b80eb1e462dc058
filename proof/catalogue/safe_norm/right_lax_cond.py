"""Correct: defjvp whose rule branches with lax.cond on ||x|| > 0."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(jnp.square(x)))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    n = safe_norm(x)
    tangent_out = jax.lax.cond(n > 0, lambda: jnp.sum(x * t) / n, lambda: jnp.zeros((), t.dtype))
    return n, tangent_out
