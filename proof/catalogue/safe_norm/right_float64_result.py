"""Correct (float64 result, more precise than asked): turns on jax_enable_x64; custom_jvp whose primal and rule work on x in float64 and return a float64 norm and tangent (the tangent rule stays linear in t)."""
jax.config.update("jax_enable_x64", True)


@jax.custom_jvp
def safe_norm(x):
    x = jnp.asarray(x, jnp.float64)
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    ok = n > 0
    unit = jnp.where(ok, jnp.asarray(x, jnp.float64) / jnp.where(ok, n, 1.0), 0.0)
    return n, jnp.dot(unit, jnp.asarray(t, jnp.float64))
