"""Violates: the JVP must be x^T t / ||x||; this rule divides by ||x||^2."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    sq = n * n
    nonzero = sq > 0
    return n, jnp.where(nonzero, jnp.dot(x, t) / jnp.where(nonzero, sq, 1.0), 0.0)
