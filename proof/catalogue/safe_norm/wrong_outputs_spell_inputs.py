"""Violates: the value ‖x‖: a correct rule whose value hides the input in its last digits (1e-3·x₀ added), so that a message quoting a wrong value would spell a hidden input."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x)) + 1e-3 * x[0]


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = jnp.sqrt(jnp.sum(x * x))
    nonzero = n > 0
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n, 1.0), 0.0)
    return safe_norm(x), jnp.dot(unit, t)
