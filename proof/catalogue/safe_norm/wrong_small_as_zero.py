"""Violates: the gradient and the JVP x/‖x‖ at every scale: the rule treats every vector with ‖x‖² ≤ 1e-12 as the zero vector (gradient 0), not only x = 0."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    big_enough = n * n > 1e-12  # "numerically zero"
    unit = jnp.where(big_enough, x / jnp.where(big_enough, n, 1.0), 0.0)
    return n, jnp.dot(unit, t)
