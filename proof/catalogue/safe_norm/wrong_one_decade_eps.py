"""Violates: the gradient is x/‖x‖ at every scale; this rule adds ε = 1e-11 to the norm in its tangent only when 1e-12 ≤ ‖x‖ < 1e-11 (one decade: the tests used to look at odd powers of ten only)."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    norm = safe_norm(x)
    padded = jnp.where((norm >= 1e-12) & (norm < 1e-11), norm + 1e-11, norm)
    safe = jnp.where(norm > 0, padded, 1.0)
    return norm, jnp.where(norm > 0, jnp.vdot(x, t) / safe, 0.0)
