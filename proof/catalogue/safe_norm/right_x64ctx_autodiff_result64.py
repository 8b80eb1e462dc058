"""Correct (autodiff, double where): computes ‖x‖ in float64 inside jax.enable_x64(True) with the double-where trick (0 and zero gradient at x = 0) and returns the float64 scalar."""


def safe_norm(x):
    with jax.enable_x64(True):
        x64 = jnp.asarray(x, jnp.float64)
        n2 = jnp.sum(x64 * x64)
        ok = n2 > 0
        return jnp.where(ok, jnp.sqrt(jnp.where(ok, n2, 1.0)), 0.0)
