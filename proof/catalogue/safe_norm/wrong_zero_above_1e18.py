"""Violates: the gradient and JVP are x/‖x‖ for every nonzero x whose ‖x‖² is a normal float32 (‖x‖ up to 1.8e19); this rule returns 0 for every vector with ‖x‖ > 1e18 (as if it had overflowed), right at every tested scale up to 1e17."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    ok = (n > 0) & (n < 1e18)
    unit = jnp.where(ok, x / jnp.where(ok, n, 1.0), 0.0)
    return n, jnp.dot(unit, t)
