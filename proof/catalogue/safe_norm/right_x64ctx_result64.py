"""Correct: custom_jvp computing everything in float64 inside jax.enable_x64(True) and returning float64 primal and tangent (tangent input cast up)."""


@jax.custom_jvp
def safe_norm(x):
    with jax.enable_x64(True):
        x64 = jnp.asarray(x, jnp.float64)
        return jnp.sqrt(jnp.sum(x64 * x64))


@safe_norm.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    with jax.enable_x64(True):
        x64 = jnp.asarray(x, jnp.float64)
        n = jnp.sqrt(jnp.sum(x64 * x64))
        ok = n > 0
        tangent = jnp.where(ok, jnp.vdot(x64, jnp.asarray(t, jnp.float64)) / jnp.where(ok, n, 1.0), 0.0)
        return n, tangent
