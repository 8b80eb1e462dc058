"""Correct (float64 inside): turns on jax_enable_x64, computes the norm and the JVP in float64 (no underflow at any float32 size) and casts back to float32."""
jax.config.update("jax_enable_x64", True)


def _norm64(x):
    x64 = jnp.asarray(x, jnp.float64)
    return jnp.sqrt(jnp.sum(x64 * x64))


@jax.custom_jvp
def safe_norm(x):
    return _norm64(x).astype(x.dtype)


@safe_norm.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = _norm64(x)
    ok = n > 0
    dot = jnp.vdot(jnp.asarray(x, jnp.float64), jnp.asarray(t, jnp.float64))
    tangent = jnp.where(ok, dot / jnp.where(ok, n, 1.0), 0.0)
    return n.astype(x.dtype), tangent.astype(x.dtype)
