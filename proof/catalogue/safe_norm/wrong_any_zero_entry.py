"""Violates: the JVP must be x^T t / ||x|| at every nonzero x; this treats any x with a zero entry as the zero vector."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    nonzero = jnp.all(x != 0)  # meant as "x is not the zero vector"
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n, 1.0), 0.0)
    return n, jnp.dot(unit, t)
