"""Violates: the tangent rule must be linear in t; sign(t)*|t| has the right JVP values but cannot be transposed."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    nonzero = n > 0
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n, 1.0), 0.0)
    return n, jnp.dot(unit, jnp.sign(t) * jnp.abs(t))
