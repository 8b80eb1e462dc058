"""Violates: the value ‖x‖ without differentiation: the function body adds ε under the root (safe_norm(0) = 1e-6 when called plainly), while the tangent rule returns the exact norm, so values under differentiation are right."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x) + 1e-12)


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = jnp.sqrt(jnp.sum(x * x))
    nonzero = n > 0
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n, 1.0), 0.0)
    return n, jnp.dot(unit, t)
